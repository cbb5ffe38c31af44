"""The encoder and its cache (loads the packaged MiniLM: a few seconds)."""

from __future__ import annotations

import dataclasses
import sqlite3

import numpy as np
import pytest

from rag_lab.models.encoder import EmbeddingCache, Encoder
from rag_lab.models.minilm import minilm_fingerprint

pytestmark = pytest.mark.model

TEXTS = ["A tensor is an array.", "Weight decay shrinks the weights.", "Paella needs saffron."]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return Encoder(cache_root=tmp_path_factory.mktemp("emb"))


def test_vectors_are_unit_float32_of_the_model_dimension(encoder):
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Related sentences are closer than unrelated ones: the model really ran.
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] - 0.5
    assert len({v.tobytes() for v in vectors}) == 3


def test_the_cache_serves_the_same_vectors_without_the_model(encoder):
    first = encoder.encode(TEXTS)
    again = encoder.encode(list(reversed(TEXTS)))
    assert encoder.last.computed == 0 and encoder.last.texts == 3
    np.testing.assert_array_equal(again, first[::-1])


def test_duplicates_are_embedded_once(tmp_path):
    enc = Encoder(cache_root=tmp_path)
    vectors = enc.encode(["same text", "same text", "other"])
    assert enc.last.computed == 2
    np.testing.assert_array_equal(vectors[0], vectors[1])


def test_a_cache_written_for_another_model_is_refused(tmp_path):
    fp = minilm_fingerprint()
    cache = EmbeddingCache(fp, tmp_path)
    with sqlite3.connect(cache.path) as db:
        db.execute("UPDATE meta SET value = 'another model' WHERE key = 'fingerprint'")
    with pytest.raises(RuntimeError, match="written for another model"):
        EmbeddingCache(fp, tmp_path)


def test_a_different_fingerprint_gets_a_different_cache(tmp_path):
    fp = minilm_fingerprint()
    other = dataclasses.replace(fp, max_seq_length=128)
    assert EmbeddingCache(fp, tmp_path).path != EmbeddingCache(other, tmp_path).path
    assert fp.key != other.key


def test_empty_input(encoder):
    assert encoder.encode([]).shape == (0, 384)


def test_unnormalized_vectors_are_cached_apart_and_normalise_to_the_unit_ones(tmp_path):
    enc = Encoder(cache_root=tmp_path)
    raw = enc.encode_unnormalized(TEXTS)
    norms = np.linalg.norm(raw, axis=1)
    assert not np.allclose(norms, 1.0, atol=1e-3)  # really before the Normalize layer
    np.testing.assert_allclose(raw / norms[:, None], enc.encode(TEXTS), atol=1e-6)
    files = sorted(p.name for p in tmp_path.glob("*.sqlite"))
    assert len(files) == 2  # one cache per fingerprint: the unit vectors never mix with these
    # A second encoder reads them back from disk, byte for byte, without the model.
    again = Encoder(cache_root=tmp_path)
    np.testing.assert_array_equal(again.encode_unnormalized(TEXTS), raw)
    assert again._model is None
