"""The second stages' bookkeeping: the sample, the reorder of the top n, the claims (the LLM
reranker's; a real cross-encoder judged on its ranks, a stand-in not measured, the cost by
the declared rule)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from rag_lab.chunking import Chunk
from rag_lab.claims import claim
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import joint
from rag_lab.evaluation.latency import Latency
from rag_lab.evaluation.ledger import PAIRED_METHOD
from rag_lab.models.cross_encoder import Reranker
from rag_lab.models.relevance import Scored
from rag_lab.questions import Query, Question
from rag_lab.search import ChunkIndex


def questions(n: int) -> list[Query]:
    qs = [Question(f"q{i:02d}", "d", f"needle {i}", "c?", "t?") for i in range(n)]
    return [Query(q, p) for q in qs for p in ("course", "ticket")]


def test_the_sample_is_seeded_one_phrasing_in_question_order():
    qs = questions(32)
    a, b = joint.sample(qs), joint.sample(qs)
    assert [q.id for q in a] == [q.id for q in b]
    assert len(a) == joint.SAMPLE and {q.phrasing for q in a} == {"course"}
    assert [q.question.id for q in a] == sorted(q.question.id for q in a)
    assert [q.id for q in joint.sample(qs, seed=1)] != [q.id for q in a]


@dataclass
class ByWord:
    """Scores a passage by whether it holds the word 'needle': a perfect judge of this toy."""

    def score(self, question, passages):
        return [Scored(float("needle" in p), 0.5, 100, False) for p in passages]


def index(texts: list[str]) -> ChunkIndex:
    chunks = [Chunk("d", i, t, t, "", 0, len(t)) for i, t in enumerate(texts)]
    return ChunkIndex(chunks, np.zeros((len(chunks), 3), dtype=np.float32))


def test_rerank_reorders_only_the_top_n_and_keeps_ties_in_hybrid_order():
    idx = index(["a", "b", "needle 0", "needle 0 too", "c"])
    (q,) = [x for x in questions(1) if x.phrasing == "course"]
    hybrid = [np.array([0, 1, 4, 2, 3])]
    j = joint.rerank(ByWord(), idx, hybrid, [q], top_n=4)
    assert j.ranks[joint.HYBRID] == [4]
    assert j.ranks[joint.LLM] == [1]  # chunk 2 moves to the top; 3 is beyond the top 4
    assert j.seconds.tolist() == [2.0]
    # Top 3 only: no needle among them, so nothing can rise; the order stays the hybrid's.
    assert joint.rerank(ByWord(), idx, hybrid, [q], top_n=3).ranks[joint.LLM] == [4]


def test_entries_by_the_ledgers_rule_and_the_bootstrap():
    qs = [q for q in questions(16) if q.phrasing == "course"]
    one = (1,) * 16  # one relevant chunk in each top 25
    better = joint.Joint(
        qs, {joint.HYBRID: [3] * 16, joint.LLM: [1] * 16}, np.ones(16), np.ones(16), 0, one
    )
    r1, mrr, above = joint.entries(better)
    # every first hit at rank 1, where a random order of 25 puts it within 5 one time in five
    assert above.verdict is Verdict.REPRODUCES and above.estimate == pytest.approx(0.8)
    assert r1.verdict is Verdict.REPRODUCES and r1.here == "+16/−0 of 16 questions"
    assert mrr.verdict is Verdict.REPRODUCES
    assert mrr.estimate == pytest.approx(1 - 1 / 3)
    assert mrr.here == "1.000 vs 0.333, +16/−0 of 16 questions"  # the sample's size
    assert (r1.p_adjusted, mrr.p_adjusted) == (None, None)  # exploratory
    assert mrr.method == r1.method == "paired_t_pseudo_questions"
    worse = joint.Joint(
        qs, {joint.HYBRID: [1] * 16, joint.LLM: [9] * 16}, np.ones(16), np.ones(16), 0, one
    )
    assert [e.verdict for e in joint.entries(worse)] == [Verdict.CONTRADICTED] * 3


def test_the_chance_floor_is_what_seeded_random_orders_give():
    j = joint.Joint([], {}, np.array([]), np.array([]), 0, in_top=(0, 1, 2, 3))
    rng = np.random.default_rng(0)
    firsts = []
    for m in j.in_top:
        relevant = np.zeros(25, bool)
        relevant[:m] = True
        draws = [np.flatnonzero(rng.permutation(relevant)) for _ in range(20_000)]
        firsts.append([d[0] + 1 if len(d) else None for d in draws])
    for k in (1, 5):
        simulated = [np.mean([f is not None and f <= k for f in fs]) for fs in firsts]
        assert joint.chance(j, k) == pytest.approx(simulated, abs=0.01)
    simulated_rr = [np.mean([1 / f if f else 0.0 for f in fs]) for fs in firsts]
    assert joint.chance_rr(j) == pytest.approx(simulated_rr, abs=0.01)
    assert joint.chance(j, 5)[1] == pytest.approx(5 / 25)  # one relevant chunk in 25


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
    ranks = {"hybrid": [2] * 24, joint.system_name(real): [1] * 24}
    judged = {e.claim: e for e in joint.reranking_entries(ranks, latencies(600.0), real, QUERIES)}
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
    judged = {e.claim: e for e in joint.reranking_entries(ranks, latencies(20.0), None, QUERIES)}
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
    ranks = {"hybrid": [1, 2, 30, 1], joint.LATE: [2, 1, 30, 1]}
    ranks[joint.system_name(standin)] = [1] * 4
    judged = {e.claim: e for e in joint.reranking_entries(ranks, latencies(600.0), standin, four)}
    assert judged["cross>hybrid@R1"].verdict is Verdict.NOT_MEASURED
    assert judged["cross>hybrid@R1"].estimate is None
    assert judged["cross-cost"].here == "600 ms against 0.25 ms (stand-in)"
    assert judged["colbert"].verdict is Verdict.NOT_TESTABLE
