"""Where a persistent index keeps its documents, chunks and vectors: a small interface, and SQLite.

:class:`Store` is everything the indexer and the retriever ask of storage, so a server-grade
database can replace :class:`SQLiteStore` without touching them. Its one promise beyond
reading and writing: a document is replaced whole or not at all. :meth:`Store.replacing`
opens a transaction in which the old chunks are dropped, the new ones written batch by
batch, and the document's record set last; anything that stops it before
:meth:`DocumentWriter.finish` (an exception, Ctrl-C, a killed process) leaves the previous
state, never half a document.

Never writing into a file that is not ours: an index is marked in its SQLite header
(``application_id`` :data:`APPLICATION_ID`, ``user_version`` the schema), the schema is
created only in a file this code creates, and any other file (empty, not SQLite, another
program's database, another schema) is refused with :class:`StoreError` naming what it
is, before anything is written. Readers open read-only. One writer at a time:
:func:`writer_lock` holds a lock file beside the index for a whole run.

Schema 3 added, per document, how its file was read (``reading``: the PDF extractor and
its library's version, or the text reader's) and, for a PDF, its :class:`Pages` (where
each page starts, running lines removed, OCR confidences) as JSON. An index of schema 2
is upgraded in place by the first writer (two columns added, each row marked as read by
the text reader its stamp names, as it was: schema 2 read no PDFs; nothing re-embedded);
until then a reader reads it as it is, with no pages. Any other schema is refused.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import numpy as np

from rag_lab.chunking import Chunk

SCHEMA_VERSION = "3"
"""2: stamps carry the version of the file reader (was: the book extractor's). 3: documents
record how their file was read and, for PDFs, their pages (:class:`Pages`)."""
UPGRADABLE = ("2",)
"""Older schemas upgraded in place (:data:`_ADDED`)."""
APPLICATION_ID = 0x5241474C
"""``RAGL``: SQLite's ``PRAGMA application_id`` of every rag-lab index."""
BUSY_SECONDS = 10.0
"""How long a connection waits for another's lock before it gives up."""
LOCK_ENV = "RAG_LAB_LOCK_TIMEOUT"
"""Seconds a second writer waits for the first (default :data:`BUSY_SECONDS`)."""
_HEADER = b"SQLite format 3\x00"
_TABLES = {"meta", "documents", "chunks"}


class Status(StrEnum):
    """Where a document stands in the index."""

    INDEXED = "indexed"
    """Its chunks are searchable and were embedded by the current pipeline."""
    FAILED = "failed"
    """It could not be read or chunked; ``reason`` says why. It has no chunks."""
    STALE = "stale"
    """Its chunks were embedded by another model or pipeline version: not comparable."""


@dataclass(frozen=True)
class Stamp:
    """What made a document's vectors; vectors with different stamps are not comparable."""

    model_name: str
    model_key: str
    """The model's :attr:`~rag_lab.models.minilm.Fingerprint.key` (weights, pooling, window…)."""
    dimensions: int
    pipeline_version: str
    reader_version: str

    def differences(self, other: Stamp) -> list[str]:
        """``"field: ours → theirs"`` for every field where ``other`` differs."""
        return [
            f"{f.name}: {getattr(self, f.name)} → {getattr(other, f.name)}"
            for f in fields(self)
            if getattr(self, f.name) != getattr(other, f.name)
        ]

    def __str__(self) -> str:
        return (
            f"{self.model_name} (fingerprint {self.model_key}, {self.dimensions} dims), "
            f"pipeline {self.pipeline_version}, reader {self.reader_version}"
        )


@dataclass(frozen=True)
class Pages:
    """A paginated document's pages (a PDF): where each starts, and how sure their text is."""

    starts: tuple[int, ...]
    """The offset of each page's first character in the document's text."""
    running_lines_removed: int = 0
    """Running headers and footers removed by the reader (0 when they were kept)."""
    confidences: tuple[float, ...] = ()
    """OCR only: each page's mean word confidence (0–100; NaN for a page with no word)."""
    min_confidence: float | None = None
    """OCR only: the threshold under which a page is flagged."""
    flagged: tuple[int, ...] = field(init=False)
    """The 1-based pages whose OCR confidence is under :attr:`min_confidence` (or NaN)."""

    def __post_init__(self) -> None:
        low = self.min_confidence
        flagged = (
            ()
            if low is None
            else tuple(n for n, c in enumerate(self.confidences, 1) if math.isnan(c) or c < low)
        )
        object.__setattr__(self, "flagged", flagged)

    def to_json(self) -> str:
        data = asdict(self)
        del data["flagged"]
        data["confidences"] = [None if math.isnan(c) else c for c in self.confidences]
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Pages:
        data = json.loads(text)
        return cls(
            tuple(data["starts"]),
            data["running_lines_removed"],
            tuple(math.nan if c is None else c for c in data["confidences"]),
            data["min_confidence"],
        )


@dataclass(frozen=True)
class DocumentRecord:
    """One document's row: what it is, how it stands, and what embedded it."""

    id: str
    path: str
    """Relative to the indexed folder, with ``/`` separators."""
    sha256: str | None
    """Of the file's bytes; None when they could not be read."""
    status: Status
    reason: str | None
    """Why it failed; None unless ``status`` is ``failed``."""
    title: str
    stamp: Stamp | None
    """None for a failed document: nothing of it was embedded."""
    chunk_count: int | None
    """Written by the store when the document's last chunk is in; None if it failed."""
    updated_at: str
    """UTC time of the last change, ISO 8601 to the second."""
    reading: str | None = None
    """How the file was read (:attr:`rag_lab.sources.folder.Read.reading`); None if it failed."""
    pages: Pages | None = None
    """For a PDF: its pages; None for unpaginated text and failed documents."""


class DocumentWriter(Protocol):
    """Adds one document's chunks inside its transaction, then seals it with its record."""

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None: ...

    def finish(
        self,
        path: str,
        sha256: str,
        title: str,
        stamp: Stamp,
        *,
        reading: str | None = None,
        pages: Pages | None = None,
    ) -> DocumentRecord: ...


class Store(Protocol):
    """The storage a persistent index needs (see the module docstring for the guarantee)."""

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def documents(self) -> list[DocumentRecord]: ...

    def document(self, doc_id: str) -> DocumentRecord | None: ...

    def replacing(self, doc_id: str) -> AbstractContextManager[DocumentWriter]: ...

    def fail(self, doc_id: str, path: str, sha256: str | None, reason: str) -> DocumentRecord: ...

    def set_status(self, doc_ids: Sequence[str], status: Status) -> None: ...

    def remove(self, doc_ids: Sequence[str]) -> None: ...

    def chunks(self, doc_ids: Sequence[str]) -> tuple[list[Chunk], np.ndarray]: ...

    def vectors(self, doc_ids: Sequence[str]) -> tuple[list[tuple[str, int]], np.ndarray]: ...

    def chunks_at(self, keys: Sequence[tuple[str, int]]) -> list[Chunk]: ...

    def close(self) -> None: ...


class StoreError(RuntimeError):
    """The index file is not an index, or not one this version can read."""


class StoreBusy(StoreError):
    """Another process is writing the index."""


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    sha256 TEXT,
    status TEXT NOT NULL CHECK (status IN ('indexed', 'failed', 'stale')),
    reason TEXT,
    title TEXT NOT NULL,
    model_name TEXT,
    model_key TEXT,
    dimensions INTEGER,
    pipeline_version TEXT,
    reader_version TEXT,
    chunk_count INTEGER,
    updated_at TEXT NOT NULL,
    reading TEXT,
    pages TEXT
);
CREATE TABLE chunks (
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    section TEXT NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    text TEXT NOT NULL,
    content TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (doc_id, idx)
);
"""

_COLUMNS = (
    "id, path, sha256, status, reason, title, model_name, model_key, dimensions, "
    "pipeline_version, reader_version, chunk_count, updated_at, reading, pages"
)
_ADDED = {
    "2": (
        "ALTER TABLE documents ADD COLUMN reading TEXT",
        "ALTER TABLE documents ADD COLUMN pages TEXT",
        # Schema 2 read only text files: each row was read by the text reader its stamp names.
        "UPDATE documents SET reading = 'text reader ' || reader_version "
        "WHERE status != 'failed' AND reader_version IS NOT NULL",
    )
}
"""What turns each :data:`UPGRADABLE` schema into this one, statement by statement."""


class SQLiteStore:
    """A :class:`Store` in one SQLite file (standard library, no server)."""

    def __init__(
        self, path: str | Path, *, readonly: bool = False, timeout: float = BUSY_SECONDS
    ) -> None:
        """Open the index at ``path``; a missing file is created (unless ``readonly``).

        Raises :class:`StoreError` for anything that is not a rag-lab index of this
        schema, before writing a byte to it.
        """
        self.path = Path(path)
        self.readonly = readonly
        self._columns = _COLUMNS
        kind = inspect_file(self.path)
        if kind == "missing":
            if readonly:
                raise StoreError(f"no index at {self.path}: run rag-lab index DIR first")
            self._db = self._create(timeout)
            return
        self._db = _connect(self.path, readonly, timeout)
        try:
            found = self.meta("schema")
            if found in UPGRADABLE and readonly:  # read as it is, until a writer upgrades it
                self._columns = _COLUMNS.replace("reading, pages", "NULL, NULL")
            elif found in UPGRADABLE:
                self._upgrade(found)
                found = SCHEMA_VERSION
            if kind == "unmarked" and not readonly and found == SCHEMA_VERSION:
                # an index written before the marks
                self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self._db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
        except BaseException:
            self._db.close()
            raise
        if found != SCHEMA_VERSION and found not in UPGRADABLE:
            self._db.close()
            raise StoreError(
                f"{self.path} has index schema {found}; this rag_lab reads {SCHEMA_VERSION}. "
                "Index the folder again into a new file (--index PATH)."
            )

    def _upgrade(self, found: str) -> None:
        """Schema ``found`` → :data:`SCHEMA_VERSION`, in one transaction (module docstring)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if self.meta("schema") == found:  # not upgraded by another process meanwhile
                for statement in _ADDED[found]:
                    self._db.execute(statement)
                self._db.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,)
                )
                if self._db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID:
                    self._db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _create(self, timeout: float) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(
                f"cannot create the folder of {self.path}: {err.strerror or err}"
            ) from None
        # Built aside and linked into place: a file at ``path`` is always a whole index,
        # even if this process is killed halfway, and an existing file is never replaced.
        fresh = self.path.with_name(f"{self.path.name}.creating-{os.getpid()}")
        try:
            fresh.unlink(missing_ok=True)
            db = _connect(fresh, False, timeout)
            try:
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
                db.executescript(_SCHEMA)
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            finally:
                db.close()
            os.link(fresh, self.path)
        except FileExistsError:
            pass  # another process created it meanwhile: open theirs, if it is an index
        except OSError as err:
            raise StoreError(f"cannot create {self.path}: {err.strerror or err}") from None
        finally:
            fresh.unlink(missing_ok=True)
        inspect_file(self.path)
        return _connect(self.path, False, timeout)

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def documents(self) -> list[DocumentRecord]:
        rows = self._db.execute(f"SELECT {self._columns} FROM documents ORDER BY id")
        return [_record(row) for row in rows]

    def document(self, doc_id: str) -> DocumentRecord | None:
        row = self._db.execute(
            f"SELECT {self._columns} FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        return _record(row) if row else None

    @contextmanager
    def replacing(self, doc_id: str) -> Iterator[_SQLiteWriter]:
        """A transaction that replaces ``doc_id`` whole; rolled back unless finished."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            writer = _SQLiteWriter(self, doc_id)
            yield writer
            if writer.record is None:
                raise RuntimeError(f"{doc_id}: the writer closed without finish()")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def fail(self, doc_id: str, path: str, sha256: str | None, reason: str) -> DocumentRecord:
        """Mark ``doc_id`` failed with ``reason`` and drop its chunks, in one transaction."""
        record = DocumentRecord(doc_id, path, sha256, Status.FAILED, reason, "", None, None, _now())
        with self._transaction():
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            self._put(record)
        return record

    def set_status(self, doc_ids: Sequence[str], status: Status) -> None:
        with self._transaction():
            self._db.executemany(
                "UPDATE documents SET status = ?, updated_at = ? WHERE id = ?",
                [(str(status), _now(), i) for i in doc_ids],
            )

    def remove(self, doc_ids: Sequence[str]) -> None:
        with self._transaction():
            for doc_id in doc_ids:
                self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                self._db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def chunks(self, doc_ids: Sequence[str]) -> tuple[list[Chunk], np.ndarray]:
        """The chunks of ``doc_ids`` (document id, then position order) and their vectors."""
        wanted = set(doc_ids)
        out: list[Chunk] = []
        vectors: list[np.ndarray] = []
        rows = self._db.execute(
            'SELECT doc_id, idx, text, content, section, start, "end", vector '
            "FROM chunks ORDER BY doc_id, idx"
        )
        for doc_id, idx, text, content, section, start, end, blob in rows:
            if doc_id in wanted:
                out.append(Chunk(doc_id, idx, text, content, section, start, end))
                vectors.append(np.frombuffer(blob, dtype=np.float32))
        return out, np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)

    def vectors(self, doc_ids: Sequence[str]) -> tuple[list[tuple[str, int]], np.ndarray]:
        """The vectors of ``doc_ids`` without their texts, in one query: what a search reads.

        Returns the ``(document id, position)`` of each row (document id, then position
        order, as :meth:`chunks`) and a ``(rows, dimensions)`` float32 matrix made by one
        ``np.frombuffer`` over the joined blobs. Vectors of different sizes raise
        :class:`StoreError` (a damaged index; ``rag-lab status --check`` names the document).
        """
        wanted = set(doc_ids)
        keys: list[tuple[str, int]] = []
        blobs: list[bytes] = []
        rows = self._db.execute("SELECT doc_id, idx, vector FROM chunks ORDER BY doc_id, idx")
        for doc_id, idx, blob in rows:
            if doc_id in wanted:
                keys.append((doc_id, idx))
                blobs.append(blob)
        if not blobs:
            return keys, np.zeros((0, 0), dtype=np.float32)
        size = len(blobs[0])
        if size == 0 or size % 4 or any(len(b) != size for b in blobs):
            raise StoreError(
                f"the index {self.path} holds vectors of different sizes; see rag-lab status "
                f"--check --index {self.path}, and rebuild it with rag-lab index DIR --rebuild"
            )
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), size // 4)
        return keys, matrix

    def chunks_at(self, keys: Sequence[tuple[str, int]]) -> list[Chunk]:
        """The chunks at ``(document id, position)`` ``keys``, in the order given.

        Raises :class:`KeyError` for a key that is not stored.
        """
        found: dict[tuple[str, int], Chunk] = {}
        for doc_id, idx in keys:
            row = self._db.execute(
                'SELECT text, content, section, start, "end" FROM chunks '
                "WHERE doc_id = ? AND idx = ?",
                (doc_id, idx),
            ).fetchone()
            if row is None:
                raise KeyError(f"{doc_id}#{idx}")
            text, content, section, start, end = row
            found[doc_id, idx] = Chunk(doc_id, idx, text, content, section, start, end)
        return [found[key] for key in keys]

    def close(self) -> None:
        self._db.close()

    def integrity(self, *, quick: bool = False) -> list[str]:
        """SQLite's ``PRAGMA integrity_check`` (``quick_check``): empty when sound."""
        pragma = "quick_check" if quick else "integrity_check"
        rows = [r[0] for r in self._db.execute(f"PRAGMA {pragma}")]
        return [] if rows == ["ok"] else rows

    def chunk_stats(self) -> dict[str, tuple[int, set[int]]]:
        """Per document id in the chunks table: (rows, the set of vector sizes in bytes)."""
        out: dict[str, tuple[int, set[int]]] = {}
        rows = self._db.execute(
            "SELECT doc_id, length(vector), COUNT(*) FROM chunks GROUP BY doc_id, length(vector)"
        )
        for doc_id, size, n in rows:
            count, sizes = out.get(doc_id, (0, set()))
            out[doc_id] = (count + n, sizes | {size})
        return out

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _put(self, r: DocumentRecord) -> None:
        stamp = [getattr(r.stamp, f.name) if r.stamp else None for f in fields(Stamp)]
        values = [r.id, r.path, r.sha256, str(r.status), r.reason, r.title, *stamp]
        pages = r.pages.to_json() if r.pages else None
        self._db.execute(
            f"INSERT OR REPLACE INTO documents ({_COLUMNS}) VALUES ({', '.join('?' * 15)})",
            [*values, r.chunk_count, r.updated_at, r.reading, pages],
        )


class _SQLiteWriter:
    """The :class:`DocumentWriter` of :meth:`SQLiteStore.replacing`."""

    def __init__(self, store: SQLiteStore, doc_id: str) -> None:
        self._store = store
        self._doc_id = doc_id
        self._count = 0
        self.record: DocumentRecord | None = None

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        rows = []
        for c, v in zip(chunks, vectors, strict=True):
            if c.doc_id != self._doc_id:
                raise ValueError(f"chunk {c.id} does not belong to {self._doc_id}")
            blob = np.ascontiguousarray(v, dtype=np.float32).tobytes()
            rows.append((c.doc_id, c.index, c.section, c.start, c.end, c.text, c.content, blob))
        self._store._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self._count += len(rows)

    def finish(
        self,
        path: str,
        sha256: str,
        title: str,
        stamp: Stamp,
        *,
        reading: str | None = None,
        pages: Pages | None = None,
    ) -> DocumentRecord:
        """Seal the document as indexed; its chunk count is what this writer stored."""
        self.record = DocumentRecord(
            self._doc_id,
            path,
            sha256,
            Status.INDEXED,
            None,
            title,
            stamp,
            self._count,
            _now(),
            reading,
            pages,
        )
        self._store._put(self.record)
        return self.record


def inspect_file(path: Path) -> str:
    """``missing``, ``ours`` (marked), or ``unmarked`` (an index older than the marks).

    Reads the file's header and, for an unmarked SQLite file, its table names, read-only;
    raises :class:`StoreError` naming what the file is when it is not a rag-lab index.
    """
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not an index file; give a file: --index PATH")
    if not path.exists():
        return "missing"
    refuse = "refusing to touch it; choose another file with --index PATH"
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as err:
        raise StoreError(f"cannot read {path}: {err.strerror or err}") from None
    if not header:
        raise StoreError(f"{path} is an empty file, not a rag-lab index; {refuse}")
    if not header.startswith(_HEADER) or len(header) < 100:
        raise StoreError(f"{path} is not a rag-lab index (not an SQLite database); {refuse}")
    app_id = int.from_bytes(header[68:72], "big")
    version = int.from_bytes(header[60:64], "big", signed=True)
    if app_id == APPLICATION_ID:
        if version != int(SCHEMA_VERSION) and str(version) not in UPGRADABLE:
            raise StoreError(
                f"{path} has index schema {version}; this rag_lab reads {SCHEMA_VERSION}. "
                "Index the folder again into a new file (--index PATH)."
            )
        return "ours"
    if app_id != 0:
        raise StoreError(
            f"{path} is another program's SQLite database (application_id {app_id:#x}), "
            f"not a rag-lab index; {refuse}"
        )
    db = _connect(path, True, BUSY_SECONDS)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as err:
        raise StoreError(f"{path} is not a rag-lab index ({err}); {refuse}") from None
    finally:
        db.close()
    if tables != _TABLES:
        names = ", ".join(sorted(tables)) or "no tables"
        raise StoreError(
            f"{path} is an SQLite database of another program (tables: {names}), "
            f"not a rag-lab index; {refuse}"
        )
    return "unmarked"


def _connect(path: Path, readonly: bool, timeout: float) -> sqlite3.Connection:
    """Autocommit mode: every transaction of the store is opened and closed explicitly."""
    if readonly:
        uri = path.resolve().as_uri() + "?mode=ro"
        return sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout)
    return sqlite3.connect(path, isolation_level=None, timeout=timeout)


