"""The project's single tie-breaking rule: order by score, then by chunk id.

Every ranking in rag_lab (dense, BM25, fused) goes through :func:`order`, so two
chunks with equal scores always come out in index order and a ranking is a pure
function of its scores. Without this, ties would fall wherever the sort
algorithm happened to put them, and Recall@k could change between runs.
"""

from __future__ import annotations

import numpy as np


def order(scores: np.ndarray, *, descending: bool = True) -> np.ndarray:
    """Indices of ``scores`` from best to worst, ties broken by index ascending.

    ``descending=True`` is for similarities (BM25, RRF), ``False`` for distances
    (cosine distance). Scores are compared as float64, which is exact for the
    float32 and float64 scores used here. NaN has no place in an order, so it
    raises ``ValueError`` rather than sinking silently to one end.

    Returns an int64 array, a permutation of ``range(len(scores))``.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {values.shape}")
    if np.isnan(values).any():
        raise ValueError("scores contain NaN")
    # A stable sort keeps equal keys in index order; negating (rather than
    # reversing an ascending sort) keeps that true for the descending case.
    return np.argsort(-values if descending else values, kind="stable")
