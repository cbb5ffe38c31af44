"""The joint reranker's bookkeeping: the sample, the reorder of the top n, the claims."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from rag_lab.chunking import Chunk
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import joint
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
