"""Vectors on disk by model fingerprint and text sha256, so a re-run costs no model time.

Each fingerprint has its own SQLite file, which also records the full fingerprint and is
refused if it disagrees, so vectors from one model can never be served for another. The
sentence vectors of :mod:`rag_lab.models.encoder` and the token matrices of
:mod:`rag_lab.models.token_vectors` share this code, in separate folders.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag_lab import paths
from rag_lab.checksums import sha256_text
from rag_lab.models.minilm import Fingerprint


class EmbeddingCache:
    """Vectors by text sha256 for one model fingerprint, in ``<root>/<key>.sqlite``.

    Several processes may share the file (every checkout on a machine uses one cache): SQLite
    serialises their writes, and a writer waits up to :data:`BUSY_S` for another. A file that
    is not a readable SQLite database is moved aside (``<key>.sqlite.damaged``) and started
    anew; an entry whose bytes are not whole rows of finite float32 reads as missing, so it is
    computed again and replaced. A cache that fails once (read-only, full, its folder deleted
    or replaced by a file) is given up for the rest of the run with one warning
    (:meth:`give_up`): every document after it would fail the same way.
    """

    def __init__(self, fingerprint: Fingerprint, root: Path | None = None) -> None:
        root = root or paths.cache_dir() / "embeddings"
        root.mkdir(parents=True, exist_ok=True)
        self.fingerprint = fingerprint
        self.path = root / f"{fingerprint.key}.sqlite"
        self.usable = True
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as err:
            if isinstance(err, sqlite3.OperationalError):  # locked, read-only, no space: facts
                raise
            aside = self.path.with_name(self.path.name + ".damaged")
            os.replace(self.path, aside)
            warn(f"{self.path} was damaged ({err}); moved it to {aside.name}, starting anew")
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_S)
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("CREATE TABLE IF NOT EXISTS vectors (sha TEXT PRIMARY KEY, vec BLOB)")
        stamp = json.dumps(self.fingerprint.fields(), sort_keys=True)
        row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None:
            with db:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('fingerprint', ?)", (stamp,))
            row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row[0] != stamp:
            db.close()
            raise RuntimeError(
                f"{self.path} was written for another model ({row[0]}); refusing to read it."
            )
        return db

    def get(self, shas: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored arrays of ``shas`` that pass the checks; the others are missing."""
        width = self.fingerprint.dimensions * 4
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(shas), 500):  # SQLite caps the number of bound parameters
            part = list(shas[i : i + 500])
            marks = ",".join("?" * len(part))
            for sha, blob in self._db.execute(
                f"SELECT sha, vec FROM vectors WHERE sha IN ({marks})", part
            ):
                if not isinstance(blob, bytes) or not blob or len(blob) % width:
                    continue
                vec = np.frombuffer(blob, dtype=np.float32)
                if np.isfinite(vec).all():
                    found[sha] = vec
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

    def give_up(self, err: BaseException) -> None:
        """Stop using this cache for the rest of the run, saying why once on stderr."""
        if not self.usable:
            return
        self.usable = False
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        if not self.path.parent.is_dir():  # SQLite says "readonly database" for this
            why = f"its folder {self.path.parent} is gone"
        else:
            why = " ".join(str(err).split())
        _unusable(self.path, why)


BUSY_S = 60.0
"""How long a writer waits for another process writing the same cache file."""


def warn(message: str) -> None:
    """One line on stderr: the cache is a courtesy, so its trouble is said, never raised."""
    print(f"warning: {message}", file=sys.stderr)


def _unusable(where: Path, why: str) -> None:
    """The one warning of a run for a cache that cannot be used (:func:`paths.warn_cache`)."""
    paths.warn_cache(
        where,
        f"the embedding cache in {where} cannot be used ({why}); running without it, which "
        f"is slower, never wrong (set ${paths.CACHE_ENV} to a writable folder)",
    )


def open_cache(fingerprint: Fingerprint, root: Path | None = None) -> EmbeddingCache | None:
    """The cache, or None with a warning on stderr when it cannot be used (read-only, full,
    locked): a run without a cache is slower, never wrong, so it is no reason to stop."""
    try:
        return EmbeddingCache(fingerprint, root)
    except (OSError, sqlite3.Error) as err:
        where = root or paths.cache_dir() / "embeddings"
        why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        if isinstance(err, (FileExistsError, NotADirectoryError)):
            why = f"{err.filename}: a file where a folder should be"
        _unusable(where, " ".join(why.split()))
        return None


def through_cache(
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    compute: Callable[[list[str]], Sequence[np.ndarray]],
) -> tuple[list[np.ndarray], int]:
    """Each text's stored array, computing only the texts the cache lacks (each once).

    Texts go to ``compute`` in length order, so batches pad little; the sha breaks ties,
    so the batches are the same on every run. Returns the arrays in ``texts`` order (as
    stored: flat float32) and how many texts went through ``compute``. A cache that fails
    to read or write mid-run (its folder deleted, the disk full) is given up with one
    warning (:meth:`EmbeddingCache.give_up`): the arrays are computed all the same.
    """
    shas = [sha256_text(t) for t in texts]
    known: dict[str, np.ndarray] = {}
    if cache is not None and not cache.usable:
        cache = None
    if cache is not None:
        try:
            known = cache.get(shas)
        except (OSError, sqlite3.Error) as err:
            cache.give_up(err)
            cache = None
    pending = {sha: t for sha, t in zip(shas, texts, strict=True) if sha not in known}
    todo = sorted(pending.items(), key=lambda item: (len(item[1]), item[0]))
    if todo:
        fresh = dict(zip([sha for sha, _ in todo], compute([t for _, t in todo]), strict=True))
        if cache is not None:
            try:
                cache.put(fresh)
            except (OSError, sqlite3.Error) as err:
                cache.give_up(err)
        known = {**known, **fresh}
    return [known[sha] for sha in shas], len(todo)
