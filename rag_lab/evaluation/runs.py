"""Runs: every query of a question set through one or more first-stage systems, as ranks.

A run is the full ranking (chunk positions, best first) of each query for each system;
its first-hit ranks (:func:`rag_lab.metrics.first_hit_ranks`) are what every table of
notebooks 03–06 is computed from. The systems are the chapter's: ``dense`` (cosine over
all-MiniLM-L6-v2 vectors), ``BM25`` and ``hybrid`` (reciprocal rank fusion of the two).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rag_lab import dense, search
from rag_lab.metrics import Ranks, first_hit_ranks, relevant_chunks
from rag_lab.questions import Query
from rag_lab.ranking import order
from rag_lab.search import ChunkIndex, TextEncoder, rank_one

RRF_K = search.RRF_K
"""Reciprocal rank fusion's damping constant (the paper's and the chapter's)."""


@dataclass(frozen=True)
class Rankings:
    """Full rankings (chunk positions, best first) of each system for a list of queries."""

    queries: list[Query]
    by_system: dict[str, list[np.ndarray]]
    distances: np.ndarray
    """Cosine distances, queries × chunks."""

    def ranks(self, index: ChunkIndex) -> dict[str, list[int | None]]:
        """First-hit rank per query for each system (a hit holds the needle whole)."""
        relevant = relevant_chunks(index.chunks, self.queries)
        return {name: first_hit_ranks(r, relevant) for name, r in self.by_system.items()}


def rank_all(index: ChunkIndex, queries: Sequence[Query], encoder: TextEncoder) -> Rankings:
    """Dense, BM25 and hybrid for every query.

    The hybrid is RRF of dense's full ranking and of the chunks BM25 *retrieved*: those
    with a positive score. A chunk sharing no term with the query scores 0 and was not
    found by BM25; fusing BM25's full ranking would still give it a rank, ordered by chunk
    id, and so extra credit to the chunks early in the corpus. (BM25's own row keeps its
    full ranking, zeros last in chunk order, so that every query has a rank for every chunk.)
    """
    query_vectors = encoder.encode([q.text for q in queries])
    distances = dense.cosine_distance_matrix(query_vectors, index.vectors)
    by_system: dict[str, list[np.ndarray]] = {"dense": [], "BM25": [], "hybrid": []}
    for q, row in zip(queries, distances, strict=True):
        for name, ranking in rank_one(index, q.text, row).items():
            by_system[name].append(ranking)
    return Rankings(list(queries), by_system, distances)


def dense_ranks(
    index: ChunkIndex,
    queries: Sequence[Query],
    encoder: TextEncoder,
    fold: Callable[[str], str] | None = None,
) -> list[int | None]:
    """First-hit ranks under dense retrieval alone (cheaper than :func:`rank_all`);
    relevance is :func:`rag_lab.metrics.relevant_chunks` with its ``fold``."""
    distances = dense.cosine_distance_matrix(
        encoder.encode([q.text for q in queries]), index.vectors
    )
    rankings = [order(row, descending=False) for row in distances]
    return first_hit_ranks(rankings, relevant_chunks(index.chunks, queries, fold))


def split_by_phrasing(ranks: Ranks, queries: Sequence[Query]) -> dict[str, list[int | None]]:
    """Regroup per-query ranks by phrasing (``course``, ``ticket``), question order kept."""
    out: dict[str, list[int | None]] = {}
    for r, q in zip(ranks, queries, strict=True):
        out.setdefault(q.phrasing, []).append(r)
    return out
