"""The :class:`~rag_lab.app.store.protocol.Store` on Milvus: Milvus Lite in a local folder, or
a Milvus server or cluster at ``http://host:19530``, through the same client (``pymilvus``).

An index is a *name* (default :data:`DEFAULT_NAME`) in one Milvus database; it owns the
collections whose names start ``<name>__``:

- ``<name>__current``: one row, the index's marks (application, schema) and which
  *generation* is the index now. A rebuild writes a new generation beside it and swaps this
  pointer when it is complete (:meth:`MilvusStore.fresh_generation`, :meth:`MilvusStore.promote`).
- ``<name>__<generation>__records``: a row per document (its
  :class:`~rag_lab.app.store.records.DocumentRecord` as JSON), a row per meta key, and a row
  per write in progress (*pending*).
- ``<name>__<generation>__chunks``: a row per chunk, its text and its vector, with an
  approximate index (HNSW, :data:`HNSW_BUILD`) or an exact one (``FLAT``).

Milvus has no transaction across rows, so a document is replaced whole by *write
generations*. Every chunk row carries the write that made it (``write``); a document's
record names the one write whose chunks are its chunks, and a chunk of any other write is
an *orphan*, never returned. Replacing a document: (1) a pending row names the document, its
new write and its old one; (2) the new chunks are inserted; (3) the record, naming the new
write, is upserted: this is the commit; (4) the old write's chunks are deleted; (5) the
pending row is deleted. A process killed anywhere leaves the old record and its chunks
(before 3) or the new ones (from 3 on), plus orphans that readers skip; the next writer to
open the index reads the pending rows and deletes the orphans they name (:meth:`_recover`).
Failing and removing a document are the same steps with no new write. Every write the
client returned from is durable (Milvus logs it before answering; Milvus Lite writes its WAL
to the OS). What a read sees (:meth:`_reads`): a writer's reads are strongly consistent,
each sees every write acknowledged before it; a reader on a server takes one timestamp from
the server as it opens, and each of its reads is served once the engine has applied every
write acknowledged before that timestamp. Only the first read waits for that; a strong read
waits for the server's next time tick each time (~200 ms on Milvus 2.3.5).

How rows are encoded is :mod:`.rows`'s; where an index lives and how it is reached,
:mod:`.connection`'s.

Milvus Lite lets one process open a folder at a time: a second waits
``$RAG_LAB_LOCK_TIMEOUT`` seconds, then is refused
(:class:`~rag_lab.app.store.errors.IndexLocked`), readers included. On a server, any number
of readers run beside a writer; rag-lab does not lock a server index across machines (run
one indexer per index name).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag_lab.app.store.errors import (
    IndexDamaged,
    IndexMissing,
    IndexNotIndexed,
    NotOurFile,
    OtherSchema,
)
from rag_lab.app.store.lock import poll
from rag_lab.app.store.milvus.connection import (
    MilvusLocation,
    connect,
    pymilvus_client_library,
    release_lite,
)
from rag_lab.app.store.milvus.rows import (
    PLACEHOLDER,
    TEXT_MAX,
    TEXTS,
    chunk_of,
    chunk_row,
    doc_id_of,
    doc_key,
    matrix,
    record_json,
    record_of,
)
from rag_lab.app.store.records import DocumentRecord, Pages, Stamp, Status, now
from rag_lab.chunking import Chunk

MARK = "rag-lab index"
"""The ``application`` of every rag-lab index's pointer row."""
SCHEMA = "milvus-1"
"""The layout of collections and rows this module writes and reads."""
HNSW_BUILD = {"M": 16, "efConstruction": 128}
"""The approximate index's graph: 16 links per node, 128 candidates while building."""
HNSW_EF = 128
"""Candidates per search (at least the limit asked of the engine): the recall/latency knob.
Another for one store: ``MilvusStore(..., ef=N)``."""
INDEX_WAIT_SECONDS = 3600.0
"""How long a writer on a server waits for the engine to index what it wrote."""
SEARCH_MAX = 16_384
"""Milvus's largest ``limit`` of one search."""
_UNREAD = object()
"""A write not known without reading its document's record (:meth:`MilvusStore._settle`)."""


