"""RRF: hand-computed fused scores, exact ties by first appearance, properties."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab import fusion
from rag_lab.fusion import rrf, rrf_scores


def test_hand_computed_scores_and_order():
    lists = [[1, 2, 3], [3, 1, 4]]
    scores = rrf_scores(lists)
    assert scores == pytest.approx(
        {
            1: 1 / (60 + 1) + 1 / (60 + 2),
            2: 1 / (60 + 2),
            3: 1 / (60 + 3) + 1 / (60 + 1),
            4: 1 / (60 + 3),
        },
        rel=1e-15,
    )
    assert rrf(lists) == [1, 3, 2, 4]


def test_k_changes_the_weights():
    assert rrf_scores([[5, 6]], k=0) == {5: 1.0, 6: 0.5}
    # Id 9 is third in both lists, 7 and 5 first in one each.
    # k = 0:  9 scores 1/3 + 1/3, below 1 for 7 and 5 (a tie, 7 met first), above 1/2.
    # k = 60: 9 scores 1/63 + 1/63 = 0.0317 > 1/61 = 0.0164; the consensus wins.
    lists = [[7, 8, 9], [5, 6, 9]]
    assert rrf(lists, k=0) == [7, 5, 9, 8, 6]
    assert rrf(lists, k=60) == [9, 7, 5, 8, 6]


def test_tie_broken_by_first_appearance():
    # Both ids score 1/61 + 1/62.
    assert rrf([[1, 2], [2, 1]]) == [1, 2]
    assert rrf([[2, 1], [1, 2]]) == [2, 1]
    # 7 and 9 both score 1/61; 7 is met first, in list 0.
    assert rrf([[7, 8], [9]]) == [7, 9, 8]


def test_tie_is_exact_where_float_sums_are_not():
    # Id 0 has ranks (1, 7, 2), id 1 has (2, 1, 7): the same exact score, but summed
    # as floats in list order id 1 comes out one ulp higher. Id 0 is met first.
    assert 1 / 61 + 1 / 67 + 1 / 62 < 1 / 62 + 1 / 61 + 1 / 67
    lists = [
        [0, 1, 100, 101, 102, 103, 104],
        [1, 110, 111, 112, 113, 114, 0],
        [120, 0, 121, 122, 123, 124, 1],
    ]
    assert rrf(lists)[:2] == [0, 1]
    assert rrf_scores(lists)[0] == rrf_scores(lists)[1]


def test_degenerate_inputs():
    assert rrf([]) == []
    assert rrf([[], []]) == []
    assert rrf([[3, 1, 2]]) == [3, 1, 2]


def test_bad_inputs():
    with pytest.raises(ValueError, match="ranking 1 lists an id more than once"):
        rrf([[1, 2], [3, 3]])
    with pytest.raises(ValueError, match="k must be >= 0"):
        rrf([[1]], k=-1)


rankings = st.lists(st.lists(st.integers(0, 15), unique=True, max_size=10), min_size=1, max_size=4)


@given(rankings)
def test_output_is_a_permutation_of_the_union(lists):
    fused = rrf(lists)
    assert sorted(fused) == sorted({doc for ranking in lists for doc in ranking})


@given(rankings)
def test_scores_descend_and_ties_follow_first_appearance(lists):
    fused = rrf(lists)
    first_seen = list(dict.fromkeys(doc for ranking in lists for doc in ranking))
    exact = {
        doc: sum((Fraction(1, 60 + r.index(doc) + 1) for r in lists if doc in r), Fraction(0))
        for doc in first_seen
    }
    assert fused == sorted(first_seen, key=lambda d: (-exact[d], first_seen.index(d)))


@given(rankings, st.randoms(use_true_random=False))
def test_scores_do_not_depend_on_list_order(lists, random):
    shuffled = lists[:]
    random.shuffle(shuffled)
    scores, scores_shuffled = rrf_scores(lists), rrf_scores(shuffled)
    assert scores == scores_shuffled  # bitwise, not approximately


@given(st.lists(st.integers(0, 50), unique=True, max_size=20))
def test_one_list_is_returned_unchanged(ranking):
    assert rrf([ranking]) == ranking


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 30), unique=True, max_size=25), min_size=1, max_size=4),
    st.integers(0, 5),
)
def test_the_float_first_sort_equals_sorting_by_the_exact_sums(lists, k):
    # Small k and few ids: many exact ties and near-ties, the cases the float pass must hand
    # to the exact comparison.
    exact = fusion._exact_scores(lists, k)
    expected = sorted(exact, key=exact.__getitem__, reverse=True)
    assert fusion.rrf(lists, k) == expected
