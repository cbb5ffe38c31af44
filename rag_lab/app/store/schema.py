"""The index's SQLite schema: its version, its marks, its tables, and how older ones upgrade.

Schema 3 added, per document, how its file was read (``reading``: the PDF extractor and
its library's version, or the text reader's) and, for a PDF, its
:class:`~rag_lab.app.store.records.Pages` (where each page starts, running lines removed,
OCR confidences) as JSON. An index of schema 2 is upgraded in place by the first writer
(two columns added, each row marked as read by the text reader its stamp names, as it
was: schema 2 read no PDFs; nothing re-embedded); until then a reader reads it as it is,
with no pages (:data:`COLUMNS_BEFORE_3`). Any other schema is refused.
"""

from __future__ import annotations

SCHEMA_VERSION = "3"
"""2: stamps carry the version of the file reader (was: the book extractor's). 3: documents
record how their file was read and, for PDFs, their pages."""
UPGRADABLE = ("2",)
"""Older schemas upgraded in place (:data:`UPGRADES`)."""
APPLICATION_ID = 0x5241474C
"""``RAGL``: SQLite's ``PRAGMA application_id`` of every rag-lab index."""
TABLES = {"meta", "documents", "chunks"}
"""The tables of an index: an unmarked file with exactly these is an index older than the marks."""

TABLES_SQL = """
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

COLUMNS = (
    "id, path, sha256, status, reason, title, model_name, model_key, dimensions, "
    "pipeline_version, reader_version, chunk_count, updated_at, reading, pages"
)
"""The columns of ``documents``, in the order a record is read and written."""
COLUMNS_BEFORE_3 = COLUMNS.replace("reading, pages", "NULL, NULL")
"""What a reader selects from a schema-2 index that no writer has upgraded yet."""
UPGRADES = {
    "2": (
        "ALTER TABLE documents ADD COLUMN reading TEXT",
        "ALTER TABLE documents ADD COLUMN pages TEXT",
        # Schema 2 read only text files: each row was read by the text reader its stamp names.
        "UPDATE documents SET reading = 'text reader ' || reader_version "
        "WHERE status != 'failed' AND reader_version IS NOT NULL",
    )
}
"""What turns each :data:`UPGRADABLE` schema into this one, statement by statement."""
