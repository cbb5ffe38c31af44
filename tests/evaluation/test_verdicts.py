"""The ledger's one rule, on hand-made cases: every verdict reached at least once, a null with
a wide interval never a reproduction, an inverted claim contradicted."""

from __future__ import annotations

import pytest

from rag_lab.evaluation import ledger, report
from rag_lab.evaluation.ledger import (
    CONFIRMATORY,
    EXPLORATORY,
    MARGIN,
    Direction,
    Ledger,
    PairedClaim,
    construction_entry,
    count_entry,
    fixed_entry,
    judge,
    judge_value,
    paired_entries,
    value_entry,
)
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.stats import Difference, Paired

BETTER, WORSE, SAME = Direction.BETTER, Direction.WORSE, Direction.SAME


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
    got, margin, detectable = judge(direction, d, test, p, effect)
    assert got is verdict
    assert (margin == MARGIN) == (direction is SAME)
    assert (detectable is not None) == (verdict is Verdict.INCONCLUSIVE and direction is not SAME)


def test_an_inconclusive_claim_says_what_the_design_could_detect():
    d = diff(-0.05, 0.17, se=0.056)
    _, _, detectable = judge(BETTER, d, EVEN, 0.6, None, family_size=5)
    # t with 33 df: (t(1 - 0.01/2) + t(0.8)) · se = (2.73 + 0.85) · 0.056
    assert detectable == pytest.approx(d.detectable(0.05 / 5), rel=1e-12)
    assert 0.19 < detectable < 0.21


@pytest.mark.parametrize(
    ("interval", "verdict"),
    [
        ((0.25, 0.42), Verdict.REPRODUCES),  # within ±0.10 of a third
        ((0.45, 0.75), Verdict.EXCLUDES_CHAPTER_EFFECT),
        ((0.23, 0.58), Verdict.INCONCLUSIVE),
    ],
)
def test_the_rule_for_a_value(interval, verdict):
    assert judge_value(1 / 3, interval) == (verdict, MARGIN)


def test_counts_fixed_verdicts_and_construction():
    holds = count_entry(notebook="02", benchmark="d2l", claim="c", statement="s", metric="m",
                        holds=True, here="8 of 32")  # fmt: skip
    fails = count_entry(notebook="02", benchmark="d2l", claim="c", statement="s", metric="m",
                        holds=False, here="4 of 32")  # fmt: skip
    assert (holds.verdict, fails.verdict) == (Verdict.REPRODUCES, Verdict.CONTRADICTED)
    built = dict(notebook="08", benchmark="d2l", claim="b", statement="s", reason="why")
    assert construction_entry(holds=True, **built).verdict is Verdict.BY_CONSTRUCTION
    assert construction_entry(holds=False, **built).verdict is Verdict.CONTRADICTED
    for v in (Verdict.NOT_TESTABLE, Verdict.NOT_MEASURED):
        entry = fixed_entry(verdict=v, **built)
        assert not entry.verdict.tested and not entry.verdict.agrees
        assert entry.verdict_text.endswith(": why")
    with pytest.raises(ValueError, match="decided by numbers"):
        fixed_entry(verdict=Verdict.REPRODUCES, **built)
    with pytest.raises(ValueError, match="needs its reason"):
        fixed_entry(**{**built, "reason": ""}, verdict=Verdict.NOT_TESTABLE)


def test_every_verdict_is_reached_by_some_rule():
    reached = {
        judge(BETTER, diff(0.05, 0.3), A_WINS, 0.003, None)[0],
        judge(BETTER, diff(-0.3, -0.05), B_WINS, 0.003, None)[0],
        judge(BETTER, diff(-0.01, 0.08), EVEN, 0.6, 0.156)[0],
        judge(BETTER, diff(-0.05, 0.17), EVEN, 0.6, None)[0],
        Verdict.BY_CONSTRUCTION,
        Verdict.NOT_TESTABLE,
        Verdict.NOT_MEASURED,
    }
    assert reached == set(Verdict)


def queries(n: int) -> list[str]:
    return [f"q{i}" for i in range(n) for _ in range(2)]


