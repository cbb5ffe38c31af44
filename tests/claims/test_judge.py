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
MARGIN = 0.05


def made(direction: Direction, effect: float | None = None, family: str = EXPLORATORY) -> Claim:
    """A claim as the file would declare it, made here so the rule is tested apart from it."""
    return Claim(
        id="a?b", statement="s", notebooks={"d2l": "03"}, direction=direction, metric="R@1",
        role="chapter", population="all questions", stand_in=None, family=family,
        chapter_effect=effect, margin=MARGIN if direction in (SAME, Direction.VALUE) else None,
    )  # fmt: skip


def diff(centre: float, se: float = 0.05) -> Difference:
    """A difference centred on ``centre`` with its 95 % t interval over 32 questions (33 df:
    ± 2.035 · se, so ± 0.102 at the default se)."""
    return Difference(centre, 0.0, 0.0, se, 64, 32, centre=centre).at(0.95)


A_WINS, B_WINS = Paired(12, 1, 19), Paired(1, 12, 19)
EVEN, NONE = Paired(3, 3, 26), Paired(0, 0, 32)


@pytest.mark.parametrize(
    ("direction", "d", "test", "effect", "verdict"),
    [
        (BETTER, diff(0.20), A_WINS, 0.23, Verdict.REPRODUCES),
        (WORSE, diff(-0.20), B_WINS, -0.06, Verdict.REPRODUCES),
        # inverted: the data go the other way, significantly
        (BETTER, diff(-0.20), B_WINS, 0.23, Verdict.CONTRADICTED),
        (WORSE, diff(0.20), A_WINS, -0.06, Verdict.CONTRADICTED),
        # the interval holds 0 and excludes the chapter's +0.156
        (BETTER, diff(0.03), EVEN, 0.156, Verdict.EXCLUDES_CHAPTER_EFFECT),
        # the interval holds 0 and the chapter's effect: the design cannot tell
        (BETTER, diff(0.06), EVEN, 0.06, Verdict.INCONCLUSIVE),
        (BETTER, diff(0.06), EVEN, None, Verdict.INCONCLUSIVE),
        # a "no difference" claim: a null with a wide interval is never a reproduction
        (SAME, diff(0.06), EVEN, 0.06, Verdict.INCONCLUSIVE),
        (SAME, diff(0.0, se=0.02), EVEN, 0.03, Verdict.REPRODUCES),
        (SAME, diff(0.20), A_WINS, 0.03, Verdict.CONTRADICTED),
        # every question's difference 0: no variation, whatever the direction
        (BETTER, diff(0.0, se=0.02), NONE, 0.2, Verdict.NO_VARIATION),
        (SAME, diff(0.0, se=0.02), NONE, 0.0, Verdict.NO_VARIATION),
    ],
)
def test_the_rule_for_a_paired_claim(direction, d, test, effect, verdict):
    j = judge(made(direction, effect), PairedRecord(d, test))
    assert j.verdict is verdict
    assert (j.margin == MARGIN) == (direction is SAME)
    # the verdict never disagrees with the interval it shows
    assert j.interval == pytest.approx((d.lo, d.hi))
    if verdict is Verdict.REPRODUCES and direction is not SAME:
        assert j.interval[0] > 0 or j.interval[1] < 0
    if verdict is Verdict.INCONCLUSIVE:
        assert j.interval[0] <= 0 <= j.interval[1]
        assert (j.detectable is not None) == (direction is not SAME or not j.significant)


def test_a_confirmatory_family_widens_the_interval_the_verdict_reads():
    d = diff(0.11)  # 95 %: [+0.008, +0.212]; 99 %: [−0.027, +0.247]
    alone = judge(made(BETTER), PairedRecord(d, A_WINS, family_size=5))
    family = judge(made(BETTER, family=CONFIRMATORY), PairedRecord(d, A_WINS, family_size=5))
    assert alone.verdict is Verdict.REPRODUCES and alone.p_adjusted is None
    assert family.verdict is Verdict.INCONCLUSIVE
    assert family.level == pytest.approx(0.99)
    assert family.interval == pytest.approx((d.at(0.99).lo, d.at(0.99).hi))
    assert family.p_adjusted == pytest.approx(min(1.0, 5 * d.p))
    # the adjusted p and the interval agree: it holds 0 exactly when p_adjusted ≥ α
    assert (family.interval[0] > 0) == (family.p_adjusted < 0.05)


def test_an_inconclusive_claim_says_what_the_design_could_detect():
    d = diff(0.06, se=0.056)
    j = judge(made(BETTER, family=CONFIRMATORY), PairedRecord(d, EVEN, family_size=5))
    # t with 33 df: (t(1 - 0.01/2) + t(0.8)) · se = (2.73 + 0.85) · 0.056
    assert j.detectable == pytest.approx(d.detectable(0.05 / 5), rel=1e-12)
    assert 0.19 < j.detectable < 0.21
    # an exploratory claim is not adjusted: its detectable effect is at α itself
    j = judge(made(BETTER), PairedRecord(d, EVEN, family_size=5))
    assert j.detectable == pytest.approx(d.detectable(0.05), rel=1e-12)


def test_a_ceiling_never_decides_that_the_chapter_s_effect_is_excluded():
    # b already finds 0.875: a − b cannot exceed +0.125, below the chapter's +0.156
    d = diff(0.03)
    free = judge(made(BETTER, 0.156), PairedRecord(d, EVEN))
    capped = judge(made(BETTER, 0.156), PairedRecord(d, EVEN, headroom=(-0.875, 0.125)))
    assert free.verdict is Verdict.EXCLUDES_CHAPTER_EFFECT
    assert capped.verdict is Verdict.INCONCLUSIVE and capped.ceiling == 0.125
    assert capped.share is None  # no chapter baseline declared: nothing to compare shares of


