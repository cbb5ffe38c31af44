"""Everything the index, the indexer and the command line ask of storage: :class:`Store`.

A server-grade database can replace :class:`~rag_lab.app.store.sqlite.SQLiteStore` by
implementing these two protocols; nothing above storage names the SQLite class. The one
promise beyond reading and writing: a document is replaced whole or not at all
(:meth:`Store.replacing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np

from rag_lab.app.store.records import DocumentRecord, Pages, Stamp, Status
from rag_lab.chunking import Chunk
from rag_lab.errors import BadInput


class DocumentTooLarge(BadInput, ValueError):
    """A document past a limit of the store's engine; ``reason`` names the part and the
    limit. A :class:`DocumentWriter` raises it before its commit, so the document is left as
    it was; the indexer fails that document alone, with ``reason``, and goes on."""

    def __init__(self, doc_id: str, reason: str) -> None:
        super().__init__(f"{doc_id}: {reason}")
        self.doc_id = doc_id
        self.reason = reason


class DocumentWriter(Protocol):
    """Adds one document's chunks inside its transaction, then seals it with its record;
    either may raise :class:`DocumentTooLarge`."""

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


class Search(Protocol):
    """A vector search of a store's own (a vector engine's index)."""

    def __len__(self) -> int: ...

    label: str
    """How it searches, in a report (the engine, its index and parameters)."""

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[tuple[str, int], float]]:
        """The ``k`` chunks nearest ``vector`` as ``((document id, position), cosine
        distance)``, nearest first, ties in key order."""
        ...


class Store(Protocol):
    """The storage a persistent index needs.

    :meth:`replacing` opens a transaction in which the old chunks are dropped, the new ones
    written batch by batch, and the document's record set last; anything that stops it
    before :meth:`DocumentWriter.finish` (an exception, Ctrl-C, a killed process) leaves the
    previous state, never half a document. Faults are raised as the facts of
    :mod:`rag_lab.app.store.errors`.
    """

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def documents(self) -> list[DocumentRecord]: ...

    def document(self, doc_id: str) -> DocumentRecord | None: ...

    def replacing(self, doc_id: str) -> AbstractContextManager[DocumentWriter]: ...

    def fail(self, failed: Sequence[DocumentRecord]) -> None:
        """Record each of ``failed`` (:meth:`DocumentRecord.failure`) and drop its chunks,
        together: one transaction, or on Milvus one write generation per batch."""
        ...

    def set_status(self, doc_ids: Sequence[str], status: Status) -> None: ...

    def remove(self, doc_ids: Sequence[str]) -> None: ...

    def chunks(self, doc_ids: Sequence[str]) -> tuple[list[Chunk], np.ndarray]: ...

    def vectors(self, doc_ids: Sequence[str]) -> tuple[list[tuple[str, int]], np.ndarray]: ...

    def chunks_at(self, keys: Sequence[tuple[str, int]]) -> list[Chunk]: ...

    engine: str
    """The storage's name in messages (``SQLite``, ``Milvus Lite``, ``Milvus``)."""

    def engine_search(self, doc_ids: Sequence[str]) -> Search | None:
        """The store's own vector search over ``doc_ids``, or None: then the caller reads
        :meth:`vectors` and scans them exactly."""
        ...

    def integrity(self, *, quick: bool = False) -> list[str]:
        """The storage's own consistency check, one line per problem; empty when sound.
        ``quick``: a cheaper check, for use before every run."""
        ...

    def chunk_stats(self) -> dict[str, tuple[int, set[int]]]:
        """Per document id with stored chunks: (chunks stored, the set of vector sizes in bytes)."""
        ...

    def close(self) -> None: ...
