"""Second-stage reordering: rescore the top n of a first-stage ranking, keep the rest.

Nogueira & Cho (2019), *Passage Re-ranking with BERT*: a cheap retriever proposes a short
list, and a costlier scorer (a cross-encoder reading query and passage together, or
late interaction over token vectors) reorders it. Only the top :data:`TOP_N` are
reordered; everything below keeps its first-stage order, so a first hit beyond rank n
stays exactly where it was and Recall@k for k > n does not change. Ties in the new scores
fall back to first-stage order. The scorers themselves live in :mod:`rag_lab.models`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rag_lab.questions import Query
from rag_lab.ranking import order

TOP_N = 25
"""Candidates rescored: the chapter reranks the hybrid's top 25."""

Scorer = Callable[[str, Sequence[str]], np.ndarray]
"""``(query, texts) -> scores``, one float per text, higher is better."""


def rerank(ranking: Sequence[int], scores: Sequence[float], n: int = TOP_N) -> np.ndarray:
    """Reorder the first ``n`` ids of ``ranking`` by ``scores``; the rest keep their place.

    ``scores[i]`` belongs to ``ranking[i]`` for ``i < min(n, len(ranking))``. Higher scores
    come first; equal scores keep first-stage order (:func:`rag_lab.ranking.order`). A
    ranking shorter than ``n`` is reordered whole.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ranking = np.asarray(ranking, dtype=np.int64)
    top = ranking[:n]
    if len(scores) != len(top):
        raise ValueError(f"{len(scores)} scores for {len(top)} candidates")
    return np.concatenate([top[order(np.asarray(scores, dtype=np.float64))], ranking[n:]])


def top_texts(
    rankings: Sequence[Sequence[int]], texts: Sequence[str], n: int = TOP_N
) -> list[list[str]]:
    """The ``texts`` of each ranking's first ``n`` positions: the candidates of a second stage."""
    return [[texts[i] for i in ranking[:n]] for ranking in rankings]


def rerank_all(
    rankings: Sequence[Sequence[int]],
    queries: Sequence[Query],
    texts: Sequence[str],
    score: Scorer,
    n: int = TOP_N,
) -> list[np.ndarray]:
    """:func:`rerank` every query's ranking, scoring its top ``n`` chunk ``texts`` with ``score``.

    ``rankings[i]`` holds positions into ``texts`` for ``queries[i]``.
    """
    candidates = top_texts(rankings, texts, n)
    return [
        rerank(ranking, score(query.text, c), n)
        for ranking, query, c in zip(rankings, queries, candidates, strict=True)
    ]
