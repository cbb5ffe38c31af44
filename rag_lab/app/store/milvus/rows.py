"""How a document's record and its chunks are written as Milvus rows, and read back.

Document ids are stored as JSON with ASCII escapes, so file names that are not UTF-8 (held
by Python as surrogates) survive; a chunk's strings that are not UTF-8 are kept as JSON too,
flagged bit by bit in its ``escaped`` field. Rows are keyed by digests and write ids (hex),
the only values that ever reach a filter expression.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from rag_lab.app.store.records import DocumentRecord, Pages, Stamp, Status
from rag_lab.chunking import Chunk

TEXT_MAX = 65_535
"""Milvus's longest VARCHAR, in bytes of UTF-8."""
PLACEHOLDER = [0.0, 0.0]
"""The vector of a records row: Milvus wants a vector field in every collection."""


def doc_key(doc_id: str) -> str:
    """A document's records key: a digest, since client libraries quote keys into filter
    expressions (an id may hold quotes, backslashes or surrogates)."""
    return "doc:" + hashlib.sha256(json.dumps(doc_id).encode()).hexdigest()[:40]


def doc_id_of(row: dict) -> str:
    return json.loads(row["doc"])


TEXTS = ("section", "text", "content")
"""A chunk's strings, in the order of their bits in its ``escaped`` field."""


def is_utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def chunk_of(row: dict) -> Chunk:
    texts = {
        name: json.loads(row[name]) if row["escaped"] >> bit & 1 else row[name]
        for bit, name in enumerate(TEXTS)
    }
    return Chunk(
        doc_id_of(row),
        int(row["pos"]),
        texts["text"],
        texts["content"],
        texts["section"],
        int(row["start"]),
        int(row["stop"]),
    )


def matrix(vectors: list) -> np.ndarray:
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(vectors, dtype=np.float32)


def record_json(r: DocumentRecord, write: str | None) -> dict:
    return {
        "id": r.id,
        "path": r.path,
        "sha256": r.sha256,
        "status": str(r.status),
        "reason": r.reason,
        "title": r.title,
        "stamp": None if r.stamp is None else vars(r.stamp),
        "chunk_count": r.chunk_count,
        "updated_at": r.updated_at,
        "reading": r.reading,
        "pages": None if r.pages is None else r.pages.to_json(),
        "write": write,
    }


def record_of(data: dict) -> DocumentRecord:
    return DocumentRecord(
        data["id"],
        data["path"],
        data["sha256"],
        Status(data["status"]),
        data["reason"],
        data["title"],
        None if data["stamp"] is None else Stamp(**data["stamp"]),
        data["chunk_count"],
        data["updated_at"],
        data["reading"],
        None if data["pages"] is None else Pages.from_json(data["pages"]),
    )


_PARTS = {"doc": "its id", "section": "its heading", "text": "its text", "content": "its text"}
"""A chunk row's text fields, as :func:`oversize` names them."""
_RECORD_PARTS = {"title": "its title", "pages": "its page table", "path": "its path"}
"""The parts of a record that grow with the document, as :func:`oversize` names them."""


def oversize(row: dict, record: bool = False) -> str | None:
    """Why a chunk row (or, ``record``, a record's JSON fields) is past :data:`TEXT_MAX`
    bytes of UTF-8 in a field, naming the part; None when it fits."""
    if record:
        size = len(json.dumps(row).encode())
        if size <= TEXT_MAX:
            return None
        part = max(_RECORD_PARTS, key=lambda k: len(json.dumps(row[k])))
        length = len(json.dumps(row[part]).encode())
        return (
            f"its record is {size:,} bytes ({_RECORD_PARTS[part]}: {length:,}), and Milvus "
            f"keeps {TEXT_MAX:,} in a text field"
        )
    for name, part in _PARTS.items():
        size = len(row[name].encode("utf-8", "surrogatepass"))
        if size > TEXT_MAX:
            return (
                f"a chunk's {part.removeprefix('its ')} is {size:,} bytes, and Milvus keeps "
                f"{TEXT_MAX:,} in a text field"
            )
    return None


def chunk_row(write: str, doc: str, c: Chunk, vector: np.ndarray) -> dict:
    """The row of chunk ``c`` of write ``write``; ``doc``: its document id as JSON."""
    row = {
        "key": f"{write}:{c.index}",
        "doc": doc,
        "write": write,
        "pos": c.index,
        "start": c.start,
        "stop": c.end,
        "escaped": 0,
        "vec": np.asarray(vector, dtype=np.float32).tolist(),
    }
    for bit, name in enumerate(TEXTS):
        value = getattr(c, name)
        if not is_utf8(value):  # surrogates (a name that is not UTF-8): kept as JSON
            value = json.dumps(value)
            row["escaped"] |= 1 << bit
        row[name] = value
    return row
