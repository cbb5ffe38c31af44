"""How a :class:`~rag_lab.app.store.milvus.store.MilvusStore` writes: each document replaced
whole by *write generations*, and what a writer that stopped left settled.

Milvus has no transaction across rows, so a document is replaced whole by write
generations. Every chunk row carries the write that made it (``write``); a document's
record names the one write whose chunks are its chunks, and a chunk of any other write is
an *orphan*, never returned. Replacing a document: (1) a pending row names the document, its
new write and its old one; (2) the new chunks are inserted; (3) the record, naming the new
write, is upserted: this is the commit; (4) the old write's chunks are deleted; (5) the
pending row is deleted. A process killed anywhere leaves the old record and its chunks
(before 3) or the new ones (from 3 on), plus orphans that readers skip; the next writer to
open the index reads the pending rows and deletes the orphans they name
(:meth:`Writes._recover`). Failing and removing a document are the same steps with no new
write. Every write the client returned from is durable (Milvus logs it before answering;
Milvus Lite writes its WAL to the OS).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from rag_lab.app.store.milvus.rows import (
    PLACEHOLDER,
    TEXT_MAX,
    chunk_row,
    doc_key,
    oversize,
    record_json,
)
from rag_lab.app.store.protocol import DocumentTooLarge
from rag_lab.app.store.records import DocumentRecord, Pages, Stamp, Status, now
from rag_lab.chunking import Chunk

if TYPE_CHECKING:
    from rag_lab.app.store.milvus.store import MilvusStore

BATCH = 1_000
"""Documents failed or removed per step (:meth:`Writes._without_chunks`)."""
_UNREAD = object()
"""A write not known without reading its document's record (:meth:`MilvusStore._settle`)."""


