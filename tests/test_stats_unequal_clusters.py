"""The question-level estimators on questions of 1, 2 and 3 phrasings (clusters of unequal
size), against statsmodels and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.weightstats import DescrStatsW

from rag_lab.stats import (
    cluster_paired,
    clustered_wilson,
    paired_difference,
    per_question,
)

CLUSTERS = ["a", "b", "b", "c", "c", "c"]
A = [1, 1, 0, 1, 1, 1]
B = [0, 0, 0, 1, 0, 0]


def test_per_question_means_over_each_questions_own_phrasings():
    assert list(per_question(A, CLUSTERS)) == [1.0, 0.5, 1.0]


def test_the_sign_test_counts_each_question_once():
    r = cluster_paired(A, B, CLUSTERS)  # hits per question: a 1-0, b 1-0, c 3-1
    assert (r.wins, r.losses, r.ties) == (3, 0, 0)
    r = cluster_paired(A, [*A[:1], 0, 1, *A[3:]], CLUSTERS)  # b: 1-0 and 0-1 tie
    assert (r.wins, r.losses, r.ties) == (0, 0, 3)


def test_paired_difference_is_a_t_interval_over_questions_and_two_pseudo_questions():
    d = paired_difference(A, B, CLUSTERS)
    # Per question: 1 - 0, (1 - 0) / 2, (3 - 1) / 3; a pseudo-question is one query of an
    # average question (2 phrasings): ±1/2.
    assert d.estimate == pytest.approx((1 + 1 / 2 + 2 / 3) / 3)
    padded = np.array([1, 1 / 2, 2 / 3, 1 / 2, -1 / 2])
    lo, hi = DescrStatsW(padded).tconfint_mean(alpha=0.05)
    assert (d.lo, d.hi) == pytest.approx((lo, min(hi, 1.0)))
    assert (d.clusters, d.queries, d.df) == (3, 6, 4)
    _t, p, _ = DescrStatsW(padded).ttest_mean(0)
    assert d.p == pytest.approx(p)


def test_clustered_wilson_takes_the_questions_as_the_sample():
    p, n, z = 5 / 6, 3, 1.959963984540054  # 5 of 6 queries hit, 3 questions
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    assert clustered_wilson(A, CLUSTERS) == pytest.approx((centre - half, centre + half))
