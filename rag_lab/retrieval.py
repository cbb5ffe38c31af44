"""Rank every chunk for every query: dense, BM25, and their reciprocal rank fusion.

An :class:`Index` holds one strategy's chunks, their unit vectors and a BM25 index over
the same embedded ``text``. Rankings are full (every chunk, best first) so that a first
hit at any depth is seen, and ties always fall back to chunk order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rag_lab import dense, fusion
from rag_lab.bm25 import BM25
from rag_lab.chunking import Chunk
from rag_lab.citations import Hit
from rag_lab.embed import Encoder, Timing
from rag_lab.metrics import first_hit_ranks
from rag_lab.questions import Query
from rag_lab.ranking import order

SYSTEMS = ("dense", "BM25", "hybrid")
RRF_K = 60


@dataclass(frozen=True)
class Index:
    """One strategy's chunks, searchable densely and lexically."""

    chunks: list[Chunk]
    vectors: np.ndarray
    """Unit float32 vectors, one row per chunk, in chunk order."""
    bm25: BM25

    @classmethod
    def build(cls, chunks: Sequence[Chunk], encoder: Encoder) -> Index:
        texts = [c.text for c in chunks]
        return cls(list(chunks), encoder.encode(texts), BM25(texts))


@dataclass(frozen=True)
class DenseRetriever:
    """An :class:`Index` searched by cosine distance: the retriever behind the gate."""

    index: Index
    encoder: Encoder
    titles: dict[str, str]
    """Document id → document name, for citations."""

    def nearest(self, question: str, k: int) -> list[Hit]:
        distances = dense.cosine_distances(self.encoder.encode([question])[0], self.index.vectors)
        top = order(distances, descending=False)[:k]
        chunks = self.index.chunks
        return [Hit(chunks[i], self.titles[chunks[i].doc_id], float(distances[i])) for i in top]


@dataclass(frozen=True)
class Rankings:
    """Full rankings (chunk positions, best first) of each system for a list of queries."""

    queries: list[Query]
    by_system: dict[str, list[np.ndarray]]
    distances: np.ndarray
    """Cosine distances, queries × chunks."""

    def ranks(self, index: Index) -> dict[str, list[int | None]]:
        """First-hit rank per query for each system (a hit holds the needle whole)."""
        relevant = relevant_chunks(index.chunks, self.queries)
        return {name: first_hit_ranks(r, relevant) for name, r in self.by_system.items()}


def relevant_chunks(chunks: Sequence[Chunk], queries: Sequence[Query]) -> list[set[int]]:
    """For each query, the positions of the chunks whose ``text`` contains its needle."""
    by_needle: dict[str, set[int]] = {}
    for q in queries:
        if q.needle not in by_needle:
            by_needle[q.needle] = {i for i, c in enumerate(chunks) if q.needle in c.text}
    return [by_needle[q.needle] for q in queries]


def rank_all(index: Index, queries: Sequence[Query], encoder: Encoder) -> Rankings:
    """Dense, BM25 and hybrid (RRF of the two full rankings) for every query."""
    query_vectors = encoder.encode([q.text for q in queries])
    distances = dense.cosine_distance_matrix(query_vectors, index.vectors)
    dense_r = [order(row, descending=False) for row in distances]
    bm25_r = [index.bm25.rank(q.text) for q in queries]
    hybrid_r = [np.array(fusion.rrf([d, b], k=RRF_K)) for d, b in zip(dense_r, bm25_r, strict=True)]
    return Rankings(
        list(queries), {"dense": dense_r, "BM25": bm25_r, "hybrid": hybrid_r}, distances
    )


def dense_ranks(index: Index, queries: Sequence[Query], encoder: Encoder) -> list[int | None]:
    """First-hit ranks under dense retrieval alone (cheaper than :func:`rank_all`)."""
    distances = dense.cosine_distance_matrix(
        encoder.encode([q.text for q in queries]), index.vectors
    )
    rankings = [order(row, descending=False) for row in distances]
    return first_hit_ranks(rankings, relevant_chunks(index.chunks, queries))


def split_by_phrasing(
    ranks: Sequence[int | None], queries: Sequence[Query]
) -> dict[str, list[int | None]]:
    """Regroup per-query ranks by phrasing (``course``, ``ticket``), question order kept."""
    out: dict[str, list[int | None]] = {}
    for r, q in zip(ranks, queries, strict=True):
        out.setdefault(q.phrasing, []).append(r)
    return out


# --- latency ---------------------------------------------------------------------


@dataclass(frozen=True)
class Latency:
    """Per-call wall time of one stage, in milliseconds, over a list of inputs."""

    stage: str
    ms: np.ndarray

    @property
    def median(self) -> float:
        return float(np.median(self.ms))

    @property
    def p90(self) -> float:
        return float(np.percentile(self.ms, 90))


def time_per_call(stage: str, fn: Callable, inputs: Sequence, repeats: int = 3) -> Latency:
    """Time ``fn(x)`` for each input; the best of ``repeats`` runs per input, in ms."""
    fn(inputs[0])  # warm caches and lazy initialisation outside the measurement
    best = []
    for x in inputs:
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn(x)
            runs.append(time.perf_counter() - start)
        best.append(min(runs))
    return Latency(stage, 1000 * np.array(best))


def index_timing(chunks: Sequence[Chunk], sample: int = 128) -> Timing:
    """Model time per chunk, cache bypassed, on an evenly spaced sample of ``chunks``."""
    picks = np.linspace(0, len(chunks) - 1, min(sample, len(chunks))).round().astype(int)
    encoder = Encoder(cache=False)
    encoder.encode(["warm-up"])  # model loading is not indexing
    encoder.encode([chunks[i].text for i in picks], progress=False)
    return encoder.last


def stage_latencies(index: Index, queries: Sequence[Query], encoder: Encoder) -> list[Latency]:
    """Query embedding (uncached), the BM25 scorer and the vector scan, per query."""
    uncached = Encoder(cache=False)
    vectors = encoder.encode([q.text for q in queries])
    return [
        time_per_call("embed query", lambda q: uncached.encode([q.text]), queries, repeats=1),
        time_per_call("BM25 (score + rank)", lambda q: index.bm25.rank(q.text), queries),
        time_per_call(
            "vector scan (distances + rank)",
            lambda i: dense.rank(vectors[i], index.vectors),
            range(len(queries)),
        ),
    ]
