"""A persistent index stamped by what built it, and the one way to search it.

Vectors from two models, or from two chunkings, are not comparable: a distance between
them is a number with no meaning, and a half-migrated index returns confident nonsense.
So every document records the :class:`~rag_lab.app.store.Stamp` of its vectors, and
:func:`retriever` refuses to search when any document's stamp differs from the stamp
the query would be embedded with: it names the stale documents and says how to rebuild.
Failed documents hold no vectors and never block a search. Storage is behind
:class:`~rag_lab.app.store.Store`.

- ``recorded``: what the index records of how it was built: the encoder (one of
  :data:`~rag_lab.models.encoder.ENCODERS`) and its backend (torch, ONNX fp32 or int8:
  different fingerprints, so different stamps), so that a query is embedded by the encoder
  that built the index, chosen for every command by one rule (:func:`resolve_encoder`,
  :func:`resolve_backend`); and the PDF options of the last ``index`` run.
- ``health``: what it holds, seen with a stamp: :func:`status` (failed documents with their
  reasons, stale ones, stamps), :func:`describe`, and :func:`check`, its integrity check.

Everything is imported from here (``from rag_lab.app.index import …``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab import dense
from rag_lab.app.index.health import (
    WIDTH,
    IndexStatus,
    check,
    describe,
    is_stale,
    pages_label,
    status,
)
from rag_lab.app.index.recorded import (
    BACKEND_KEY,
    DEFAULT_BACKEND,
    ENCODER_KEY,
    LEGACY_BACKEND,
    BackendMismatch,
    DamagedMeta,
    EncoderMismatch,
    OneBackend,
    OnnxOnly,
    UnknownBackend,
    UnknownEncoder,
    record_pdf_options,
    recorded_backend,
    recorded_pdf_options,
    resolve_backend,
    resolve_encoder,
    stamped_backend,
)
from rag_lab.app.store import (
    BUSY_SECONDS,
    DocumentRecord,
    MilvusLocation,
    MilvusStore,
    Pages,
    SQLiteStore,
    Stamp,
    Status,
    Store,
)
from rag_lab.chunking import OVERLAP, TARGET
from rag_lab.citations import Hit, Paged
from rag_lab.environ import lock_seconds
from rag_lab.errors import UnusableIndex
from rag_lab.models.minilm import Fingerprint
from rag_lab.search import TextEncoder
from rag_lab.sources.folder import READER_VERSION

__all__ = [
    "BACKEND_KEY",
    "DEFAULT_BACKEND",
    "DEFAULT_PATH",
    "ENCODER_KEY",
    "INDEX_ENV",
    "LEGACY_BACKEND",
    "LISTED",
    "PIPELINE_VERSION",
    "STRATEGY",
    "WIDTH",
    "BackendMismatch",
    "DamagedMeta",
    "EmptyIndexError",
    "EncoderMismatch",
    "ExactScan",
    "IndexStatus",
    "Location",
    "OneBackend",
    "OnnxOnly",
    "StaleIndexError",
    "StoredRetriever",
    "UnknownBackend",
    "UnknownEncoder",
    "check",
    "current_stamp",
    "default_path",
    "describe",
    "open_index",
    "pages_label",
    "record_pdf_options",
    "recorded_backend",
    "recorded_pdf_options",
    "resolve_backend",
    "resolve_encoder",
    "retriever",
    "stamped_backend",
    "status",
]

STRATEGY = "E"
"""Chunking of the persistent index: boundaries + header, the chapter's best."""
PIPELINE_VERSION = f"chunk={STRATEGY}/{TARGET}/{OVERLAP};embed=minilm;v1"
"""Bump the trailing ``v1`` whenever chunking or embedding changes what a text's vector is."""
DEFAULT_PATH = Path(".rag_lab") / "index.sqlite"
INDEX_ENV = "RAG_LAB_INDEX"
LISTED = 10
"""Stale documents named in a refusal before "… and N more"."""


class EmptyIndexError(UnusableIndex, RuntimeError):
    """No document is indexed (the command line says what to run)."""


class StaleIndexError(UnusableIndex, RuntimeError):
    """Some documents were embedded with another stamp than the query would be."""

    def __init__(
        self, stale: Sequence[DocumentRecord], current: Stamp, total: int, folder: str | None
    ) -> None:
        self.stale = list(stale)
        names = ", ".join(r.id for r in self.stale[:LISTED])
        if len(self.stale) > LISTED:
            names += f" … and {len(self.stale) - LISTED} more (rag-lab status lists them)"
        changes = sorted({d for r in self.stale if r.stamp for d in r.stamp.differences(current)})
        verb = "is" if len(self.stale) == 1 else "are"
        super().__init__(
            f"refusing to search: {len(self.stale)} of {total} documents {verb} stale, embedded "
            f"with another stamp than this query ({'; '.join(changes)}), and vectors of "
            f"different stamps are not comparable. Stale: {names}. "
            f"Rebuild them: rag-lab index {folder or 'DIR'} --rebuild"
        )


