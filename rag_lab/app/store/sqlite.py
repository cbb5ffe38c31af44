"""The :class:`~rag_lab.app.store.protocol.Store` in one SQLite file (standard library, no server).

Never writing into a file that is not ours: the schema is created only in a file this code
creates (built aside and linked into place), and any other file is identified first
(:func:`~rag_lab.app.store.identify.inspect_file`) and refused before anything is written.
Readers open read-only. An index of an older schema is upgraded by its first writer
(:mod:`~rag_lab.app.store.schema`). SQLite's errors reach the caller as facts
(:mod:`~rag_lab.app.store.connection`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import numpy as np

from rag_lab.app.store.connection import BUSY_SECONDS, Connection
from rag_lab.app.store.errors import (
    IndexDamaged,
    IndexInaccessible,
    IndexMissing,
    OtherSchema,
)
from rag_lab.app.store.identify import FileKind, inspect_file
from rag_lab.app.store.records import DocumentRecord, Pages, Stamp, Status, now
from rag_lab.app.store.schema import (
    APPLICATION_ID,
    COLUMNS,
    COLUMNS_BEFORE_3,
    SCHEMA_VERSION,
    TABLES_SQL,
    UPGRADABLE,
    UPGRADES,
)
from rag_lab.chunking import Chunk


class SQLiteStore:
    """A :class:`~rag_lab.app.store.protocol.Store` in one SQLite file."""

    engine = "SQLite"

    def __init__(
        self, path: str | os.PathLike, *, readonly: bool = False, timeout: float = BUSY_SECONDS
    ) -> None:
        """Open the index at ``path``; a missing file is created (unless ``readonly``).

        Raises a :class:`~rag_lab.app.store.errors.StoreError` for anything that is not a
        rag-lab index of a schema this version reads, before writing a byte to it:
        :class:`~.errors.IndexMissing` for no file (``readonly``),
        :class:`~.errors.NotOurFile` or :class:`~.errors.OtherSchema` for another file.
        """
        self.path = Path(path)
        self.readonly = readonly
        self._columns = COLUMNS
        kind = inspect_file(self.path)
        if kind is FileKind.MISSING:
            if readonly:
                raise IndexMissing(self.path)
            self._db = self._create(timeout)
            return
        if readonly:
            _roll_back_hot_journal(self.path, timeout)
        self._db = Connection(self.path, readonly=readonly, timeout=timeout)
        try:
            found = self.meta("schema")
            if found in UPGRADABLE and readonly:  # read as it is, until a writer upgrades it
                self._columns = COLUMNS_BEFORE_3
            elif found in UPGRADABLE:
                self._upgrade(found)
                found = SCHEMA_VERSION
            if found not in (SCHEMA_VERSION, *UPGRADABLE):
                raise OtherSchema(self.path, found)
            if kind is FileKind.UNMARKED and not readonly:  # an index written before the marks
                _mark(self._db)
        except BaseException:
            self._db.close()
            raise

    def _upgrade(self, found: str) -> None:
        """Schema ``found`` → :data:`~.schema.SCHEMA_VERSION`, in one transaction."""
        with self._transaction():
            if self.meta("schema") == found:  # not upgraded by another process meanwhile
                for statement in UPGRADES[found]:
                    self._db.execute(statement)
                self._db.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,)
                )
                if self._db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID:
                    self._db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")

    def _create(self, timeout: float) -> Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise IndexInaccessible(
                self.path, f"cannot create the folder of {self.path}: {err.strerror or err}"
            ) from None
        # Built aside and linked into place: a file at ``path`` is always a whole index,
        # even if this process is killed halfway, and an existing file is never replaced.
        # Named by at most 64 bytes of the index's name, so that it and its journal fit a
        # file system's limit on a name (255 bytes) whatever the index's name is.
        kept = os.fsencode(self.path.name)[:64].decode("utf-8", "ignore")
        fresh = self.path.with_name(f"{kept}.creating-{os.getpid()}")
        try:
            fresh.unlink(missing_ok=True)
            db = Connection(fresh, readonly=False, timeout=timeout, index=self.path)
            try:
                _mark(db)
                db.executescript(TABLES_SQL)
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            finally:
                db.close()
            os.link(fresh, self.path)
        except FileExistsError:
            pass  # another process created it meanwhile: open theirs, if it is an index
        except OSError as err:
            raise IndexInaccessible(
                self.path, f"cannot create {self.path}: {err.strerror or err}"
            ) from None
        finally:
            fresh.unlink(missing_ok=True)
        inspect_file(self.path)
        return Connection(self.path, readonly=False, timeout=timeout)

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
        with self._transaction():
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            writer = _SQLiteWriter(self, doc_id)
            yield writer
            if writer.record is None:
                raise RuntimeError(f"{doc_id}: the writer closed without finish()")

    def fail(self, failed: Sequence[DocumentRecord]) -> None:
        """Record each of ``failed`` and drop its chunks, in one transaction."""
        with self._transaction():
            self._db.executemany("DELETE FROM chunks WHERE doc_id = ?", [(r.id,) for r in failed])
            for record in failed:
                self._put(record)

    def set_status(self, doc_ids: Sequence[str], status: Status) -> None:
        with self._transaction():
            self._db.executemany(
                "UPDATE documents SET status = ?, updated_at = ? WHERE id = ?",
                [(str(status), now(), i) for i in doc_ids],
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
        :class:`~.errors.IndexDamaged` (:func:`rag_lab.app.index.check` names the document).
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
            raise IndexDamaged(self.path, "vectors of different sizes")
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

    def engine_search(self, doc_ids: Sequence[str]) -> None:
        """None: SQLite has no vector search; the index scans every vector exactly."""
        return None

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

    def close(self) -> None:
        self._db.close()

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
            # SQLite may have rolled back already (a full disk does); then the error stands.
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _put(self, r: DocumentRecord) -> None:
        stamp = [getattr(r.stamp, f.name) if r.stamp else None for f in fields(Stamp)]
        values = [r.id, r.path, r.sha256, str(r.status), r.reason, r.title, *stamp]
        pages = r.pages.to_json() if r.pages else None
        self._db.execute(
            f"INSERT OR REPLACE INTO documents ({COLUMNS}) VALUES ({', '.join('?' * 15)})",
            [*values, r.chunk_count, r.updated_at, r.reading, pages],
        )


class _SQLiteWriter:
    """The :class:`~rag_lab.app.store.protocol.DocumentWriter` of :meth:`SQLiteStore.replacing`."""

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
        self.record = DocumentRecord.indexed(
            self._doc_id, path, sha256, title, stamp, self._count, reading, pages
        )
        self._store._put(self.record)
        return self.record


def _roll_back_hot_journal(path: Path, timeout: float) -> None:
    """Let SQLite roll back what a writer that stopped mid-transaction left (a hot journal),
    when this process may write the index and its folder: a read-only connection cannot,
    and would refuse every read (:class:`~.errors.IndexNeedsRecovery`).

    Only the file's own journal is played, by SQLite, under its exclusive lock: a journal
    whose writer is still alive is not hot (the writer holds its lock) and is left alone.
    """
    journal = Path(f"{path}-journal")
    try:
        if journal.stat().st_size == 0:
            return
    except OSError:
        return  # no journal: nothing to roll back
    if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return  # the read-only connection then says what is wrong
    db = Connection(path, readonly=False, timeout=timeout)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reading rolls it back
    finally:
        db.close()


def _mark(db: Connection) -> None:
    """Write the marks that say the file is a rag-lab index of this schema."""
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")


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
