"""Late interaction: MaxSim on hand-computed matrices, then the packaged model's token vectors."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.models.token_vectors import LateInteraction, maxsim


def test_maxsim_on_a_hand_computed_example():
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    # Query token 1 best matches d0 (1.0); query token 2 best matches d1 (0.8): 1.8.
    doc = np.array([[1.0, 0.0], [0.6, 0.8], [-1.0, 0.0]])
    assert maxsim(query, doc) == pytest.approx(1.0 + 0.8)
    # One chunk token for both query tokens: 0.6 + 0.8 = 1.4.
    assert maxsim(query, np.array([[0.6, 0.8]])) == pytest.approx(1.4)
    # The sum runs over the query: extra chunk tokens never lower a score.
    assert maxsim(query, np.array([[0.6, 0.8], [0.0, -1.0]])) == pytest.approx(1.4)


def test_maxsim_rejects_empty_or_mismatched_matrices():
    with pytest.raises(ValueError):
        maxsim(np.zeros((0, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError):
        maxsim(np.ones((1, 2)), np.ones((1, 3)))


TEXTS = ["A tensor is an n-dimensional array.", "Paella needs saffron."]


@pytest.fixture(scope="module")
def li(tmp_path_factory):
    return LateInteraction(cache_root=tmp_path_factory.mktemp("tokens"))


@pytest.mark.model
def test_token_vectors_are_unit_rows_one_per_word_piece_with_cls_and_sep(li):
    from rag_lab.models.minilm import count_word_pieces

    for matrix, pieces in zip(li.tokens(TEXTS), count_word_pieces(TEXTS), strict=True):
        assert matrix.shape == (pieces, 384) and matrix.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


@pytest.mark.model
def test_scores_are_maxsim_of_the_token_matrices_and_rank_the_related_text_first(li):
    scores = li.score("what is a tensor", TEXTS)
    query, *docs = li.tokens(["what is a tensor", *TEXTS])
    assert scores.tolist() == [maxsim(query, d) for d in docs]
    assert scores[0] > scores[1]


@pytest.mark.model
def test_the_cache_serves_the_same_matrices_without_the_model(li, monkeypatch):
    first = li.tokens(TEXTS)
    again = LateInteraction(cache_root=li.cache.path.parent)
    monkeypatch.setattr(again, "_compute", None)  # a model call would now fail
    for a, b in zip(first, again.tokens(TEXTS), strict=True):
        np.testing.assert_array_equal(a, b)