def default_path() -> Path:
    """``$RAG_LAB_INDEX``, else ``.rag_lab/index.sqlite`` under the current directory."""
    return Path(os.environ.get(INDEX_ENV) or DEFAULT_PATH)


Location = Path | MilvusLocation
"""Where an index lives: a SQLite file, or an index name on Milvus (Lite or a server)."""


def open_index(where: Location | str | None = None, *, readonly: bool = False) -> Store:
    """The index at ``where`` (default :func:`default_path`), created if missing: a SQLite
    file, or a :class:`~rag_lab.app.store.MilvusLocation` (Milvus Lite or a server).

    ``readonly``: opened read-only and never created (for status and queries).
    """
    if isinstance(where, MilvusLocation):
        return MilvusStore(where, readonly=readonly, wait=lock_seconds(BUSY_SECONDS))
    return SQLiteStore(Path(where) if where is not None else default_path(), readonly=readonly)


def current_stamp(fingerprint: Fingerprint, pipeline_version: str = PIPELINE_VERSION) -> Stamp:
    """The stamp that vectors made now, by this model and pipeline, carry."""
    fp = fingerprint
    return Stamp(fp.name, fp.key, fp.dimensions, pipeline_version, READER_VERSION)


def retriever(
    store: Store, encoder: TextEncoder, pipeline_version: str = PIPELINE_VERSION
) -> StoredRetriever:
    """Dense retrieval over every indexed document; refuses a stale or empty index.

    Reads the vectors once, in one query, and a hit's text only when it is returned, so
    the store must stay open while the retriever is used. Raises :class:`StaleIndexError`
    if any document's stamp differs from the encoder's and ``pipeline_version``;
    :class:`EmptyIndexError` if nothing is indexed.
    """
    current = current_stamp(encoder.fingerprint, pipeline_version)
    records = store.documents()
    stale = [r for r in records if is_stale(r, current)]
    if stale:
        raise StaleIndexError(stale, current, len(records), store.meta("folder"))
    ids = [r.id for r in records if r.status is Status.INDEXED]
    if not ids:
        raise EmptyIndexError("nothing is indexed yet")
    search = store.engine_search(ids)
    if search is None:  # the store has no vector search of its own: scan every vector
        search = ExactScan(*store.vectors(ids))
    titles = {r.id: r.title for r in records}
    paged = {r.id: paged_of(r.path, r.pages) for r in records if r.pages is not None}
    return StoredRetriever(store, search, encoder, titles, paged)


@dataclass(frozen=True)
class ExactScan:
    """Every vector in memory, scanned exactly (:func:`rag_lab.dense.nearest`): how a SQLite
    index is searched, and what the chapter measured."""

    keys: list[tuple[str, int]]
    """``(document id, position)`` of each row of :attr:`vectors`."""
    vectors: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)

    label = "exact scan (every vector, float32)"

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[tuple[str, int], float]]:
        return [(self.keys[i], d) for i, d in dense.nearest(vector, self.vectors, k)]


def paged_of(path: str, pages: Pages) -> Paged:
    """How a PDF's chunks are cited: its file, page starts, and its flagged OCR pages."""
    doubtful = []
    for n in pages.flagged:
        c = pages.confidences[n - 1]
        why = f"OCR mean word confidence {c:.0f}, under {pages.min_confidence:g}"
        doubtful.append((n, "OCR found no words" if math.isnan(c) else why))
    return Paged(path, pages.starts, tuple(doubtful))


@dataclass(frozen=True)
class StoredRetriever:
    """Cosine search over an index's vectors; the texts of the hits are read from the store.

    Ranks as :class:`~rag_lab.search.DenseRetriever` does (ties in document id, then
    position order), without holding every chunk's text in memory. ``search`` is an
    :class:`ExactScan` for SQLite, the engine's own (approximate) search for Milvus.
    """

    store: Store
    search: ExactScan | Any
    """Has ``nearest(vector, k)`` → ``[((document id, position), distance)]`` and ``len()``."""
    encoder: TextEncoder
    titles: dict[str, str]
    """Document id → document name, for citations."""
    paged: dict[str, Paged] = field(default_factory=dict)
    """Document id → its pages, for PDFs (their citations name the file and the page)."""

    @property
    def size(self) -> int:
        """The chunks searched."""
        return len(self.search)

    def nearest(self, question: str, k: int) -> list[Hit]:
        top = self.search.nearest(self.encoder.encode([question])[0], k)
        chunks = self.store.chunks_at([key for key, _ in top])
        return [
            Hit(c, self.titles[c.doc_id], d, self.paged.get(c.doc_id))
            for c, (_, d) in zip(chunks, top, strict=True)
        ]
