"""The one verdict rule: every direction against every finding, from hand-made comparisons."""

from __future__ import annotations

import pytest

from rag_lab.evaluation import report
from rag_lab.evaluation.paired import Comparison, Finding
from rag_lab.evaluation.verdicts import Claim, Verdict, claims_markdown, judge
from rag_lab.stats import Paired

NONE = Paired(0, 0, 10)
A_WINS = Paired(10, 0, 0)  # p = 2 / 2^10
B_WINS = Paired(0, 10, 0)


def comparison(per_query: Paired, per_question: Paired | None, p_holm: float | None):
    return Comparison("a", "b", 20, per_query, per_question, p_holm)


@pytest.mark.parametrize(
    ("c", "finding"),
    [
        (comparison(A_WINS, A_WINS, 0.01), Finding.A_BETTER),
        (comparison(B_WINS, B_WINS, 0.01), Finding.B_BETTER),
        (comparison(A_WINS, A_WINS, 0.2), Finding.PER_QUERY_ONLY),  # Holm takes it away
        (comparison(A_WINS, None, None), Finding.PER_QUERY_ONLY),  # no clusters, no claim
        (comparison(NONE, NONE, 1.0), Finding.NONE),
    ],
)
def test_what_a_comparison_supports(c, finding):
    assert c.finding is finding


@pytest.mark.parametrize(
    ("finding_of", "direction", "verdict"),
    [
        ("a", ">", Verdict.REPRODUCES),
        ("a", "<", Verdict.REVERSED),
        ("b", "<", Verdict.REPRODUCES),
        ("b", ">", Verdict.REVERSED),
        ("query", ">", Verdict.PER_QUERY_ONLY),
        ("none", ">", Verdict.NOT_REPRODUCED),
        ("a", "=", Verdict.NOT_REPRODUCED),
        ("query", "=", Verdict.REPRODUCES),
        ("none", "=", Verdict.REPRODUCES),
    ],
)
def test_the_rule_for_each_direction(finding_of, direction, verdict):
    c = {
        "a": comparison(A_WINS, A_WINS, 0.01),
        "b": comparison(B_WINS, B_WINS, 0.01),
        "query": comparison(A_WINS, A_WINS, 0.2),
        "none": comparison(NONE, NONE, 1.0),
    }[finding_of]
    assert judge(c, direction) is verdict


def test_an_unknown_direction_is_refused():
    with pytest.raises(ValueError, match="direction must be one of"):
        judge(comparison(NONE, NONE, 1.0), ">=")


def test_a_claim_renders_its_verdict_and_only_its_verdict_decides():
    plain = Claim("x", "1", "2", Verdict.REPRODUCES)
    detailed = Claim("y", "–", "2 of 6", Verdict.IN_PART, detail="for 2 of 6 readers")
    worded = Claim("z", "–", "–", Verdict.NOT_MEASURED, wording="not measured: no weights")
    assert [c.verdict_text for c in (plain, detailed, worded)] == [
        "reproduces",
        "reproduces for 2 of 6 readers",
        "not measured: no weights",
    ]
    assert plain.verdict.holds and not detailed.verdict.holds
    assert claims_markdown([plain]).splitlines()[-1] == "| x | 1 | 2 | reproduces |"


def test_a_record_without_a_declared_section_is_refused():
    with pytest.raises(TypeError, match="no report section is declared for object"):
        report.section(object())
