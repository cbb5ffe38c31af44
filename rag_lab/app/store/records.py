"""What an index records per document: its status, the stamp of its vectors, its pages.

Frozen records, written and read by a :class:`~rag_lab.app.store.protocol.Store`; they
know nothing of SQLite.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum


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
    """UTC time of the last change, ISO 8601 to the second (:func:`now`)."""
    reading: str | None = None
    """How the file was read (:attr:`rag_lab.sources.folder.Read.reading`); None if it failed."""
    pages: Pages | None = None
    """For a PDF: its pages; None for unpaginated text and failed documents."""

    @classmethod
    def indexed(
        cls,
        doc_id: str,
        path: str,
        sha256: str,
        title: str,
        stamp: Stamp,
        chunk_count: int,
        reading: str | None = None,
        pages: Pages | None = None,
    ) -> DocumentRecord:
        """The record a writer seals a document with: indexed now, ``chunk_count`` chunks."""
        return cls(
            doc_id,
            path,
            sha256,
            Status.INDEXED,
            None,
            title,
            stamp,
            chunk_count,
            now(),
            reading,
            pages,
        )

    @classmethod
    def failure(cls, doc_id: str, path: str, sha256: str | None, reason: str) -> DocumentRecord:
        """The record of a document that failed now, with its reason (no chunks)."""
        return cls(doc_id, path, sha256, Status.FAILED, reason, "", None, None, now())


def now() -> str:
    """The current UTC time as records hold it: ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")