@pytest.mark.parametrize(
    ("centre", "chapter_b", "verdict"),
    [
        # ours [-0.072, +0.132] / 0.125 = [-0.58, +1.06]; the chapter's 0.156 / 0.328 = 0.48
        (0.03, 0.672, Verdict.INCONCLUSIVE),
        # ours [-0.10, +0.10] / 0.125 = [-0.81, +0.81]; the chapter's 0.156 / 0.156 = 1.0
        (0.0, 0.844, Verdict.EXCLUDES_CHAPTER_EFFECT),
    ],
)
def test_out_of_reach_the_effects_are_compared_as_shares_of_their_headroom(
    centre, chapter_b, verdict
):
    c = replace(made(BETTER, 0.156), chapter_baseline=chapter_b)
    j = judge(c, PairedRecord(diff(centre), EVEN, headroom=(-0.875, 0.125)))
    d = diff(centre)
    assert j.verdict is verdict and j.ceiling == 0.125
    assert j.share == pytest.approx((d.lo / 0.125, d.hi / 0.125))
    assert j.chapter_share == pytest.approx(0.156 / (1 - chapter_b))


def test_a_stand_in_that_changes_the_task_is_not_testable_as_stated():
    c = replace(made(Direction.COUNT), stand_in="another prompt", not_as_stated="why")
    assert judge(c, CountRecord(True)).verdict is Verdict.NOT_TESTABLE
    assert claim("ids-real").not_as_stated and claim("ids-real").stand_in


@pytest.mark.parametrize(
    ("interval", "verdict"),
    [
        ((0.29, 0.38), Verdict.REPRODUCES),  # within ±0.05 of a third
        ((0.45, 0.75), Verdict.EXCLUDES_CHAPTER_EFFECT),
        ((0.28, 0.58), Verdict.INCONCLUSIVE),
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
        judge(made(Direction.COUNT), PairedRecord(diff(0.05), EVEN))


def test_every_verdict_is_reached_by_some_rule():
    reached = {
        judge(made(BETTER), PairedRecord(diff(0.2), A_WINS)).verdict,
        judge(made(BETTER), PairedRecord(diff(-0.2), B_WINS)).verdict,
        judge(made(BETTER, 0.156), PairedRecord(diff(0.03), EVEN)).verdict,
        judge(made(BETTER), PairedRecord(diff(0.06), EVEN)).verdict,
        judge(made(BETTER), PairedRecord(diff(0.0), NONE)).verdict,
        *(judge(made(Direction.COUNT), FixedRecord(v, "why")).verdict for v in
          (Verdict.BY_CONSTRUCTION, Verdict.NOT_TESTABLE, Verdict.NOT_MEASURED)),
    }  # fmt: skip
    assert reached == set(Verdict)


def test_an_equivalence_says_when_the_difference_is_also_significant():
    # 472 questions, 10 won by a and none lost: significant, but a difference of 0.021 whose
    # interval stays inside ±0.05 is none that matters; the entry says it is significant.
    clusters = [f"q{i}" for i in range(472)]
    a, b = [True] * 10 + [False] * 462, [False] * 472
    d, t = paired_difference(a, b, clusters), cluster_paired(a, b, clusters)
    assert d.p < 0.05 and d.within(MARGIN)
    j = judge(made(SAME), PairedRecord(d, t))
    assert j.verdict is Verdict.REPRODUCES and j.significant
    # The same on 32 questions (8 won): significant, the interval beyond the margin.
    few = [f"q{i}" for i in range(32)]
    a2, b2 = [True] * 8 + [False] * 24, [False] * 32
    d2, t2 = paired_difference(a2, b2, few), cluster_paired(a2, b2, few)
    assert not d2.within(MARGIN) and d2.p < 0.05
    assert judge(made(SAME), PairedRecord(d2, t2)).verdict is Verdict.CONTRADICTED


def test_the_margin_is_the_declared_one():
    """Changing a claim's margin in the file is what moves its verdict: the judge reads it
    from the claim, not from a constant."""
    d = diff(0.0, se=0.02)  # ± 0.041 at 95 %, ± 0.055 at 1 − 0.05/5
    same = replace(claim("hybrid=dense@R4"), family=EXPLORATORY)
    assert judge(same, PairedRecord(d, EVEN)).verdict is Verdict.REPRODUCES
    narrower = replace(same, margin=0.03)
    assert judge(narrower, PairedRecord(d, EVEN)).verdict is Verdict.INCONCLUSIVE


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


def test_replication_statistics_against_a_study_of_the_chapter_s_size():
    from scipy import stats
    from statsmodels.stats.power import TTestPower

    d = diff(0.10)  # 32 questions, as the chapter: its standard error is ours
    j = judge(made(BETTER, 0.234), PairedRecord(d, A_WINS))
    half = stats.t.ppf(0.975, d.df) * d.se * 2**0.5
    assert j.prediction == pytest.approx((0.10 - half, 0.10 + half))
    # power of a two-sided one-sample t test on 34 values (32 questions, two pseudo-ones)
    effect = 0.10 / (d.se * 34**0.5)
    assert j.chapter_power == pytest.approx(TTestPower().power(effect, 34, 0.05), abs=1e-6)
    # a claim that is not the chapter's has no replication statistics
    control = replace(made(BETTER, 0.234), role="control")
    assert judge(control, PairedRecord(d, A_WINS)).prediction is None