@contextmanager
def writer_lock(path: str | Path, timeout: float | None = None) -> Iterator[None]:
    """Hold ``<index>.lock`` for a whole run, so two writers never interleave.

    A second writer waits up to ``timeout`` seconds (default ``$RAG_LAB_LOCK_TIMEOUT``,
    else :data:`BUSY_SECONDS`), then raises :class:`StoreBusy` naming the running one
    (its pid, from the lock file). The operating system drops the lock when its holder
    dies, even by ``kill -9``.
    """
    import fcntl  # POSIX; imported here so the store itself imports everywhere

    if timeout is None:
        timeout = float(os.environ.get(LOCK_ENV) or BUSY_SECONDS)
    lock = Path(f"{path}.lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise StoreError(f"cannot write beside {path} ({lock}): {err.strerror or err}") from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
                    raise StoreBusy(
                        f"{path} is being written by another rag-lab ({holder}); waited "
                        f"{timeout:g} s. Let it finish, or stop that process, and run again"
                    ) from None
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, since {_now()}".encode(), 0)
        yield
    finally:
        os.close(fd)


def _record(row: tuple) -> DocumentRecord:
    doc_id, path, sha, status, reason, title, *stamp, count, updated, reading, pages = row
    return DocumentRecord(
        doc_id,
        path,
        sha,
        Status(status),
        reason,
        title,
        Stamp(*stamp) if stamp[0] is not None else None,
        count,
        updated,
        reading,
        Pages.from_json(pages) if pages else None,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
