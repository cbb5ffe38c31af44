"""Dense retrieval: cosine distance between L2-normalised embeddings.

For unit vectors cosine similarity is the dot product, so the distance is
``1 - q·c`` and lies in [0, 2] (0 = same direction). The vectors are expected to
be normalised already (sentence-transformers with ``normalize_embeddings=True``
for all-MiniLM-L6-v2); this is checked, never silently repaired, because
re-normalising here would hide an embedding pipeline that disagrees with the
index.

Products are accumulated in float64 from the float32 inputs: at float32
precision the BLAS summation order (which depends on batch shape) can flip the
last bit of a distance and with it the order of near-ties.
"""

from __future__ import annotations

import numpy as np

from rag_lab.ranking import order

NORM_TOLERANCE = 1e-3
"""Largest accepted ``| ||v|| - 1 |``; float32 embeddings sit well inside it."""


def cosine_distances(query: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Cosine distance ``1 - q·c`` from one unit query (d,) to unit chunks (n, d).

    Returns a float64 array of shape (n,), values in [0, 2] up to rounding.
    Raises ``ValueError`` if shapes disagree or a norm is off 1 by more than
    ``NORM_TOLERANCE``.
    """
    query = np.asarray(query)
    if query.ndim != 1:
        raise ValueError(f"query must be 1-D, got shape {query.shape}")
    return cosine_distance_matrix(query[np.newaxis, :], vectors)[0]


def cosine_distance_matrix(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Cosine distances from unit queries (m, d) to unit chunks (n, d), shape (m, n).

    Row ``i`` is ``cosine_distances(queries[i], vectors)``. Same checks and units.
    """
    queries = np.asarray(queries, dtype=np.float64)
    vectors = np.asarray(vectors, dtype=np.float64)
    if queries.ndim != 2 or vectors.ndim != 2:
        raise ValueError(
            f"expected queries (m, d) and vectors (n, d), got {queries.shape} and {vectors.shape}"
        )
    if queries.shape[1] != vectors.shape[1]:
        raise ValueError(
            f"dimension mismatch: queries have d={queries.shape[1]}, vectors d={vectors.shape[1]}"
        )
    _check_unit(queries, "queries")
    _check_unit(vectors, "vectors")
    return 1.0 - queries @ vectors.T


def rank(query: np.ndarray, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chunks nearest first for one unit query: ``(order, distances)``.

    ``order`` indexes ``vectors``; equal distances keep chunk order
    (see :func:`rag_lab.ranking.order`). ``distances`` is unsorted, one per chunk.
    """
    distances = cosine_distances(query, vectors)
    return order(distances, descending=False), distances


def nearest(query: np.ndarray, vectors: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` chunks nearest one unit query, nearest first, as ``(position, distance)``:
    the one nearest-neighbour scan behind every retriever (in memory and on disk).

    >>> nearest(np.array([1.0, 0.0]), np.array([[0.0, 1.0], [1.0, 0.0], [0.6, 0.8]]), 2)
    [(1, 0.0), (2, 0.4)]
    """
    ranking, distances = rank(query, vectors)
    return [(int(i), float(distances[i])) for i in ranking[:k]]


def _check_unit(matrix: np.ndarray, name: str) -> None:
    if matrix.shape[0] == 0:
        return
    deviation = float(np.abs(np.linalg.norm(matrix, axis=1) - 1.0).max())
    if not deviation <= NORM_TOLERANCE:  # also catches NaN
        raise ValueError(
            f"{name} are not L2-normalised: max | ||v|| - 1 | = {deviation:.3g} "
            f"> {NORM_TOLERANCE:g}"
        )
