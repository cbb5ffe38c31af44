"""Notebook 05's part of the ledger: a real cross-encoder is judged on its ranks, a stand-in
is not measured, and the cost is judged by the declared rule."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.claims import claim
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import PAIRED_METHOD
from rag_lab.experiments import nb05_reranking as nb05
from rag_lab.experiments.timing import Latency
from rag_lab.models.cross_encoder import Reranker
from rag_lab.questions import Query, Question

QUERIES = [
    Query(Question(f"q{i}", "d", "n", "c", "t"), p) for i in range(12) for p in ("course", "ticket")
]


def latencies(cross_ms: float) -> list[Latency]:
    return [
        Latency("BM25 (score + rank)", np.array([0.05])),
        Latency("vector scan (distances + rank)", np.array([0.25])),
        Latency("late interaction (query tokens + MaxSim) × 25", np.array([15.0])),
        Latency("cross-encoder × 25 pairs", np.array([cross_ms])),
    ]


def test_a_real_cross_encoder_is_judged_on_its_ranks_as_a_family_of_one():
    real = Reranker(model=None, source="hub", standin=False)
    ranks = {"hybrid": [2] * 24, nb05.system_name(real): [1] * 24}
    judged = {e.claim: e for e in nb05.entries(ranks, latencies(600.0), real, QUERIES)}
    assert list(judged) == ["cross>hybrid@R1", "cross>hybrid@MRR", "cross-cost", "colbert"]
    # MRR: every first hit moves from rank 2 to 1, 0.5 to 1.0 on each question
    mrr = judged["cross>hybrid@MRR"]
    assert mrr.verdict is Verdict.REPRODUCES and mrr.estimate == pytest.approx(0.5)
    assert mrr.here == "1.000 vs 0.500, +12/\N{MINUS SIGN}0 of 12 questions"
    lift = judged["cross>hybrid@R1"]
    assert lift.verdict is Verdict.REPRODUCES
    assert lift.estimate == pytest.approx(1.0) and lift.p_adjusted == lift.p
    assert lift.here == "+12/\N{MINUS SIGN}0 of 12 questions"
    assert (lift.metric, lift.family, lift.method) == ("R@1", "confirmatory", PAIRED_METHOD)
    cost = judged["cross-cost"]
    assert cost.verdict is Verdict.REPRODUCES and cost.here == "600 ms against 0.25 ms"
    assert cost.reason == claim("cross-cost").rule
    assert judged["colbert"].verdict is Verdict.NOT_TESTABLE


def test_without_weights_the_lift_is_not_measured_and_a_cheap_scorer_contradicts_the_cost():
    ranks = {"hybrid": [2] * 24}
    judged = {e.claim: e for e in nb05.entries(ranks, latencies(20.0), None, QUERIES)}
    lift = judged["cross>hybrid@R1"]
    assert lift.verdict is Verdict.NOT_MEASURED and lift.estimate is None
    assert "are not here" in lift.reason
    assert judged["cross>hybrid@MRR"].verdict is Verdict.NOT_MEASURED
    cost = judged["cross-cost"]
    assert cost.verdict is Verdict.CONTRADICTED  # 20 ms is 80 times 0.25 ms, not 100
    assert cost.here == "20 ms against 0.25 ms (stand-in)"


def test_a_standins_quality_is_never_judged_and_the_ceiling_is_counted():
    standin = Reranker(model=None, source="/somewhere", standin=True)
    four = QUERIES[:4]
    ranks = {"hybrid": [1, 2, 30, 1], nb05.LATE: [2, 1, 30, 1], nb05.system_name(standin): [1] * 4}
    judged = {e.claim: e for e in nb05.entries(ranks, latencies(600.0), standin, four)}
    assert judged["cross>hybrid@R1"].verdict is Verdict.NOT_MEASURED
    assert judged["cross>hybrid@R1"].estimate is None
    assert judged["cross-cost"].here == "600 ms against 0.25 ms (stand-in)"
    assert judged["colbert"].verdict is Verdict.NOT_TESTABLE
    moved = nb05.movement_table(ranks, n=25).frame.loc[nb05.LATE]
    # the needle at 30 is beyond the reranked 25: out of reach, its rank unchanged
    assert moved.tolist() == [1, 1, 1, 1]  # up, down, same, beyond 25