class Writes:
    """The writes of :class:`~rag_lab.app.store.milvus.store.MilvusStore` (a part of it: the
    collections and the client it writes are the store's)."""

    def set_meta(self, key: str, value: str) -> None:
        self._upsert(f"meta:{key}", value)

    @contextmanager
    def replacing(self, doc_id: str) -> Iterator[_MilvusWriter]:
        """Replace ``doc_id`` whole: the new chunks count once its record names their write."""
        write = uuid.uuid4().hex
        data = self._pending(write, doc_id, [write, self._live_write(doc_id)])
        writer = _MilvusWriter(self, doc_id, write)
        live: object = _UNREAD
        try:
            yield writer
            if writer.record is None:
                raise RuntimeError(f"{doc_id}: the writer closed without finish()")
            self._put(writer.record, write)  # the commit
            live = write
        finally:
            self._settle(write, data, live)

    def fail(self, failed: Sequence[DocumentRecord]) -> None:
        records = {r.id: json.dumps(record_json(r, None)) for r in failed}

        def commit(ids: Sequence[str]) -> None:
            self._upsert_rows([(doc_key(i), records[i]) for i in ids])

        self._without_chunks(list(records), commit)

    def set_status(self, doc_ids: Sequence[str], status: Status) -> None:
        rows = self._rows("doc:")
        for doc_id in doc_ids:
            data = rows.get(doc_key(doc_id))
            if data is not None:
                data |= {"status": str(status), "updated_at": now()}
                self._upsert(doc_key(doc_id), json.dumps(data))

    def remove(self, doc_ids: Sequence[str]) -> None:
        def commit(ids: Sequence[str]) -> None:
            self._client.delete(self._records, ids=[doc_key(i) for i in ids])

        self._without_chunks(doc_ids, commit)

    # --- rows ---------------------------------------------------------------------------

    def _upsert(self, key: str, value: str) -> None:
        self._upsert_rows([(key, value)])

    def _upsert_rows(self, rows: Sequence[tuple[str, str]]) -> None:
        """Records rows ``(key, value)``, in one call."""
        for _, value in rows:
            if len(value.encode()) > TEXT_MAX:
                raise ValueError(
                    f"a record of {len(value.encode()):,} bytes: Milvus keeps {TEXT_MAX:,}"
                )
        self._client.upsert(
            self._records, [{"key": k, "value": v, "v": PLACEHOLDER} for k, v in rows]
        )

    def _live_write(self, doc_id: str) -> str | None:
        row = self._get(doc_key(doc_id))
        return None if row is None else json.loads(row["value"]).get("write")

    def _put(self, record: DocumentRecord, write: str | None) -> None:
        self._upsert(doc_key(record.id), json.dumps(record_json(record, write)))

    def _pending(self, write: str, doc_id: str, writes: list[str | None]) -> dict:
        """The pending row of ``write``, written; its data."""
        data = {"doc": doc_id, "writes": [w for w in writes if w is not None]}
        self._upsert(f"pending:{write}", json.dumps(data))
        return data

    def _drop_write(self, write: str | None) -> None:
        if write is not None and self._dimensions is not None:
            self._client.delete(self._chunks, filter=f'write == "{write}"')

    def _without_chunks(self, doc_ids: Sequence[str], commit: Callable) -> None:
        """``commit(ids)`` (a change of their records that leaves them no chunks), then their
        old chunks deleted, under pending rows so that a killed process leaves only orphans;
        :data:`BATCH` documents at a time, one call of the client per step: a pending row per
        document naming its old write, the commit, the old writes' chunks and the pending
        rows deleted."""
        for at in range(0, len(doc_ids), BATCH):
            ids = doc_ids[at : at + BATCH]
            keys = [doc_key(i) for i in ids]
            rows = self._client.get(self._records, ids=keys, output_fields=["value"], **self._read)
            live = {r["key"]: json.loads(r["value"]).get("write") for r in rows}
            old = {i: live.get(doc_key(i)) for i in ids}
            pending = {f"pending:{uuid.uuid4().hex}": i for i in ids}
            data = {k: {"doc": i, "writes": [old[i]] if old[i] else []} for k, i in pending.items()}
            self._upsert_rows([(k, json.dumps(d)) for k, d in data.items()])
            commit(ids)
            writes = [w for w in old.values() if w]
            if writes and self._dimensions is not None:
                self._client.delete(self._chunks, filter=f"write in {json.dumps(writes)}")
            self._client.delete(self._records, ids=list(pending))

    def _settle(self, write: str, data: dict | None = None, live: object = _UNREAD) -> None:
        """Delete the chunks of the pending ``write``'s writes that its document's record
        does not name (whatever happened: committed, failed or killed), then the row.

        ``data``: the pending row's, if known (else read); ``live``: the write the record
        names, if known (this writer's own commit just returned), else :data:`_UNREAD`: read
        from the record. Both known, settling a write costs no read (each strong read on a
        server waits for its next time tick)."""
        key = f"pending:{write}"
        if data is None:
            row = self._get(key)
            if row is None:
                return
            data = json.loads(row["value"])
        if live is _UNREAD:
            live = self._live_write(data["doc"])
        for w in data["writes"]:
            if w != live:
                self._drop_write(w)
        self._client.delete(self._records, ids=[key])

    def _recover(self) -> None:
        """Settle every write a writer that stopped left pending; then drop the collections
        of other generations (an interrupted rebuild's, or the old one of a swap)."""
        for key, data in self._rows("pending:").items():
            self._settle(key.removeprefix("pending:"), data)
        pointer = self._read_pointer()
        if pointer is not None and self.generation == pointer["generation"]:
            self._drop_other_generations()


class _MilvusWriter:
    """The :class:`~rag_lab.app.store.protocol.DocumentWriter` of :meth:`MilvusStore.replacing`."""

    def __init__(self, store: MilvusStore, doc_id: str, write: str) -> None:
        self._store = store
        self._doc_id = doc_id
        self._write = write
        self._count = 0
        self.record: DocumentRecord | None = None

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        if not len(chunks):
            return
        store = self._store
        dims = int(np.asarray(vectors).shape[1])
        if store._dimensions is None:
            store._create_chunks(dims)
        elif dims != store._dimensions:
            raise ValueError(f"vectors of {dims} dimensions into an index of {store._dimensions}")
        doc = json.dumps(self._doc_id)
        rows = []
        for c, v in zip(chunks, vectors, strict=True):
            if c.doc_id != self._doc_id:
                raise ValueError(f"chunk {c.id} does not belong to {self._doc_id}")
            row = chunk_row(self._write, doc, c, v)
            too_large = oversize(row)
            if too_large is not None:
                raise DocumentTooLarge(self._doc_id, too_large)
            rows.append(row)
        store._client.insert(store._chunks, rows)
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
        """The document's record (its chunk count is what this writer stored); committed when
        the ``replacing`` block ends. :class:`DocumentTooLarge` when it is past Milvus's
        limit (a title of tens of thousands of characters, a page table of many thousands)."""
        record = DocumentRecord.indexed(
            self._doc_id, path, sha256, title, stamp, self._count, reading, pages
        )
        too_large = oversize(record_json(record, self._write), record=True)
        if too_large is not None:
            raise DocumentTooLarge(self._doc_id, too_large)
        self.record = record
        return record