class MilvusStore:
    """A :class:`~rag_lab.app.store.protocol.Store` on Milvus (Lite or a server)."""

    @property
    def engine(self) -> str:
        return "Milvus Lite" if self.where.local else "Milvus"

    def __init__(
        self,
        where: MilvusLocation,
        *,
        readonly: bool = False,
        index_type: str = "HNSW",
        generation: str | None = None,
        client: Any = None,
        wait: float = 0.0,
        ef: int = HNSW_EF,
    ) -> None:
        """Open the index ``where``, created if missing (unless ``readonly``).

        A writer first recovers what a killed writer left (:meth:`_recover`). A name whose
        pointer row is not a rag-lab index's is refused before anything is written.
        ``index_type``: ``HNSW`` (approximate) or ``FLAT`` (exact) for a new index.
        ``generation``: open this generation instead of the current one (a rebuild's);
        ``client``: share this store's connection (Milvus Lite allows one per process);
        ``wait``: the seconds to wait for another process that has a Milvus Lite folder open;
        ``ef``: an HNSW search's candidates (at least the limit asked of the engine).
        """
        if ef < 1:
            raise ValueError(f"ef {ef}: at least 1")
        self.path = where
        self.where = where
        self.readonly = readonly
        self._shared = client is not None
        self._snapshot: dict[str, dict] | None = None
        self.ef = ef
        self._client = client or connect(where, create=not readonly, wait=wait)
        self._pointer = f"{where.name}__current"
        try:
            self._read = self._reads()
            current = self._read_pointer()
            if current is None and readonly:
                raise IndexMissing(where)
            if current is None:
                current = self._create_pointer(index_type)
            self.index_type = current["index_type"]
            self.generation = generation or current["generation"]
            self._records = f"{where.name}__{self.generation}__records"
            self._chunks = f"{where.name}__{self.generation}__chunks"
            if not self._client.has_collection(self._records):
                if self._client.has_collection(self._chunks):
                    raise IndexDamaged(where, f"its collection {self._records} is missing")
                if readonly:  # created by a process killed before its first write
                    raise IndexMissing(where)
                self._create_keyed(self._records)
            self._dimensions = self._chunk_dimensions()
            self._load()
            if not readonly:
                self._recover()
        except BaseException:
            if not self._shared:
                self._client.close()
                if where.local:
                    release_lite(where.uri)
            raise

    # --- the protocol -------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self._get(f"meta:{key}")
        return None if row is None else row["value"]

    def set_meta(self, key: str, value: str) -> None:
        self._upsert(f"meta:{key}", value)

    def documents(self) -> list[DocumentRecord]:
        return sorted((record_of(v) for v in self._doc_rows().values()), key=lambda r: r.id)

    def document(self, doc_id: str) -> DocumentRecord | None:
        row = self._get(doc_key(doc_id))
        return None if row is None else record_of(json.loads(row["value"]))

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

    def fail(self, doc_id: str, path: str, sha256: str | None, reason: str) -> DocumentRecord:
        record = DocumentRecord(doc_id, path, sha256, Status.FAILED, reason, "", None, None, now())
        self._without_chunks(doc_id, lambda: self._put(record, None))
        return record

    def set_status(self, doc_ids: Sequence[str], status: Status) -> None:
        rows = self._rows("doc:")
        for doc_id in doc_ids:
            data = rows.get(doc_key(doc_id))
            if data is not None:
                data |= {"status": str(status), "updated_at": now()}
                self._upsert(doc_key(doc_id), json.dumps(data))

    def remove(self, doc_ids: Sequence[str]) -> None:
        for doc_id in doc_ids:
            key = doc_key(doc_id)
            self._without_chunks(doc_id, lambda k=key: self._client.delete(self._records, ids=[k]))

    def chunks(self, doc_ids: Sequence[str]) -> tuple[list[Chunk], np.ndarray]:
        """The chunks of ``doc_ids`` (document id, then position order) and their vectors."""
        rows = self._live_chunk_rows(set(doc_ids), [*TEXTS, "start", "stop", "escaped"])
        chunks = [chunk_of(r) for r in rows]
        return chunks, matrix([r["vec"] for r in rows])

    def vectors(self, doc_ids: Sequence[str]) -> tuple[list[tuple[str, int]], np.ndarray]:
        """The vectors of ``doc_ids``, ``(document id, position)`` order, as one matrix."""
        rows = self._live_chunk_rows(set(doc_ids), [])
        return [(doc_id_of(r), r["pos"]) for r in rows], matrix([r["vec"] for r in rows])

    def chunks_at(self, keys: Sequence[tuple[str, int]]) -> list[Chunk]:
        """The chunks at ``(document id, position)`` ``keys``, in the order given."""
        live = self._live_writes()
        ids = []
        for doc_id, pos in keys:
            if doc_id not in live:
                raise KeyError(f"{doc_id}#{pos}")
            ids.append(f"{live[doc_id]}:{pos}")
        fields = ["doc", "pos", *TEXTS, "start", "stop", "escaped"]
        found = (
            {
                r["key"]: chunk_of(r)
                for r in self._client.get(self._chunks, ids=ids, output_fields=fields, **self._read)
            }
            if ids
            else {}
        )
        missing = [f"{d}#{p}" for (d, p), i in zip(keys, ids, strict=True) if i not in found]
        if missing:
            raise KeyError(missing[0])
        return [found[i] for i in ids]

    def nearest(
        self, vector: np.ndarray, k: int, live: dict[str, str] | None = None
    ) -> list[tuple[tuple[str, int], float]]:
        """The ``k`` live chunks nearest ``vector`` by the engine's own search, as
        ``((document id, position), cosine distance)``, nearest first, ties in key order.

        ``live``: document id → its committed write, the documents searched (default: every
        document with chunks, read from the records now). Orphans and other documents are
        skipped; the search is repeated with a larger limit until ``k`` remain or the index
        is exhausted.
        """
        if self._dimensions is None or k <= 0:
            return []
        if live is None:
            live = self._live_writes()
        limit = min(SEARCH_MAX, 2 * k + 16)
        while True:
            params = {"params": {"ef": max(self.ef, limit)}} if self.index_type == "HNSW" else {}
            (hits,) = self._client.search(
                self._chunks,
                data=[np.asarray(vector, dtype=np.float32).tolist()],
                limit=limit,
                anns_field="vec",
                search_params=params,
                output_fields=["doc", "write", "pos"],
                **self._read,
            )
            kept = []
            for hit in hits:
                row = hit["entity"]
                doc_id = doc_id_of(row)
                if live.get(doc_id) == row["write"]:
                    kept.append(((doc_id, int(row["pos"])), 1.0 - float(hit["distance"])))
            if len(kept) >= k or len(hits) < limit or limit == SEARCH_MAX:
                break
            limit = min(SEARCH_MAX, 4 * limit)
        kept.sort(key=lambda hit: (hit[1], hit[0]))
        return kept[:k]

    def engine_search(self, doc_ids: Sequence[str]) -> _EngineSearch:
        """The engine's own search (HNSW or FLAT, as the index was made) over ``doc_ids``;
        the records are read once, here."""
        wanted = set(doc_ids)
        records = [r for r in self.documents() if r.id in wanted]
        live = {d: w for d, w in self._live_writes().items() if d in wanted}
        return _EngineSearch(self, live, sum(r.chunk_count or 0 for r in records))

    def integrity(self, *, quick: bool = False) -> list[str]:
        """What the engine holds against what the records say: empty when sound.

        Quick: the collections exist. Full: also writes left pending by a writer that
        stopped, and orphan chunks (of no committed write).
        """
        problems = []
        for name in (self._records, self._chunks):
            if name == self._chunks and self._dimensions is None:
                continue
            if not self._client.has_collection(name):
                problems.append(f"its collection {name} is missing")
        if quick or problems:
            return problems
        pending = self._rows("pending:")
        if pending:
            problems.append(
                f"{len(pending)} writes were left unfinished by a writer that stopped "
                "(the next writer to open the index removes what they left)"
            )
        if self._dimensions is not None:
            live = set(self._live_writes().values())
            orphans = sum(
                1 for r in self._iterate(self._chunks, ["write"]) if r["write"] not in live
            )
            if orphans:
                problems.append(f"{orphans} chunks of no committed write (orphans) are stored")
        return problems

    def chunk_stats(self) -> dict[str, tuple[int, set[int]]]:
        """Per document id: (its live chunks stored, the set of their vector sizes in bytes)."""
        if self._dimensions is None:
            return {}
        live = self._live_writes()
        counts: dict[str, int] = {}
        for r in self._iterate(self._chunks, ["doc", "write"]):
            doc_id = doc_id_of(r)
            if live.get(doc_id) == r["write"]:
                counts[doc_id] = counts.get(doc_id, 0) + 1
        return {d: (n, {4 * self._dimensions}) for d, n in counts.items()}

    def close(self) -> None:
        if not self.readonly:
            for name in (self._records, self._chunks):
                if self._client.has_collection(name):
                    self._client.flush(name)
        if not self._shared:
            self._client.close()
            if self.where.local:  # Milvus Lite's server thread holds the folder's lock
                release_lite(self.where.uri)

    def __enter__(self) -> MilvusStore:
        return self

    def __exit__(self, kind, *_) -> None:
        try:
            if kind is None and not self.readonly:
                self.wait_indexed()
        finally:
            self.close()

    def wait_indexed(self, timeout: float = INDEX_WAIT_SECONDS) -> None:
        """On a server, flush the chunks and wait until the engine's vector index covers
        every row (pending rows none, indexed rows all); nothing to wait for on Milvus Lite.

        A server indexes a segment once it is sealed, in the background; until then it
        searches the segment's rows by brute force or a temporary index, whose recall is
        far lower (measured in ``benchmarks/bench_engine.py``: 0.48 against 0.99 at 5,000
        random vectors). Its query nodes load the finished index a few seconds later.
        """
        if self.where.local or not self._client.has_collection(self._chunks):
            return  # Milvus Lite, nothing written, or dropped (an interrupted rebuild's)
        self._client.flush(self._chunks)
        rows = (0, 0)

        def covered() -> bool | None:
            nonlocal rows
            info = self._client.describe_index(self._chunks, index_name="vec")
            rows = int(info.get("indexed_rows", 0)), int(info.get("total_rows", 0))
            done = int(info.get("pending_index_rows", 0)) == 0 and rows[0] >= rows[1]
            return True if done else None

        if not poll(covered, timeout, every=1.0):
            raise IndexNotIndexed(self.where, *rows, timeout)

    # --- generations (a rebuild beside the index, swapped in) ---------------------------

    @classmethod
    def fresh_generation(cls, where: MilvusLocation, index_type: str = "HNSW") -> MilvusStore:
        """A fresh, empty generation of the index ``where`` beside its current one (which
        may be damaged), searched by nobody until :meth:`promote`; a new index if none."""
        return cls(where, index_type=index_type, generation=f"g{uuid.uuid4().hex[:12]}")

    def promote(self) -> None:
        """Make this generation the index (one upsert of the pointer row, after its
        collections are flushed), then drop every other generation's collections."""
        for name in (self._records, self._chunks):
            if self._client.has_collection(name):
                self._client.flush(name)
        self.wait_indexed()  # searched by nobody yet: swapped in once its index is built
        self._write_pointer(self.generation, self.index_type)
        self._drop_other_generations()

    def drop(self) -> None:
        """Drop this generation's collections (an interrupted rebuild's)."""
        for name in (self._records, self._chunks):
            if self._client.has_collection(name):
                self._client.drop_collection(name)

    # --- rows ---------------------------------------------------------------------------

    def _read_pointer(self) -> dict | None:
        """The pointer row; None when there is no index of this name (or its creation was
        killed before the row was written)."""
        if not self._client.has_collection(self._pointer):
            if any(n.startswith(f"{self.where.name}__") for n in self._client.list_collections()):
                raise NotOurFile(self.where, "holds collections of this name that are not an index")
            return None
        self._client.load_collection(self._pointer)
        rows = self._client.get(
            self._pointer, ids=["current"], output_fields=["value"], **self._read
        )
        if not rows:
            return None
        alien = NotOurFile(self.where, f"has a collection {self._pointer} that is not an index's")
        try:
            data = json.loads(rows[0]["value"])
            mark, schema = data["application"], data["schema"]
        except (KeyError, TypeError, ValueError):
            raise alien from None
        if mark != MARK:
            raise alien
        if schema != SCHEMA:
            raise OtherSchema(self.where, schema)
        return data

    def _reads(self) -> dict[str, Any]:
        """The consistency every read of this store asks for (module docstring): strong for
        a writer and on Milvus Lite (which applies a write before answering it); at a
        timestamp the server allocates now for a reader on a server. A server that refuses to
        allocate one gets strong reads (slower, the same rows)."""
        if not self.readonly or self.where.local:
            return {"consistency_level": "Strong"}
        pymilvus = pymilvus_client_library()
        try:  # MilvusClient has no public call for it; its connection handler has
            stamp = self._client._get_connection().alloc_timestamp()
        except pymilvus.MilvusException:
            return {"consistency_level": "Strong"}
        return {"consistency_level": "Customized", "guarantee_timestamp": stamp}

    def _create_pointer(self, index_type: str) -> dict:
        """A new index: the pointer first (so a killed creation is recognised), then its
        first generation's records (created on open)."""
        if index_type not in ("HNSW", "FLAT"):
            raise ValueError(f"index type {index_type!r}: HNSW or FLAT")
        if not self._client.has_collection(self._pointer):
            self._create_keyed(self._pointer)
        return self._write_pointer(f"g{uuid.uuid4().hex[:12]}", index_type)

    def _write_pointer(self, generation: str, index_type: str) -> dict:
        data = {
            "application": MARK,
            "schema": SCHEMA,
            "generation": generation,
            "index_type": index_type,
        }
        self._client.upsert(
            self._pointer, [{"key": "current", "value": json.dumps(data), "v": PLACEHOLDER}]
        )
        return data

    def _create_keyed(self, name: str) -> None:
        DataType = pymilvus_client_library().DataType
        schema = self._client.create_schema(auto_id=False)
        schema.add_field("key", DataType.VARCHAR, is_primary=True, max_length=TEXT_MAX)
        schema.add_field("value", DataType.VARCHAR, max_length=TEXT_MAX)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=len(PLACEHOLDER))
        index = self._client.prepare_index_params()
        index.add_index(field_name="v", index_type="FLAT", metric_type="L2")
        self._client.create_collection(
            name, schema=schema, index_params=index, consistency_level="Strong"
        )

    def _create_chunks(self, dimensions: int) -> None:
        DataType = pymilvus_client_library().DataType
        schema = self._client.create_schema(auto_id=False)
        schema.add_field("key", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("doc", DataType.VARCHAR, max_length=TEXT_MAX)
        schema.add_field("write", DataType.VARCHAR, max_length=32)
        schema.add_field("pos", DataType.INT64)
        schema.add_field("section", DataType.VARCHAR, max_length=TEXT_MAX)
        schema.add_field("start", DataType.INT64)
        schema.add_field("stop", DataType.INT64)
        schema.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX)
        schema.add_field("content", DataType.VARCHAR, max_length=TEXT_MAX)
        schema.add_field("escaped", DataType.INT64)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=dimensions)
        index = self._client.prepare_index_params()
        params = HNSW_BUILD if self.index_type == "HNSW" else {}
        index.add_index(
            field_name="vec", index_type=self.index_type, metric_type="COSINE", params=params
        )
        self._client.create_collection(
            self._chunks, schema=schema, index_params=index, consistency_level="Strong"
        )
        self._dimensions = dimensions

    def _chunk_dimensions(self) -> int | None:
        if not self._client.has_collection(self._chunks):
            return None
        for f in self._client.describe_collection(self._chunks)["fields"]:
            if f["name"] == "vec":
                return int(f["params"]["dim"])
        raise IndexDamaged(self.where, f"its collection {self._chunks} has no vectors")

    def _load(self) -> None:
        for name in (self._records, self._chunks):
            if self._client.has_collection(name):
                self._client.load_collection(name)

    def _get(self, key: str) -> dict | None:
        rows = self._client.get(self._records, ids=[key], output_fields=["value"], **self._read)
        return rows[0] if rows else None

    def _upsert(self, key: str, value: str) -> None:
        if len(value.encode()) > TEXT_MAX:
            raise ValueError(
                f"a record of {len(value.encode()):,} bytes: Milvus keeps {TEXT_MAX:,}"
            )
        self._client.upsert(self._records, [{"key": key, "value": value, "v": PLACEHOLDER}])

    def _rows(self, prefix: str) -> dict[str, dict]:
        """Every records row whose key starts with ``prefix`` (a fixed word): key → JSON."""
        return {
            r["key"]: json.loads(r["value"])
            for r in self._iterate(self._records, ["value"], f'key like "{prefix}%"')
        }

    def _iterate(self, collection: str, fields: list[str], expr: str = "") -> Iterator[dict]:
        """Every row of ``collection`` matching ``expr``. A reader's rows of the records come
        from one query at its timestamp while they are fewer than Milvus's largest limit
        (pymilvus's iterator sets later pages' timestamps from this machine's clock, so each
        page waits again for the server); else, and for a writer, pages of a strong iterator.
        """
        if "guarantee_timestamp" in self._read and collection == self._records:
            rows = self._client.query(
                collection, filter=expr, output_fields=fields, limit=SEARCH_MAX, **self._read
            )
            if len(rows) < SEARCH_MAX:
                yield from rows
                return
        it = self._client.query_iterator(
            collection,
            batch_size=4096,
            filter=expr,
            output_fields=fields,
            consistency_level="Strong",
        )
        try:
            while batch := it.next():
                yield from batch
        finally:
            it.close()

    def _live_writes(self) -> dict[str, str]:
        """Document id → the write whose chunks are its chunks (indexed and stale documents)."""
        return {
            data["id"]: data["write"]
            for data in self._doc_rows().values()
            if data.get("write") is not None
        }

    def _doc_rows(self) -> dict[str, dict]:
        """Every document's row. A reader reads them once and keeps them (its view of the
        index, as a question is answered: one read, not one per step); a writer reads anew."""
        if not self.readonly:
            return self._rows("doc:")
        if self._snapshot is None:
            self._snapshot = self._rows("doc:")
        return self._snapshot

    def _live_write(self, doc_id: str) -> str | None:
        row = self._get(doc_key(doc_id))
        return None if row is None else json.loads(row["value"]).get("write")

    def _live_chunk_rows(self, wanted: set[str], fields: list[str]) -> list[dict]:
        if self._dimensions is None:
            return []
        live = {d: w for d, w in self._live_writes().items() if d in wanted}
        rows = [
            r
            for r in self._iterate(self._chunks, ["doc", "write", "pos", "vec", *fields])
            if live.get(doc_id_of(r)) == r["write"]
        ]
        rows.sort(key=lambda r: (doc_id_of(r), r["pos"]))
        return rows

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

    def _without_chunks(self, doc_id: str, commit) -> None:
        """``commit`` (a record change that leaves ``doc_id`` no chunks), then its old chunks
        deleted, under a pending row so that a killed process leaves only orphans."""
        write = uuid.uuid4().hex
        data = self._pending(write, doc_id, [self._live_write(doc_id)])
        live: object = _UNREAD
        try:
            commit()
            live = None
        finally:
            self._settle(write, data, live)

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

    def _drop_other_generations(self) -> None:
        prefix = f"{self.where.name}__"
        for name in self._client.list_collections():
            if name.startswith(prefix) and name != self._pointer:
                generation = name[len(prefix) :].split("__")[0]
                if generation != self.generation:
                    self._client.drop_collection(name)


@dataclass(frozen=True)
class _EngineSearch:
    """:meth:`MilvusStore.nearest` over a set of documents, as a retriever asks for it."""

    store: MilvusStore
    live: dict[str, str]
    """Document id → its committed write: the documents searched."""
    size: int
    """Their chunks, as their records count them."""

    def __len__(self) -> int:
        return self.size

    @property
    def label(self) -> str:
        if self.store.index_type == "FLAT":
            return f"{self.store.engine} FLAT (exact)"
        if self.store.where.local:
            # Its search time grows with the rows as a scan's does, recall near 1
            # (benchmarks/bench_engine.py: 8 ms at 10,000, 1.4 s at 1,000,000 vectors).
            return "Milvus Lite (HNSW asked for; it searches as FLAT, every vector)"
        build = ", ".join(f"{k} {v}" for k, v in HNSW_BUILD.items())
        return f"{self.store.engine} HNSW ({build}; ef max({self.store.ef}, 2k + 16))"

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[tuple[str, int], float]]:
        return self.store.nearest(vector, k, self.live)


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
        the ``replacing`` block ends."""
        self.record = DocumentRecord.indexed(
            self._doc_id, path, sha256, title, stamp, self._count, reading, pages
        )
        return self.record
