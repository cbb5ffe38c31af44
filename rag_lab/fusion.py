"""Reciprocal rank fusion of several rankings of the same chunks.

Cormack, Clarke & Büttcher (SIGIR 2009), *Reciprocal Rank Fusion outperforms
Condorcet and individual Rank Learning Methods*::

    score(id) = sum over the input rankings that contain id of 1 / (k + r)

with ``r`` the 1-based rank of ``id`` in that ranking; an id missing from a
ranking gets nothing from it. Only ranks enter, never the systems' scores, which
is the point: BM25 scores and cosine distances need no common scale.

Ties are decided exactly. Each ``1 / (k + r)`` is a ``Fraction``, so two ids tie
if and only if their true sums are equal, whatever the order of the lists; with
floats, ranks (1, 3, 2) and (2, 1, 3) can sum to values one ulp apart and the
"tie" would be broken by rounding. Equal scores are then ordered by first
appearance: reading list 0 front to back, then list 1, and so on.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[int]:
    """Ids of all input rankings, by fused RRF score descending, ties by first appearance.

    ``lists`` are rankings (best first) of chunk ids, possibly of different
    lengths; each must list an id at most once. ``k`` >= 0 damps the weight of
    the top ranks (60 in the paper and here). The result holds each id of the
    union exactly once.
    """
    scores = _exact_scores(lists, k)
    # sorted() is stable and the dict keeps first-appearance order.
    return sorted(scores, key=scores.__getitem__, reverse=True)


def rrf_scores(lists: Sequence[Sequence[int]], k: int = 60) -> dict[int, float]:
    """Fused RRF score per id, in first-appearance order.

    Each float is the exact rational sum rounded once, so it does not depend on
    the order of ``lists``.
    """
    return {doc: float(score) for doc, score in _exact_scores(lists, k).items()}


def _exact_scores(lists: Sequence[Sequence[int]], k: int) -> dict[int, Fraction]:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    scores: dict[int, Fraction] = {}
    for i, ranking in enumerate(lists):
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"ranking {i} lists an id more than once")
        for r, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0) + Fraction(1, k + r)
    return scores
