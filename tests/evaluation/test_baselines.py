"""The chapter's dense baseline beside ours: R@1 and MRR with intervals by question."""

from __future__ import annotations

import pytest

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import baselines
from rag_lab.questions import Query, Question


def queries(n: int) -> list[Query]:
    qs = [Question(f"q{i}", "d", "x" * (50 + i), "c?", "t?") for i in range(n)]
    return [Query(q, p) for q in qs for p in ("course", "ticket")]


def test_r1_and_mrr_by_question():
    m = baselines.r1_and_mrr([1, 2, None, 4], ["a", "a", "b", "b"])
    assert m["R@1"][0] == 0.25
    assert m["MRR"][0] == pytest.approx((1 + 0.5 + 0 + 0.25) / 4)
    assert m["R@1"][1] <= 0.25 <= m["R@1"][2]


def test_entries_compare_with_the_chapter_values():
    qs = queries(32)
    # First hit at rank 2 for every query: R@1 = 0 and MRR = 0.5, far from the chapter's 0.280.
    (r1, mrr) = baselines.entries([2] * len(qs), qs)
    assert r1.estimate == 0.0
    assert mrr.estimate == pytest.approx(0.5)
    assert mrr.verdict is Verdict.EXCLUDES_CHAPTER_EFFECT
    assert (r1.chapter_effect, mrr.chapter_effect) == (0.094, 0.28)  # the declared values
    assert (r1.method, mrr.method) == ("clustered_wilson", "bootstrap_percentile")
    # Ranks that reproduce the chapter's MRR exactly land inside their own interval.
    ranks = [1] * 6 + [4] * 20 + [None] * 38
    (_, near) = baselines.entries(ranks, qs)
    assert near.ci[0] <= 0.280 <= near.ci[1]


def test_side_by_side_splits_phrasing_and_length():
    qs = queries(4)
    table = baselines.side_by_side([1, None] * 4, qs, chunks=10)
    assert table.loc["ours, course phrasing", "R@1"].startswith("1.000")
    assert table.loc["ours, ticket phrasing", "R@1"].startswith("0.000")
    assert list(table["queries"]) == [64, 8, 4, 4, 4, 4]
