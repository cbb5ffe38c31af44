"""What a :class:`~rag_lab.app.store.milvus.store.MilvusStore` reads: its meta, its records,
its live chunks and their vectors, the engine's nearest-neighbour search, and its integrity.

What a read sees (:meth:`Reads._reads`): a writer's reads are strongly consistent, each sees
every write acknowledged before it; a reader on a server takes one timestamp from the server
as it opens, and each of its reads is served once the engine has applied every write
acknowledged before that timestamp. Only the first read waits for that; a strong read waits
for the server's next time tick each time (~200 ms on Milvus 2.3.5). Only a document's live
chunks are read: those of the write its record names (:mod:`.writes`), never an orphan.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rag_lab.app.store.milvus.connection import pymilvus_client_library
from rag_lab.app.store.milvus.generations import generation_of
from rag_lab.app.store.milvus.rows import TEXTS, chunk_of, doc_id_of, doc_key, matrix, record_of
from rag_lab.app.store.records import DocumentRecord
from rag_lab.chunking import Chunk

if TYPE_CHECKING:
    from rag_lab.app.store.milvus.store import MilvusStore

HNSW_BUILD = {"M": 16, "efConstruction": 128}
"""The approximate index's graph: 16 links per node, 128 candidates while building."""
HNSW_EF = 128
"""Candidates per search (at least the limit asked of the engine): the recall/latency knob.
Another for one store: ``MilvusStore(..., ef=N)``."""
SEARCH_MAX = 16_384
"""Milvus's largest ``limit`` of one search."""


class Reads:
    """The reads of :class:`~rag_lab.app.store.milvus.store.MilvusStore` (a part of it: the
    collections and the client it reads are the store's)."""

    def meta(self, key: str) -> str | None:
        row = self._get(f"meta:{key}")
        return None if row is None else row["value"]

    def documents(self) -> list[DocumentRecord]:
        return sorted((record_of(v) for v in self._doc_rows().values()), key=lambda r: r.id)

    def document(self, doc_id: str) -> DocumentRecord | None:
        row = self._get(doc_key(doc_id))
        return None if row is None else record_of(json.loads(row["value"]))

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
        names = self._client.list_collections()
        others = {generation_of(self.where.name, n) for n in names} - {None, self.generation}
        if others:
            problems.append(
                f"collections of generation{'s' * (len(others) > 1)} "
                f"{', '.join(sorted(others))}, not the current one, are stored: a rebuild "
                "that stopped, or on a server one still running (the next writer drops a "
                "stopped one's)"
            )
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

    # --- rows ---------------------------------------------------------------------------

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

    def _get(self, key: str) -> dict | None:
        rows = self._client.get(self._records, ids=[key], output_fields=["value"], **self._read)
        return rows[0] if rows else None

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
