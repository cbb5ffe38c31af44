"""metrics: first-hit ranks, Recall@k, MRR and the summary tables."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_lab.metrics import (
    first_hit_rank,
    first_hit_ranks,
    hits_at,
    mrr,
    paired_table,
    recall_at,
    summary,
    summary_table,
)
from rag_lab.stats import wilson


def test_first_hit_rank():
    assert first_hit_rank([5, 3, 9, 1], {9, 3}) == 2
    assert first_hit_rank([5, 3, 9, 1], {1}) == 4
    assert first_hit_rank([5, 3], {7}) is None
    assert first_hit_rank([], {7}) is None


def test_first_hit_ranks():
    assert first_hit_ranks([[1, 2], [2, 1], [3]], [{1}, {1}, {1}]) == [1, 2, None]
    with pytest.raises(ValueError, match="2 rankings but 1 relevant sets"):
        first_hit_ranks([[1], [2]], [{1}])


RANKS = [1, 3, None, 5, 2, 1, None, 20]


def test_hits_and_recall():
    assert hits_at(RANKS, 1).tolist() == [True, False, False, False, False, True, False, False]
    assert hits_at(RANKS, 3).tolist() == [True, True, False, False, True, True, False, False]
    assert recall_at(RANKS, 1) == 2 / 8
    assert recall_at(RANKS, 4) == 4 / 8
    assert recall_at(RANKS, 20) == 6 / 8
    assert recall_at(RANKS, 1000) == 6 / 8  # None never becomes a hit


def test_mrr_over_the_full_ranking():
    expected = (1 + 1 / 3 + 0 + 1 / 5 + 1 / 2 + 1 + 0 + 1 / 20) / 8
    assert mrr(RANKS) == pytest.approx(expected, rel=1e-15)
    assert mrr([None, None]) == 0.0


def test_summary():
    s = summary(RANKS, ks=(1, 4), level=0.9)
    assert (s.n, s.no_hit, s.level) == (8, 2, 0.9)
    assert s.mrr == mrr(RANKS)
    assert list(s.recall) == [1, 4]
    r4 = s.recall[4]
    assert (r4.k, r4.hits, r4.n, r4.value) == (4, 4, 8, 0.5)
    assert (r4.lo, r4.hi) == wilson(4, 8, 0.9)


def test_summary_table():
    table = summary_table({"dense": RANKS, "bm25": [1, 1, None, 2]}, ks=(1, 4))
    assert list(table.index) == ["dense", "bm25"]
    assert list(table.columns) == [
        "n",
        "R@1",
        "R@1 lo",
        "R@1 hi",
        "R@4",
        "R@4 lo",
        "R@4 hi",
        "MRR",
        "no hit",
    ]
    row = table.loc["bm25"]
    assert (row["n"], row["R@1"], row["R@4"], row["no hit"]) == (4, 0.5, 0.75, 1)
    assert (row["R@4 lo"], row["R@4 hi"]) == wilson(3, 4)
    assert row["MRR"] == pytest.approx((1 + 1 + 0 + 0.5) / 4)


def test_paired_table():
    systems = {"E": [1, 2, None, 8, 1], "A": [3, None, None, 1, 2]}
    table = paired_table(systems, [("E", "A")], ks=[1, 4])
    assert list(table.columns) == ["a", "b", "k", "wins", "losses", "p"]
    # k = 1: E hits queries 0, 4 and A hits 3.  k = 4: E hits 0, 1, 4 and A hits 0, 3, 4.
    assert table.to_dict("records") == [
        {"a": "E", "b": "A", "k": 1, "wins": 2, "losses": 1, "p": 1.0},
        {"a": "E", "b": "A", "k": 4, "wins": 1, "losses": 1, "p": 1.0},
    ]


def test_bad_inputs():
    with pytest.raises(ValueError, match="no queries"):
        recall_at([], 1)
    with pytest.raises(ValueError, match="no queries"):
        mrr([])
    with pytest.raises(ValueError, match="1-based"):
        mrr([0, 1])
    with pytest.raises(ValueError, match="k must be >= 1"):
        recall_at([1], 0)


ranks_lists = st.lists(st.none() | st.integers(1, 30), min_size=1, max_size=40)


@given(ranks_lists)
def test_recall_grows_with_k_up_to_the_share_with_a_hit(ranks):
    recalls = [recall_at(ranks, k) for k in range(1, 32)]
    assert recalls == sorted(recalls)
    assert recalls[-1] == sum(r is not None for r in ranks) / len(ranks)


@given(ranks_lists)
def test_mrr_lies_between_recall_at_1_and_recall_at_infinity(ranks):
    assert recall_at(ranks, 1) <= mrr(ranks) + 1e-12
    assert mrr(ranks) <= recall_at(ranks, 30) + 1e-12
