"""The :class:`~rag_lab.app.store.protocol.Store` on Milvus: Milvus Lite in a local folder, or
a Milvus server or cluster at ``http://host:19530``, through the same client (``pymilvus``).

An index is a *name* (default :data:`~rag_lab.app.store.milvus.connection.DEFAULT_NAME`) in
one Milvus database; it owns the collections whose names start ``<name>__``:

- ``<name>__current``: one row, the index's marks (application, schema) and which
  *generation* is the index now. A rebuild writes a new generation beside it and swaps this
  pointer when it is complete (:mod:`.generations`).
- ``<name>__<generation>__records``: a row per document (its
  :class:`~rag_lab.app.store.records.DocumentRecord` as JSON), a row per meta key, and a row
  per write in progress (*pending*).
- ``<name>__<generation>__chunks``: a row per chunk, its text and its vector, with an
  approximate index (HNSW, :data:`~.reads.HNSW_BUILD`) or an exact one (``FLAT``).

:class:`MilvusStore` opens an index (created if missing), creates its collections, and
flushes and closes them; what it does in between is in three parts: :mod:`.writes` (a
document replaced whole by write generations, and what a killed writer left settled),
:mod:`.reads` (what a read sees; the records, the chunks, the engine's search) and
:mod:`.generations` (the pointer; a rebuild swapped in). How rows are encoded is
:mod:`.rows`'s; where an index lives and how it is reached, :mod:`.connection`'s.

Milvus Lite lets one process open a folder at a time: a second waits
``$RAG_LAB_LOCK_TIMEOUT`` seconds, then is refused
(:class:`~rag_lab.app.store.errors.IndexLocked`), readers included. On a server, any number
of readers run beside a writer; rag-lab does not lock a server index across machines (run
one indexer per index name).
"""

from __future__ import annotations

from typing import Any

from rag_lab.app.store.errors import IndexContended, IndexDamaged, IndexMissing, IndexNotIndexed
from rag_lab.app.store.lock import poll
from rag_lab.app.store.milvus.connection import (
    MilvusLocation,
    connect,
    pymilvus_client_library,
    release_lite,
)
from rag_lab.app.store.milvus.generations import Generations
from rag_lab.app.store.milvus.reads import HNSW_BUILD, HNSW_EF, Reads
from rag_lab.app.store.milvus.rows import PLACEHOLDER, TEXT_MAX
from rag_lab.app.store.milvus.writes import Writes

INDEX_WAIT_SECONDS = 3600.0
"""How long a writer on a server waits for the engine to index what it wrote."""


class MilvusStore(Reads, Writes, Generations):
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
                self._check_current()
        finally:
            self.close()

    def _check_current(self) -> None:
        """On a server, where rag-lab takes no lock, refuse to end a write quietly when
        another process swapped in another generation meanwhile (a rebuild): what this one
        wrote went into the generation it replaced."""
        pointer = None if self.where.local else self._read_pointer()
        if pointer is not None and pointer["generation"] != self.generation:
            raise IndexContended(
                self.where,
                f"it was rebuilt meanwhile, and what this run wrote went into the generation "
                f"it replaced, {self.generation}",
            )

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

    # --- collections --------------------------------------------------------------------

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
