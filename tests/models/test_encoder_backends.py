"""The ONNX Runtime backends against torch, and batching against one text at a time.

Loads the packaged MiniLM and exports it to ONNX once into a temporary cache (a few seconds).
"""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from rag_lab.models import onnx_minilm
from rag_lab.models.encoder import BACKENDS, Encoder
from rag_lab.models.minilm import minilm_fingerprint

pytestmark = pytest.mark.model

TEXTS = [
    "A tensor is an array.",
    "Weight decay shrinks the weights.",
    "Paella needs saffron.",
    "x",
    # Longer than the 256 word-piece window: truncation must agree too.
    "Gradient descent takes a step against the gradient of the loss. " * 40,
    "Dropout zeroes activations at random during training, so that units cannot co-adapt; "
    "at test time every unit is kept.",
]
FLOAT_NOISE = 1e-5
"""Max |Δ| per component allowed between two computations of the same vector."""
ONNX_VS_TORCH = 1e-5
"""Measured: 2.2e-7 over the 912 strategy-E chunks (same float32 graph, other kernels)."""
INT8_MIN_COSINE = 0.97
"""int8 weights move each vector a little: min cosine 0.977 over the 912 strategy-E chunks."""


@pytest.fixture(scope="module")
def onnx_root(tmp_path_factory, monkeypatch_module):
    root = tmp_path_factory.mktemp("cache")
    monkeypatch_module.setenv("RAG_LAB_CACHE", str(root))
    return root


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def encoders(onnx_root):
    return {b: Encoder(backend=b, cache=False) for b in BACKENDS}


def test_onnx_matches_torch_within_float_noise(encoders):
    torch_vecs = encoders["torch"].encode(TEXTS)
    onnx_vecs = encoders["onnx"].encode(TEXTS)
    assert onnx_vecs.shape == (len(TEXTS), 384) and onnx_vecs.dtype == np.float32
    assert np.abs(onnx_vecs - torch_vecs).max() < ONNX_VS_TORCH


def test_int8_is_close_to_fp32_but_not_equal(encoders):
    fp32 = encoders["onnx"].encode(TEXTS)
    int8 = encoders["onnx-int8"].encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    assert (fp32 * int8).sum(axis=1).min() > INT8_MIN_COSINE
    assert not np.array_equal(fp32, int8)


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_order_and_batching_do_not_change_vectors(encoders, backend):
    enc = encoders[backend]
    batched = enc.encode(TEXTS)
    order = list(range(len(TEXTS)))
    random.Random(16).shuffle(order)
    shuffled = enc.encode([TEXTS[i] for i in order])
    one_by_one = np.stack([enc.encode([t])[0] for t in TEXTS])
    assert np.abs(shuffled - batched[order]).max() < FLOAT_NOISE
    assert np.abs(one_by_one - batched).max() < FLOAT_NOISE


def test_each_backend_has_its_own_fingerprint_and_cache(encoders, tmp_path):
    keys = {b: e.fingerprint.key for b, e in encoders.items()}
    assert len(set(keys.values())) == len(BACKENDS)
    # torch's key is the one every cache and index stamp was written with before backends.
    assert encoders["torch"].fingerprint == minilm_fingerprint()
    assert encoders["torch"].fingerprint.key == "5bc39353b99cc006"
    assert "backend" not in encoders["torch"].fingerprint.fields()
    for backend in ("onnx", "onnx-int8"):
        fp = encoders[backend].fingerprint
        assert fp.backend == backend and len(fp.graph_sha256) == 64
    paths = {Encoder(backend=b, cache_root=tmp_path).cache.path for b in BACKENDS}
    assert len(paths) == len(BACKENDS)


def test_the_export_is_reused(encoders, monkeypatch):
    def refuse(*args):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_minilm, "_export", refuse)
    monkeypatch.setattr(onnx_minilm, "_quantize", refuse)
    for backend in ("onnx", "onnx-int8"):
        again = Encoder(backend=backend, cache=False)
        assert again.fingerprint == encoders[backend].fingerprint


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend must be one of"):
        Encoder(backend="tensorrt")


def test_onnx_encoding_does_not_import_torch(encoders, onnx_root):
    # A fresh interpreter: the graph is already exported, so only onnxruntime is needed.
    code = (
        "import sys; from rag_lab.models.encoder import Encoder; "
        "v = Encoder(backend='onnx', cache=False).encode(['a tensor']); "
        "assert v.shape == (1, 384); print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
