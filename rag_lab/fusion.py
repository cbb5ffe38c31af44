"""Reciprocal rank fusion of several rankings of the same chunks, and the score fusion it replaces.

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
appearance: reading list 0 front to back, then list 1, and so on. (Fractions are
slow, so :func:`rrf` sorts by float sums first and recomputes exactly only the runs of
ids whose float sums lie within :data:`NEAR` of each other: the float error of a sum is
some 1e-17, so no other pair can be misordered.)
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from rag_lab.ranking import order

NEAR = 1e-12
"""Float sums closer than this are compared exactly (their rounding error is ~1e-17)."""


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[int]:
    """Ids of all input rankings, by fused RRF score descending, ties by first appearance.

    ``lists`` are rankings (best first) of chunk ids, possibly of different
    lengths; each must list an id at most once. ``k`` >= 0 damps the weight of
    the top ranks (60 in the paper and here). The result holds each id of the
    union exactly once.
    """
    _check(lists, k)
    approx: dict[int, float] = {}
    ranks: dict[int, list[int]] = {}
    for ranking in lists:
        for r, doc in enumerate(ranking, start=1):
            approx[doc] = approx.get(doc, 0.0) + 1.0 / (k + r)
            ranks.setdefault(doc, []).append(k + r)
    first = {doc: i for i, doc in enumerate(approx)}  # dicts keep first-appearance order
    by_float = sorted(approx, key=approx.__getitem__, reverse=True)  # stable: ties keep it
    out: list[int] = []
    start = 0
    while start < len(by_float):
        stop = start + 1
        while stop < len(by_float) and approx[by_float[stop - 1]] - approx[by_float[stop]] < NEAR:
            stop += 1
        run = by_float[start:stop]
        if len(run) > 1:
            exact = {doc: sum(Fraction(1, d) for d in ranks[doc]) for doc in run}
            run.sort(key=lambda doc: (-exact[doc], first[doc]))
        out += run
        start = stop
    return out


def rrf_scores(lists: Sequence[Sequence[int]], k: int = 60) -> dict[int, float]:
    """Fused RRF score per id, in first-appearance order.

    Each float is the exact rational sum rounded once, so it does not depend on
    the order of ``lists``.
    """
    return {doc: float(score) for doc, score in _exact_scores(lists, k).items()}


def _check(lists: Sequence[Sequence[int]], k: int) -> None:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    for i, ranking in enumerate(lists):
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"ranking {i} lists an id more than once")


def _exact_scores(lists: Sequence[Sequence[int]], k: int) -> dict[int, Fraction]:
    _check(lists, k)
    scores: dict[int, Fraction] = {}
    for ranking in lists:
        for r, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0) + Fraction(1, k + r)
    return scores


# --- score fusion: the alternative the chapter rejects ----------------------------------------

NORMALISERS = ("min-max", "z-score")
"""How each system's scores are put on one scale before a convex combination (Bruch, Gai &
Ingber, *An Analysis of Fusion Functions for Hybrid Retrieval*, ACM TOIS 2023)."""


def normalise(scores: np.ndarray, how: str) -> np.ndarray:
    """One query's scores over the chunks, on a common scale.

    ``min-max`` maps the best chunk to 1 and the worst to 0, ``z-score`` subtracts the mean
    and divides by the standard deviation. Both are per query, which is what the chapter
    objects to: the scale, and so the weight a system gets, depends on how good this query's
    best hit happened to be. Constant scores (a query sharing no term with any chunk, for
    BM25) carry no preference and map to zeros.

    >>> normalise(np.array([2.0, 1.0, 0.0]), "min-max").tolist()
    [1.0, 0.5, 0.0]
    >>> normalise(np.array([3.0, 3.0]), "z-score").tolist()
    [0.0, 0.0]
    """
    values = np.asarray(scores, dtype=np.float64)
    if how == "min-max":
        low, span = values.min(), np.ptp(values)
        return (values - low) / span if span > 0 else np.zeros_like(values)
    if how == "z-score":
        sd = values.std()
        return (values - values.mean()) / sd if sd > 0 else np.zeros_like(values)
    raise ValueError(f"normalisation is one of {', '.join(NORMALISERS)}, not {how!r}")


def convex(
    similarity: np.ndarray, bm25: np.ndarray, weight: float, how: str = "min-max"
) -> np.ndarray:
    """The chunks of one query ranked by ``weight · dense + (1 − weight) · BM25``, each
    normalised by ``how``; ``similarity`` is dense's (1 − cosine distance). Ties by chunk id
    (:func:`rag_lab.ranking.order`)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the weight of dense is in [0, 1], got {weight}")
    fused = weight * normalise(similarity, how) + (1.0 - weight) * normalise(bm25, how)
    return order(fused)
