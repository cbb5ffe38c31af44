"""The one rule, on hand-made cases: every verdict reached at least once, a null with a wide
interval never a reproduction, an inverted claim contradicted, equivalence decided first."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag_lab.claims import CONFIRMATORY, EXPLORATORY, Claim, Direction, claim
from rag_lab.claims.judge import (
    CountRecord,
    FixedRecord,
    IntervalRecord,
    PairedRecord,
    ValueRecord,
    judge,
)
from rag_lab.claims.verdicts import Verdict
from rag_lab.stats import Difference, Paired, cluster_paired, paired_difference

BETTER, WORSE, SAME = Direction.BETTER, Direction.WORSE, Direction.SAME
MARGIN = 0.10


def made(direction: Direction, effect: float | None = None, family: str = CONFIRMATORY) -> Claim:
    """A claim as the file would declare it, made here so the rule is tested apart from it."""
    return Claim(
        id="a?b", statement="s", notebooks={"d2l": "03"}, direction=direction, metric="R@1",
        role="chapter", population="all questions", stand_in=None, family=family,
        chapter_effect=effect, margin=MARGIN if direction in (SAME, Direction.VALUE) else None,
    )  # fmt: skip


def diff(lo: float, hi: float, estimate: float | None = None, se: float = 0.05) -> Difference:
    centre = (lo + hi) / 2 if estimate is None else estimate
    return Difference(centre, lo, hi, se, 64, 32)


A_WINS, B_WINS, EVEN = Paired(12, 1, 19), Paired(1, 12, 19), Paired(3, 3, 26)


@pytest.mark.parametrize(
    ("direction", "d", "test", "p", "effect", "verdict"),
    [
        (BETTER, diff(0.05, 0.30), A_WINS, 0.003, 0.23, Verdict.REPRODUCES),
        (WORSE, diff(-0.30, -0.05), B_WINS, 0.003, -0.06, Verdict.REPRODUCES),
        # inverted: the data go the other way, significantly
        (BETTER, diff(-0.30, -0.05), B_WINS, 0.003, 0.23, Verdict.CONTRADICTED),
        (WORSE, diff(0.05, 0.30), A_WINS, 0.003, -0.06, Verdict.CONTRADICTED),
        # not significant, but the interval excludes the chapter's +0.156
        (BETTER, diff(-0.01, 0.08), EVEN, 0.6, 0.156, Verdict.EXCLUDES_CHAPTER_EFFECT),
        # not significant and the interval holds the chapter's effect: the design cannot tell
        (BETTER, diff(-0.05, 0.17), EVEN, 0.6, 0.06, Verdict.INCONCLUSIVE),
        (BETTER, diff(-0.05, 0.17), EVEN, 0.6, None, Verdict.INCONCLUSIVE),
        # a "no difference" claim: a null with a wide interval is never a reproduction
        (SAME, diff(-0.05, 0.17), EVEN, 0.6, 0.06, Verdict.INCONCLUSIVE),
        (SAME, diff(-0.04, 0.06), EVEN, 0.9, 0.03, Verdict.REPRODUCES),
        (SAME, diff(0.05, 0.30), A_WINS, 0.003, 0.03, Verdict.CONTRADICTED),
    ],
)
def test_the_rule_for_a_paired_claim(direction, d, test, p, effect, verdict):
    j = judge(made(direction, effect), PairedRecord(d, test, p))
    assert j.verdict is verdict
    assert (j.margin == MARGIN) == (direction is SAME)
    assert (j.detectable is not None) == (verdict is Verdict.INCONCLUSIVE and direction is not SAME)


def test_an_inconclusive_claim_says_what_the_design_could_detect():
    d = diff(-0.05, 0.17, se=0.056)
    j = judge(made(BETTER), PairedRecord(d, EVEN, 0.6, family_size=5))
    # t with 33 df: (t(1 - 0.01/2) + t(0.8)) · se = (2.73 + 0.85) · 0.056
    assert j.detectable == pytest.approx(d.detectable(0.05 / 5), rel=1e-12)
    assert 0.19 < j.detectable < 0.21
    # an exploratory claim is not adjusted: its detectable effect is at α itself
    j = judge(made(BETTER, family=EXPLORATORY), PairedRecord(d, EVEN, None, family_size=5))
    assert j.detectable == pytest.approx(d.detectable(0.05), rel=1e-12)


@pytest.mark.parametrize(
    ("interval", "verdict"),
    [
        ((0.25, 0.42), Verdict.REPRODUCES),  # within ±0.10 of a third
        ((0.45, 0.75), Verdict.EXCLUDES_CHAPTER_EFFECT),
        ((0.23, 0.58), Verdict.INCONCLUSIVE),
    ],
)
def test_the_rule_for_a_value(interval, verdict):
    j = judge(made(Direction.VALUE, 1 / 3), ValueRecord(0.4, interval, "wilson"))
    assert (j.verdict, j.margin) == (verdict, MARGIN)


def test_counts_and_fixed_verdicts():
    count = made(Direction.COUNT)
    assert judge(count, CountRecord(True)).verdict is Verdict.REPRODUCES
    assert judge(count, CountRecord(False)).verdict is Verdict.CONTRADICTED
    assert judge(count, FixedRecord(Verdict.BY_CONSTRUCTION, "why")).verdict is (
        Verdict.BY_CONSTRUCTION
    )
    broken = FixedRecord(Verdict.BY_CONSTRUCTION, "why", holds=False)
    assert judge(count, broken).verdict is Verdict.CONTRADICTED
    for v in (Verdict.NOT_TESTABLE, Verdict.NOT_MEASURED):
        assert judge(count, FixedRecord(v, "why")).verdict is v
    with pytest.raises(ValueError, match="decided by numbers"):
        judge(count, FixedRecord(Verdict.REPRODUCES, "why"))
    with pytest.raises(ValueError, match="needs its reason"):
        judge(count, FixedRecord(Verdict.NOT_TESTABLE, ""))


def test_a_record_of_the_wrong_kind_is_refused():
    with pytest.raises(ValueError, match="is not a count claim"):
        judge(made(BETTER), CountRecord(True))
    with pytest.raises(ValueError, match="is not a paired claim"):
        judge(made(Direction.COUNT), PairedRecord(diff(0, 0.1), EVEN))


def test_every_verdict_is_reached_by_some_rule():
    reached = {
        judge(made(BETTER), PairedRecord(diff(0.05, 0.3), A_WINS, 0.003)).verdict,
        judge(made(BETTER), PairedRecord(diff(-0.3, -0.05), B_WINS, 0.003)).verdict,
        judge(made(BETTER, 0.156), PairedRecord(diff(-0.01, 0.08), EVEN, 0.6)).verdict,
        judge(made(BETTER), PairedRecord(diff(-0.05, 0.17), EVEN, 0.6)).verdict,
        *(judge(made(Direction.COUNT), FixedRecord(v, "why")).verdict for v in
          (Verdict.BY_CONSTRUCTION, Verdict.NOT_TESTABLE, Verdict.NOT_MEASURED)),
    }  # fmt: skip
    assert reached == set(Verdict)


def test_equivalence_is_decided_before_significance():
    # 472 questions, 20 won by a and none lost: significant, but a difference of 0.042
    # whose interval stays inside ±0.10 is none that matters.
    clusters = [f"q{i}" for i in range(472)]
    a, b = [True] * 20 + [False] * 452, [False] * 472
    d, t = paired_difference(a, b, clusters), cluster_paired(a, b, clusters)
    assert t.p < 0.05 and d.within(0.10)
    assert judge(made(SAME), PairedRecord(d, t, t.p)).verdict is Verdict.REPRODUCES
    # The same difference on 32 questions: significant, interval beyond the margin.
    few = [f"q{i}" for i in range(32)]
    a2, b2 = [True] * 8 + [False] * 24, [False] * 32
    d2, t2 = paired_difference(a2, b2, few), cluster_paired(a2, b2, few)
    assert not d2.within(0.10) and t2.p < 0.05
    assert judge(made(SAME), PairedRecord(d2, t2, t2.p)).verdict is Verdict.CONTRADICTED


def test_the_margin_is_the_declared_one():
    """Changing a claim's margin in the file is what moves its verdict: the judge reads it
    from the claim, not from a constant."""
    d = diff(-0.07, 0.07)
    same = claim("hybrid=dense@R4")
    assert judge(same, PairedRecord(d, EVEN, 0.9)).verdict is Verdict.REPRODUCES
    narrower = replace(same, margin=0.05)
    assert judge(narrower, PairedRecord(d, EVEN, 0.9)).verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize(
    ("direction", "interval", "effect", "verdict"),
    [
        (BETTER, (0.02, 0.30), None, Verdict.REPRODUCES),
        (BETTER, (-0.30, -0.02), None, Verdict.CONTRADICTED),
        (WORSE, (-0.30, -0.02), None, Verdict.REPRODUCES),
        (BETTER, (-0.05, 0.10), 0.25, Verdict.EXCLUDES_CHAPTER_EFFECT),
        (BETTER, (-0.05, 0.30), 0.25, Verdict.INCONCLUSIVE),
    ],
)
def test_the_rule_read_from_an_interval_alone(direction, interval, effect, verdict):
    record = IntervalRecord(sum(interval) / 2, interval, "bootstrap_percentile_by_group")
    assert judge(made(direction, effect), record).verdict is verdict
