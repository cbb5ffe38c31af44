"""ranking.order: score first, index second, for both directions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_lab.ranking import order


def test_descending_ties_keep_index_order():
    assert order(np.array([0.5, 0.9, 0.5, 0.9])).tolist() == [1, 3, 0, 2]


def test_ascending_ties_keep_index_order():
    assert order(np.array([0.3, 0.1, 0.3, 0.1]), descending=False).tolist() == [1, 3, 0, 2]


def test_signed_zeros_tie():
    assert order(np.array([-0.0, 0.0, -0.0])).tolist() == [0, 1, 2]
    assert order(np.array([0.0, -0.0, 0.0]), descending=False).tolist() == [0, 1, 2]


def test_float32_ties_survive():
    scores = np.array([0.25, 0.75, 0.25], dtype=np.float32)
    assert order(scores).tolist() == [1, 0, 2]


def test_empty():
    assert order(np.array([])).tolist() == []


def test_nan_rejected():
    with pytest.raises(ValueError, match="NaN"):
        order(np.array([0.1, np.nan]))


def test_two_dimensional_rejected():
    with pytest.raises(ValueError, match="1-D"):
        order(np.zeros((2, 2)))


# Few distinct values, so ties are common.
scores_lists = st.lists(st.sampled_from([-1.5, 0.0, 0.25, 0.5, 2.0]), max_size=30)


@given(scores_lists, st.booleans())
def test_matches_python_sort_on_score_then_index(scores, descending):
    sign = -1 if descending else 1
    expected = sorted(range(len(scores)), key=lambda i: (sign * scores[i], i))
    assert order(np.array(scores), descending=descending).tolist() == expected
