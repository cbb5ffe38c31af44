"""The refusal gate's distances and the identity behind them, on vectors built here."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluation import refusal
from rag_lab.questions import Negative, Query, Question


def test_identity_on_unit_and_raw_vectors():
    a, b = np.array([1.0, 0.0]), np.array([0.6, 0.8])
    assert refusal.identity_all_pairs(np.stack([a, b])) < 1e-6
    raw = np.stack([a * 3, b])  # same directions, one longer
    # ‖3a − b‖² = 5.76 + 0.64 = 6.4, half is 3.2, while 1 − cos is still 0.4.
    assert np.isclose(refusal.identity_all_pairs(raw), 2.8, atol=1e-5)


def test_length_dependence_reports_norm_spread_and_rank_correlation():
    raw = np.array([[1.0, 0], [0, 2.0], [3.0, 0]])
    out = refusal.length_dependence(raw, [10, 20, 30])
    assert (out["norm min"], out["norm max"]) == (1.0, 3.0)
    assert out["Spearman(length, norm)"] == pytest.approx(1.0)


def test_distances_and_overlap():
    answerable = np.array([[0.2, 0.6, 0.9], [0.5, 0.3, 0.7]])
    relevant = [{1}, {2}]
    negatives = np.array([[0.65, 0.8, 0.9]])
    d = refusal.distances(answerable, relevant, negatives)
    assert d.needle.tolist() == [0.6, 0.7]
    q = Question("q1", "d", "n", "c", "t")
    queries = [Query(q, "course"), Query(Question("q2", "d", "m", "c2", "t2"), "course")]
    table = refusal.overlap_table(d, queries, [Negative("n1", "offtopic", "x")])
    both = table.iloc[-1]  # every phrasing together ("all": these queries are all "course")
    assert (both["worst in-domain"], both["query"], both["best out-of-domain"]) == (
        0.7,
        "q2/course",
        0.65,
    )
    assert bool(both["overlap"]) and both["in-domain above best out-of-domain"] == 1
