"""The intervals' coverage, by simulation on clustered binary data with a known truth.

Each simulated question is asked in ``m`` phrasings (2 like the lab's 32 questions, 1 like
Chroma's 472). Every phrasing's pair of outcomes (system a hits, system b hits) is drawn
from one 2×2 table of cell probabilities, and with probability ``rho`` a question's
phrasings all share one draw (they succeed or fail together). The marginal rates and their
difference are then known exactly: ``p(a) = p11 + p10``, ``p(a) − p(b) = p10 − p01``.

The fast tier runs 400 simulated designs per scenario, so a coverage of 0.95 is measured to
about ±0.011 and the floor is 0.92 (three standard errors); the slow tier (``-m slow``, in
``make test``) runs 3,000, to ±0.004, against 0.935. A naive interval that ignores the
clustering falls short of the fast floor where phrasings agree: the check can fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.stats import cluster_bootstrap, clustered_wilson, paired_difference, wilson

FAST_FLOOR = 0.92

CELLS = {
    # name: (p11, p10, p01, p00), rho
    "even, no difference": ((0.35, 0.15, 0.15, 0.35), 0.6),
    "a better by 0.15": ((0.40, 0.20, 0.05, 0.35), 0.6),
    "near the ceiling, few differ": ((0.88, 0.05, 0.02, 0.05), 0.7),
    "near the floor": ((0.03, 0.04, 0.01, 0.92), 0.5),
    "phrasings move together": ((0.30, 0.15, 0.05, 0.50), 0.95),
}


def simulate(cells, rho, questions, m, rng):
    """(hits of a, hits of b, clusters) for one simulated design."""
    p = np.array(cells)
    shared = rng.random(questions) < rho
    draws = rng.choice(4, size=(questions, m), p=p)
    draws[shared] = draws[shared, :1]  # one draw for every phrasing of the question
    a = np.isin(draws, (0, 1)).ravel()
    b = np.isin(draws, (0, 2)).ravel()
    clusters = np.repeat(np.arange(questions), m)
    return a, b, clusters


def coverage(interval, truth, cells, rho, questions, m, reps, seed=0):
    rng = np.random.default_rng(seed)
    inside = 0
    for _ in range(reps):
        lo, hi = interval(*simulate(cells, rho, questions, m, rng))
        inside += lo <= truth <= hi
    return inside / reps


def _difference(a, b, clusters):
    d = paired_difference(a, b, clusters)
    return d.lo, d.hi


def _rate(a, b, clusters):
    return clustered_wilson(a, clusters)


def _naive_rate(a, b, clusters):
    return wilson(int(a.sum()), len(a))


@pytest.mark.parametrize("design", [(32, 2), (472, 1)], ids=["32x2", "472x1"])
@pytest.mark.parametrize("name", list(CELLS))
def test_the_paired_difference_covers(name, design):
    cells, rho = CELLS[name]
    truth = cells[1] - cells[2]
    got = coverage(_difference, truth, cells, rho, *design, reps=400)
    assert got >= FAST_FLOOR, f"{name}: {got:.3f}"


@pytest.mark.parametrize("name", list(CELLS))
def test_the_clustered_rate_covers(name):
    cells, rho = CELLS[name]
    truth = cells[0] + cells[1]
    assert coverage(_rate, truth, cells, rho, 32, 2, reps=400) >= FAST_FLOOR


def test_an_interval_that_ignores_the_clusters_falls_short():
    cells, rho = CELLS["phrasings move together"]
    truth = cells[0] + cells[1]
    naive = coverage(_naive_rate, truth, cells, rho, 32, 2, reps=400)
    clustered = coverage(_rate, truth, cells, rho, 32, 2, reps=400)
    assert naive < FAST_FLOOR <= clustered


def test_a_percentile_bootstrap_over_32_questions_falls_short_near_the_ceiling():
    cells, rho = CELLS["near the ceiling, few differ"]

    def bootstrap(a, b, clusters):
        return cluster_bootstrap(a, clusters, resamples=400)

    assert coverage(bootstrap, cells[0] + cells[1], cells, rho, 32, 2, reps=400) < FAST_FLOOR


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CELLS))
def test_the_intervals_cover_at_3000_simulations(name):
    cells, rho = CELLS[name]
    difference = coverage(_difference, cells[1] - cells[2], cells, rho, 32, 2, reps=3000, seed=1)
    rate = coverage(_rate, cells[0] + cells[1], cells, rho, 32, 2, reps=3000, seed=1)
    assert difference >= 0.935 and rate >= 0.935, (difference, rate)
