"""Text to unit vectors with the packaged all-MiniLM-L6-v2, cached on disk by model and text.

The cache is keyed by the model's :class:`~rag_lab.models.Fingerprint` (weights sha256,
pooling, normalisation, window, dimensions) and by the sha256 of each text, so a re-run
costs nothing and vectors from one model can never be served for another. Each
fingerprint has its own SQLite file, which also records the full fingerprint and is
refused if it disagrees.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import TqdmWarning, tqdm

from rag_lab import paths
from rag_lab.models import Fingerprint, minilm_fingerprint, minilm_path

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


class EmbeddingCache:
    """Vectors by text sha256 for one model fingerprint, in ``<root>/<key>.sqlite``."""

    def __init__(self, fingerprint: Fingerprint, root: Path | None = None) -> None:
        root = root or paths.cache_dir() / "embeddings"
        root.mkdir(parents=True, exist_ok=True)
        self.fingerprint = fingerprint
        self.path = root / f"{fingerprint.key}.sqlite"
        self._db = sqlite3.connect(self.path)
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (sha TEXT PRIMARY KEY, vec BLOB)")
        stamp = json.dumps(fingerprint.__dict__, sort_keys=True)
        row = self._db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None:
            with self._db:
                self._db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (stamp,))
        elif row[0] != stamp:
            raise RuntimeError(
                f"{self.path} was written for another model ({row[0]}); refusing to read it."
            )

    def get(self, shas: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(shas), 500):  # SQLite caps the number of bound parameters
            part = list(shas[i : i + 500])
            marks = ",".join("?" * len(part))
            for sha, blob in self._db.execute(
                f"SELECT sha, vec FROM vectors WHERE sha IN ({marks})", part
            ):
                found[sha] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, items: dict[str, np.ndarray]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                [
                    (sha, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                    for sha, v in items.items()
                ],
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


class Encoder:
    """all-MiniLM-L6-v2, offline, returning L2-normalised float32 vectors.

    >>> enc = Encoder()                                   # doctest: +SKIP
    >>> enc.encode(["a tensor", "a matrix"]).shape        # doctest: +SKIP
    (2, 384)
    """

    def __init__(
        self,
        *,
        cache: bool = True,
        cache_root: Path | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.fingerprint = minilm_fingerprint()
        self.batch_size = batch_size
        self.cache = EmbeddingCache(self.fingerprint, cache_root) if cache else None
        self.last = Timing(0, 0, 0.0)
        self._model = None

    @property
    def model(self):
        """The SentenceTransformer, loaded on first use from the packaged folder."""
        if self._model is None:
            with warnings.catch_warnings():
                # sentence-transformers imports tqdm.autonotebook, which warns in a kernel
                # without ipywidgets; our bars are plain text on purpose.
                warnings.filterwarnings("ignore", category=TqdmWarning)
                from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # the weights load from disk in a blink
            self._model = SentenceTransformer(str(minilm_path()), device="cpu")
            self._model.max_seq_length = self.fingerprint.max_seq_length
        return self._model

    def encode_unnormalized(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled vectors *before* the model's Normalize layer (never cached).

        Only for showing what normalisation buys: these norms vary from text to text,
        so a distance between them mixes direction with length.
        """
        from sentence_transformers import SentenceTransformer

        transformer, pooling = self.model[0], self.model[1]
        raw = SentenceTransformer(modules=[transformer, pooling], device="cpu")
        return raw.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True)

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """Vectors for ``texts``, shape ``(len(texts), 384)``; cached texts skip the model.

        ``progress`` shows a bar on long work (None: when more than :data:`PROGRESS_FROM`
        texts go through the model).
        """
        shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        known = self.cache.get(shas) if self.cache is not None else {}
        # Length order keeps padding small; the sha breaks ties so the order is fixed.
        pending = {sha: t for sha, t in zip(shas, texts, strict=True) if sha not in known}
        todo = sorted(pending.items(), key=lambda item: (len(item[1]), item[0]))
        started = time.perf_counter()
        if todo:
            fresh = self._compute([t for _, t in todo], progress)
            computed = dict(zip([sha for sha, _ in todo], fresh, strict=True))
            if self.cache is not None:
                self.cache.put(computed)
            known = {**known, **computed}
        self.last = Timing(len(texts), len(todo), time.perf_counter() - started)
        dim = self.fingerprint.dimensions
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([known[sha] for sha in shas]).astype(np.float32, copy=False)

    def _compute(self, texts: list[str], progress: bool | None) -> np.ndarray:
        show = len(texts) > PROGRESS_FROM if progress is None else progress
        out = []
        bar = tqdm(total=len(texts), desc="embedding", unit="text", disable=not show)
        for i in range(0, len(texts), self.batch_size):
            batch = texts[i : i + self.batch_size]
            vecs = self.model.encode(
                batch,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            out.append(vecs.astype(np.float32))
            bar.update(len(batch))
        bar.close()
        return np.concatenate(out)
