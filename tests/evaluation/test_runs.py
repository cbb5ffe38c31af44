from __future__ import annotations

from dataclasses import replace

import numpy as np

from rag_lab import fusion
from rag_lab.chunking import Chunk
from rag_lab.evaluation import fusion as evaluation_fusion
from rag_lab.evaluation import runs
from rag_lab.evaluation.latency import time_per_call
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Query, Question
from rag_lab.search import ChunkIndex


class FixedEncoder:
    """Stands in for the model: each known text maps to a fixed unit vector."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = {
            t: np.array(v, dtype=np.float32) / np.linalg.norm(v) for t, v in table.items()
        }

    def encode(self, texts, progress=None):
        return np.stack([self.table[t] for t in texts])


def chunk(i: int, text: str) -> Chunk:
    return Chunk("01-d", i, text, text, "", 10 * i, 10 * i + len(text))


CHUNKS = [
    chunk(0, "alpha beta"),
    chunk(1, "gamma delta"),
    chunk(2, "alpha gamma"),
    chunk(3, "zeta"),
]
QUESTION = Question("q1", "01-d", "gamma delta", "find gamma", "gamma pls")
QUERIES = [Query(QUESTION, "course"), Query(QUESTION, "ticket")]
ENCODER = FixedEncoder(
    {
        "alpha beta": [1, 0, 0],
        "gamma delta": [0, 1, 0],
        "alpha gamma": [1, 1, 0],
        "zeta": [0, 0, 1],
        "find gamma": [1, 0.2, 0],  # nearest: alpha beta, then alpha gamma, then gamma delta
        "gamma pls": [0, 1, 0.1],  # nearest: gamma delta
    }
)


def test_rankings_of_the_three_systems():
    index = ChunkIndex.build(CHUNKS, ENCODER)
    rankings = runs.rank_all(index, QUERIES, ENCODER)
    dense_course, dense_ticket = rankings.by_system["dense"]
    assert list(dense_course) == [0, 2, 1, 3]
    assert list(dense_ticket) == [1, 2, 3, 0]
    # BM25 on "find gamma": only "gamma" matters; "gamma delta" and "alpha gamma" tie on
    # term frequency and length, so chunk order decides; the rest score 0, in chunk order.
    assert list(rankings.by_system["BM25"][0]) == [1, 2, 0, 3]
    # RRF fuses only what BM25 retrieved (positive score): chunks 1 and 2. Chunk 1 gets
    # 1/(60+3) from dense and 1/(60+1) from BM25 = 0.0322660; chunk 2 gets 1/62 + 1/62 =
    # 0.0322581; chunk 0, first for dense but scoring 0 for BM25, only 1/61 = 0.0163934.
    assert list(rankings.by_system["hybrid"][0]) == [1, 2, 0, 3]
    assert list(rankings.by_system["hybrid"][0]) == fusion.rrf([[0, 2, 1, 3], [1, 2]])
    # The old bias: fusing BM25's full ranking gives chunk 0 a BM25 rank (3rd, a zero score
    # ordered by chunk id) worth 1/63, which lifts it above the chunk that holds the answer.
    assert fusion.rrf([[0, 2, 1, 3], [1, 2, 0, 3]]) == [0, 1, 2, 3]
    assert rankings.ranks(index) == {"dense": [3, 1], "BM25": [1, 1], "hybrid": [1, 1]}


def test_relevant_chunks_hold_the_needle_whole():
    q = Query(Question("q", "01-d", "delta", "c", "t"), "course")
    assert relevant_chunks(CHUNKS, [q]) == [{1}]
    q2 = Query(Question("q", "01-d", "beta gamma", "c", "t"), "course")
    assert relevant_chunks(CHUNKS, [q2]) == [set()]


def test_split_by_phrasing_keeps_question_order():
    assert runs.split_by_phrasing([1, None, 3, 4], QUERIES * 2) == {
        "course": [1, 3],
        "ticket": [None, 4],
    }


def test_time_per_call_takes_the_best_run():
    calls = []
    lat = time_per_call("noop", calls.append, [1, 2, 3], repeats=2)
    assert lat.ms.shape == (3,) and (lat.ms >= 0).all()
    assert len(calls) == 1 + 3 * 2  # one warm-up, then repeats per input


def test_the_needle_runs_rrf_60_is_the_hybrid():
    index = ChunkIndex.build(CHUNKS, ENCODER)
    eight = [replace(QUESTION, id=f"q{i}") for i in range(evaluation_fusion.FOLDS)]
    queries = [Query(q, p) for q in eight for p in ("course", "ticket")]
    fused = evaluation_fusion.needle_runs(index, queries, ENCODER)
    hybrid = runs.rank_all(index, queries, ENCODER).ranks(index)["hybrid"]
    # both phrasings put chunk 1, the only one holding "gamma delta" whole, first (BM25 and RRF)
    assert fused.ranks[fused.rrf(60)] == hybrid == [1] * 16
