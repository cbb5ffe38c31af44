"""dense: cosine distance on unit vectors, its checks, and ranking by it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rag_lab.dense import cosine_distance_matrix, cosine_distances, rank

# Unit vectors in the plane: distance = 1 - cos(angle).
VECTORS = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])


def test_hand_computed_distances():
    q = np.array([0.6, 0.8])
    # 1 - 0.6, 1 - 0.8, 1 + 0.6, 1 - (0.36 + 0.64), 1 - 0.8
    expected = [0.4, 0.2, 1.6, 0.0, 0.2]
    np.testing.assert_allclose(cosine_distances(q, VECTORS), expected, atol=1e-15)


def test_rank_nearest_first_ties_by_chunk_order():
    ranking, distances = rank(np.array([0.6, 0.8]), VECTORS)
    assert ranking.tolist() == [3, 1, 4, 0, 2]  # chunks 1 and 4 are the same vector
    np.testing.assert_allclose(distances, [0.4, 0.2, 1.6, 0.0, 0.2], atol=1e-15)


def test_batch_rows_equal_single_queries():
    rng = np.random.default_rng(0)
    queries = _unit(rng.normal(size=(7, 384))).astype(np.float32)
    chunks = _unit(rng.normal(size=(50, 384))).astype(np.float32)
    batch = cosine_distance_matrix(queries, chunks)
    assert batch.shape == (7, 50)
    for i, q in enumerate(queries):
        np.testing.assert_allclose(batch[i], cosine_distances(q, chunks), rtol=0, atol=1e-12)


def test_float32_embeddings_pass_the_norm_check():
    rng = np.random.default_rng(1)
    chunks = _unit(rng.normal(size=(100, 384))).astype(np.float32)
    assert cosine_distances(chunks[0], chunks)[0] == pytest.approx(0.0, abs=1e-6)


def test_unnormalised_vectors_rejected_with_the_deviation():
    with pytest.raises(ValueError, match=r"vectors are not L2-normalised: .* = 1 "):
        cosine_distances(np.array([1.0, 0.0]), np.array([[2.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"queries are not L2-normalised: .* = 0\.5 "):
        cosine_distances(np.array([0.5, 0.0]), VECTORS)


def test_zero_vector_rejected():
    with pytest.raises(ValueError, match="not L2-normalised"):
        cosine_distances(np.array([1.0, 0.0]), np.array([[0.0, 0.0]]))


def test_shape_errors():
    with pytest.raises(ValueError, match="dimension mismatch"):
        cosine_distances(np.array([1.0, 0.0, 0.0]), VECTORS)
    with pytest.raises(ValueError, match="1-D"):
        cosine_distances(VECTORS, VECTORS)
    with pytest.raises(ValueError, match=r"\(n, d\)"):
        cosine_distance_matrix(VECTORS, VECTORS[0])


nonzero_vectors = arrays(
    np.float64, st.tuples(st.integers(1, 12), st.just(5)), elements=st.floats(-10, 10)
).filter(lambda m: (np.linalg.norm(m, axis=1) > 1e-3).all())


@given(nonzero_vectors, nonzero_vectors.map(lambda m: m[0]))
def test_equals_one_minus_cosine(chunks, query):
    cos = chunks @ query / (np.linalg.norm(chunks, axis=1) * np.linalg.norm(query))
    distances = cosine_distances(_unit(query), _unit(chunks))
    np.testing.assert_allclose(distances, 1 - cos, atol=1e-12)
    assert ((distances >= -1e-12) & (distances <= 2 + 1e-12)).all()


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)
