"""The generations of a :class:`~rag_lab.app.store.milvus.store.MilvusStore`: the pointer row
that marks an index as rag-lab's and names its current generation, and a rebuild's fresh
generation beside it, swapped in when complete (:meth:`Generations.fresh_generation`,
:meth:`Generations.promote`).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import TYPE_CHECKING

from rag_lab.app.store.errors import NotOurFile, OtherSchema
from rag_lab.app.store.milvus.connection import MilvusLocation
from rag_lab.app.store.milvus.rows import PLACEHOLDER

if TYPE_CHECKING:
    from rag_lab.app.store.milvus.store import MilvusStore

MARK = "rag-lab index"
"""The ``application`` of every rag-lab index's pointer row."""
SCHEMA = "milvus-1"
"""The layout of collections and rows this package writes and reads."""
_GENERATION = r"g[0-9a-f]{12}"
"""A generation's name, :func:`new_generation`'s: ``g`` and 12 hex digits."""


def new_generation() -> str:
    """A fresh generation's name, unique among an index's."""
    return f"g{uuid.uuid4().hex[:12]}"


def generation_of(name: str, collection: str) -> str | None:
    """The generation of the index ``name`` that ``collection`` belongs to, when it is
    exactly ``<name>__<generation>__records`` or ``__chunks``; else None (another index's,
    or not rag-lab's). Matched whole, never by prefix: ``a__`` begins ``a___g…``, the
    collections of an index ``a_`` that an earlier version allowed."""
    found = re.fullmatch(rf"{re.escape(name)}__({_GENERATION})__(?:records|chunks)", collection)
    return found[1] if found else None


class Generations:
    """The pointer and the generations of
    :class:`~rag_lab.app.store.milvus.store.MilvusStore` (a part of it: the collections and
    the client are the store's)."""

    @classmethod
    def fresh_generation(cls, where: MilvusLocation, index_type: str = "HNSW") -> MilvusStore:
        """A fresh, empty generation of the index ``where`` beside its current one (which
        may be damaged), searched by nobody until :meth:`promote`; a new index if none."""
        return cls(where, index_type=index_type, generation=new_generation())

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
            names = self._client.list_collections()
            if any(generation_of(self.where.name, n) for n in names):
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

    def _create_pointer(self, index_type: str) -> dict:
        """A new index: the pointer first (so a killed creation is recognised), then its
        first generation's records (created on open)."""
        if index_type not in ("HNSW", "FLAT"):
            raise ValueError(f"index type {index_type!r}: HNSW or FLAT")
        if not self._client.has_collection(self._pointer):
            self._create_keyed(self._pointer)
        return self._write_pointer(new_generation(), index_type)

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

    def _drop_other_generations(self) -> None:
        for name in self._client.list_collections():
            generation = generation_of(self.where.name, name)
            if generation is not None and generation != self.generation:
                self._client.drop_collection(name)
