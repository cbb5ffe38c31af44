"""Vectors on disk by model fingerprint and text sha256, so a re-run costs no model time.

Each fingerprint has its own SQLite file, which also records the full fingerprint and is
refused if it disagrees, so vectors from one model can never be served for another. The
sentence vectors of :mod:`rag_lab.models.encoder` and the token matrices of
:mod:`rag_lab.models.token_vectors` share this code, in separate folders.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag_lab import paths
from rag_lab.checksums import sha256_text
from rag_lab.models.minilm import Fingerprint


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
        stamp = json.dumps(fingerprint.fields(), sort_keys=True)
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


def open_cache(fingerprint: Fingerprint, root: Path | None = None) -> EmbeddingCache | None:
    """The cache, or None with a warning on stderr when it cannot be used (read-only, full,
    damaged): a run without a cache is slower, never wrong, so it is no reason to stop."""
    try:
        return EmbeddingCache(fingerprint, root)
    except (OSError, sqlite3.Error) as err:
        where = root or paths.cache_dir()
        print(
            f"warning: the embedding cache in {where} cannot be used ({err}); running "
            "without it (set $RAG_LAB_CACHE to a writable folder)",
            file=sys.stderr,
        )
        return None


def through_cache(
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    compute: Callable[[list[str]], Sequence[np.ndarray]],
) -> tuple[list[np.ndarray], int]:
    """Each text's stored array, computing only the texts the cache lacks (each once).

    Texts go to ``compute`` in length order, so batches pad little; the sha breaks ties,
    so the batches are the same on every run. Returns the arrays in ``texts`` order (as
    stored: flat float32) and how many texts went through ``compute``.
    """
    shas = [sha256_text(t) for t in texts]
    known = cache.get(shas) if cache is not None else {}
    pending = {sha: t for sha, t in zip(shas, texts, strict=True) if sha not in known}
    todo = sorted(pending.items(), key=lambda item: (len(item[1]), item[0]))
    if todo:
        fresh = dict(zip([sha for sha, _ in todo], compute([t for _, t in todo]), strict=True))
        if cache is not None:
            cache.put(fresh)
        known = {**known, **fresh}
    return [known[sha] for sha in shas], len(todo)
