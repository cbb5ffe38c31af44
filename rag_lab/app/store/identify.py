"""Is this file a rag-lab index? Read from its SQLite header, before anything is written.

An index is marked in its header: ``application_id`` :data:`~.schema.APPLICATION_ID`,
``user_version`` its schema. A file without the marks is an index only if it holds
exactly the index's tables (one written before the marks); anything else (a folder, an
empty file, not SQLite, another program's database, another schema) is refused naming
what it is, and never touched.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

from rag_lab.app.store.connection import BUSY_SECONDS, Connection
from rag_lab.app.store.errors import (
    IndexDamaged,
    IndexInaccessible,
    NotAFile,
    NotOurFile,
    OtherSchema,
)
from rag_lab.app.store.schema import APPLICATION_ID, SCHEMA_VERSION, TABLES, UPGRADABLE

_HEADER = b"SQLite format 3\x00"


class FileKind(StrEnum):
    """What :func:`inspect_file` found at a path."""

    MISSING = "missing"
    OURS = "ours"
    """Marked as a rag-lab index of a schema this version reads or upgrades."""
    UNMARKED = "unmarked"
    """A rag-lab index older than the marks (its tables, ``application_id`` 0)."""


def inspect_file(path: Path) -> FileKind:
    """What is at ``path``: raises :class:`~.errors.NotOurFile` (or :class:`~.errors.OtherSchema`)
    naming what the file is when it is not a rag-lab index.

    Reads the file's header and, for an unmarked SQLite file, its table names, read-only.
    """
    if path.is_dir():
        raise NotAFile(path)
    if path.is_symlink() and not path.exists():  # creating the index would write elsewhere
        raise NotOurFile(path, f"is a broken symbolic link (to {os.readlink(path)})")
    if not path.exists():
        return FileKind.MISSING
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as err:
        raise IndexInaccessible(path, f"cannot read {path}: {err.strerror or err}") from None
    if not header:
        raise NotOurFile(path, "is an empty file, not a rag-lab index")
    if not header.startswith(_HEADER) or len(header) < 100:
        raise NotOurFile(path, "is not a rag-lab index (not an SQLite database)")
    app_id = int.from_bytes(header[68:72], "big")
    version = int.from_bytes(header[60:64], "big", signed=True)
    if app_id == APPLICATION_ID:
        if version != int(SCHEMA_VERSION) and str(version) not in UPGRADABLE:
            raise OtherSchema(path, version)
        return FileKind.OURS
    if app_id != 0:
        raise NotOurFile(
            path,
            f"is another program's SQLite database (application_id {app_id:#x}), "
            "not a rag-lab index",
        )
    tables = _tables(path)
    if tables != TABLES:
        names = ", ".join(sorted(tables)) or "no tables"
        raise NotOurFile(
            path, f"is an SQLite database of another program (tables: {names}), not a rag-lab index"
        )
    return FileKind.UNMARKED


def _tables(path: Path) -> set[str]:
    """The table names of an SQLite file, read-only; one that cannot be read is not ours."""
    db = Connection(path, readonly=True, timeout=BUSY_SECONDS)
    try:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except IndexDamaged as err:  # SQLite cannot read it as a database
        raise NotOurFile(path, f"is not a rag-lab index ({err.what})") from None
    finally:
        db.close()