def test_holm_runs_over_the_confirmatory_claims_alone():
    # a finds both phrasings of 8 of 12 questions that b misses; sign test 2/2^8 = 0.0078.
    clusters = queries(12)
    ranks = {"a": [1] * 24, "b": [1] * 8 + [None] * 16, "c": [1] * 24}
    claims = [
        PairedClaim("a>b", "a beats b", "a", "b", 1, BETTER),
        PairedClaim("a=c", "a is c", "a", "c", 1, SAME),
        PairedClaim("a>b@explore", "an exploratory row", "a", "b", 1, BETTER, family=EXPLORATORY),
    ]
    entries = paired_entries("03", "d2l", claims, ranks, clusters)
    confirm, same, explore = entries
    assert confirm.family == CONFIRMATORY and explore.family == EXPLORATORY
    assert confirm.p == pytest.approx(2 / 2**8)
    assert confirm.p_adjusted == pytest.approx(2 * 2 / 2**8)  # a family of two, not three
    assert explore.p_adjusted is None and explore.verdict is Verdict.REPRODUCES
    assert confirm.verdict is Verdict.REPRODUCES and confirm.estimate == pytest.approx(16 / 24)
    # identical systems on 12 questions: the interval is not a point, and too wide for ±0.10
    assert same.ci[0] < -MARGIN < MARGIN < same.ci[1] and same.verdict is Verdict.INCONCLUSIVE


def test_an_equivalence_needs_the_interval_not_the_test():
    # 32 questions, a and b differ on 3 in each direction: no test finds a difference, but
    # the interval is wider than the margin, so "no difference" is not shown.
    clusters = queries(32)
    a = [1] * 6 + [None] * 6 + [1] * 52
    b = [None] * 6 + [1] * 6 + [1] * 52
    (entry,) = paired_entries(
        "04", "d2l", [PairedClaim("a=b", "a is b", "a", "b", 1, SAME)], {"a": a, "b": b}, clusters
    )
    assert entry.p == 1.0 and entry.verdict is Verdict.INCONCLUSIVE
    assert entry.ci[1] - entry.ci[0] > 2 * MARGIN
    # identical on all 32: the interval (±0.044 by its two pseudo-questions) shows it
    (same,) = paired_entries(
        "04", "d2l", [PairedClaim("a=a", "a is a", "a", "c", 1, SAME)], {"a": a, "c": a}, clusters
    )
    assert same.verdict is Verdict.REPRODUCES and -MARGIN < same.ci[0] < 0 < same.ci[1] < MARGIN


def test_a_ledger_writes_and_reads_back_the_same(tmp_path):
    entries = [
        value_entry(notebook="06", benchmark="d2l", claim="v", statement="s", metric="m",
                    chapter_value=1 / 3, estimate=0.4, interval=(0.23, 0.58), chapter="10 of 30",
                    here="12 of 30"),
        count_entry(notebook="02", benchmark="d2l", claim="c", statement="s", metric="m",
                    holds=False, here="4 of 32"),
    ]  # fmt: skip
    path = Ledger(entries).write(tmp_path / "claims.json")
    assert Ledger.read(path).entries == entries
    assert path.read_text().count('"verdict": "inconclusive"') == 1


def test_a_record_without_a_declared_section_is_refused():
    with pytest.raises(TypeError, match="no report section is declared for object"):
        report.section(object(), "corpus")


def test_the_view_shows_the_estimate_the_test_and_the_verdict():
    entries = paired_entries(
        "03", "d2l", [PairedClaim("a>b", "a beats b", "a", "b", 1, BETTER, (10, 3, "0.09"))],
        {"a": [1] * 24, "b": [1] * 8 + [None] * 16}, queries(12),
    )  # fmt: skip
    row = ledger.view(entries).iloc[0]
    assert row["chapter"] == "+10/−3, p = 0.09" and row["here"] == "+8/−0 of 12 questions"
    assert row["estimate [95 % CI]"].startswith("+0.667 [")
    assert row["verdict"] == "reproduces"


def test_equivalence_is_decided_before_significance():
    from rag_lab.evaluation.ledger import Direction, judge
    from rag_lab.evaluation.verdicts import Verdict
    from rag_lab.stats import cluster_paired, paired_difference

    # 472 questions, 20 won by a and none lost: significant, but a difference of 0.042
    # whose interval stays inside ±0.10 is none that matters.
    clusters = [f"q{i}" for i in range(472)]
    a = [True] * 20 + [False] * 452
    b = [False] * 472
    d, t = paired_difference(a, b, clusters), cluster_paired(a, b, clusters)
    assert t.p < 0.05 and d.within(0.10)
    assert judge(Direction.SAME, d, t, t.p, None)[0] is Verdict.REPRODUCES
    # The same difference on 32 questions: significant, interval beyond the margin.
    few = [f"q{i}" for i in range(32)]
    d2 = paired_difference([True] * 8 + [False] * 24, [False] * 32, few)
    t2 = cluster_paired([True] * 8 + [False] * 24, [False] * 32, few)
    assert not d2.within(0.10) and t2.p < 0.05
    assert judge(Direction.SAME, d2, t2, t2.p, None)[0] is Verdict.CONTRADICTED
