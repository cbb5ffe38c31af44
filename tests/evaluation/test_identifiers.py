"""The identifier interaction: a difference of per-question gaps, bootstrapped by group."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.claims import claim
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import identifiers
from rag_lab.stats import bootstrap_interaction, per_question


def test_per_question_averages_phrasings():
    assert per_question([1, 0, 1, 1], ["a", "a", "b", "b"]).tolist() == [0.5, 1.0]


def test_bootstrap_interaction_centres_on_the_difference_of_means():
    rng = np.random.default_rng(1)
    first, second = rng.normal(0.3, 0.2, 40), rng.normal(0.0, 0.2, 40)
    m, lo, hi = bootstrap_interaction(first, second)
    assert m == pytest.approx(first.mean() - second.mean())
    assert lo < m < hi
    # About a normal interval's width: 2 · 1.96 · sqrt(0.2²/40 · 2) ≈ 0.18.
    assert 0.12 < hi - lo < 0.24
    with pytest.raises(ValueError):
        bootstrap_interaction([], [1.0])


def test_entries_read_the_interval():
    # BM25 wins every identifier question at k = 4 and ties every ordinary one.
    probe = {"BM25": [1, 1, 1, 1] * 4, "dense": [None] * 16}
    probe_clusters = [f"p{i // 2}" for i in range(16)]
    ordinary = {"BM25": [1] * 16, "dense": [1] * 16}
    clusters = [f"q{i // 2}" for i in range(16)]
    (e,) = identifiers.entries(probe, probe_clusters, ordinary, clusters)
    assert e.claim == "identifier-interaction@R4"
    assert e.verdict is Verdict.REPRODUCES
    assert e.estimate == pytest.approx(1.0)
    assert e.statement == claim(e.claim).statement and e.reason == claim(e.claim).rule
    assert e.ci == pytest.approx((1.0, 1.0)) and e.method == identifiers.METHOD
    (flipped,) = identifiers.entries(ordinary, clusters, probe, probe_clusters)
    assert flipped.verdict is Verdict.CONTRADICTED


def test_an_interval_across_zero_is_inconclusive():
    # BM25 wins half the identifier questions at k = 4 and loses the other half.
    probe = {"BM25": [1, 1, None, None] * 4, "dense": [None, None, 1, 1] * 4}
    probe_clusters = [f"p{i // 2}" for i in range(16)]
    ordinary = {"BM25": [1] * 16, "dense": [1] * 16}
    clusters = [f"q{i // 2}" for i in range(16)]
    (e,) = identifiers.entries(probe, probe_clusters, ordinary, clusters)
    assert e.estimate == pytest.approx(0.0) and e.ci[0] < 0 < e.ci[1]
    # inconclusive, with what an interval of that width could detect (no paired design)
    assert e.verdict is Verdict.INCONCLUSIVE and e.detectable > (e.ci[1] - e.ci[0]) / 2 > 0
