"""Fieller's interval for a ratio of means by question (``stats.ratio_of_means``), checked
against its defining equation and against the delta method, which it meets on large samples."""

import numpy as np
import pytest
from scipy import stats as sps

from rag_lab.stats import ratio_of_means


def test_the_ends_are_where_the_t_statistic_of_a_minus_rho_b_reaches_its_critical_value():
    rng = np.random.default_rng(0)
    a, b = rng.random(40) < 0.5, rng.random(40) < 0.25
    _, (lo, hi) = ratio_of_means(a, b, range(40))
    for rho in (lo, hi):
        d = a - rho * b
        t = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
        assert abs(t) == pytest.approx(sps.t.ppf(0.975, 39), rel=1e-9)


def test_on_a_large_sample_it_meets_the_delta_method_on_the_log_scale():
    rng = np.random.default_rng(1)
    a, b = (rng.random(4000) < 0.6).astype(float), (rng.random(4000) < 0.3).astype(float)
    est, (lo, hi) = ratio_of_means(a, b, range(4000))
    cov = np.cov(a, b, ddof=1) / len(a)
    se = np.sqrt(cov[0, 0] / a.mean() ** 2 + cov[1, 1] / b.mean() ** 2)  # independent draws
    assert est == pytest.approx(a.mean() / b.mean())
    assert (lo, hi) == pytest.approx((est * np.exp(-1.96 * se), est * np.exp(1.96 * se)), rel=0.01)


def test_queries_of_one_question_count_as_one_unit():
    twice = ratio_of_means(
        [1, 1, 0, 0] * 10, [1, 1, 1, 1, 0, 0, 0, 0] * 5, [i // 2 for i in range(40)]
    )
    once = ratio_of_means([1, 0] * 10, [1, 1, 0, 0] * 5, range(20))
    assert twice[0] == pytest.approx(once[0]) and twice[1] == pytest.approx(once[1])


def test_a_denominator_not_distinguishable_from_0_gives_an_unbounded_interval():
    assert ratio_of_means([1, 1, 1, 1], [0, 0, 1, 0], range(4))[1] == (0.0, float("inf"))
    assert ratio_of_means([1, 0], [1, 1], ["q", "q"]) == (0.5, (0.0, float("inf")))  # one question
