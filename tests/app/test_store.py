# ruff: noqa: E501  (the case table reads best one row per line)
"""Storage raises facts: each fault of an index file is its own class, naming the file,
never a command or an option (those are the command line's words), and no SQLite error
leaves the store as SQLite's own."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rag_lab.app.store import (
    DiskFull,
    IndexBusy,
    IndexDamaged,
    IndexInaccessible,
    IndexLocked,
    IndexMissing,
    IndexReadOnly,
    NotAFile,
    NotOurFile,
    OtherSchema,
    SQLiteStore,
    Stamp,
    StoreError,
    writer_lock,
)
from rag_lab.app.store.connection import fact
from rag_lab.chunking import Chunk
from rag_lab.errors import UnusableIndex

ADVICE = re.compile(r"--\w|rag-lab (?:index [A-Z/.-]|status|retry|ask|evaluate)|run again|choose")
"""What a fact must not say: an option, a command, what to do."""


def index_at(path: Path) -> Path:
    with SQLiteStore(path) as store:
        with store.replacing("d") as w:
            w.add([Chunk("d", 0, "t", "c", "S", 0, 1)], np.ones((1, 2), dtype=np.float32))
            w.finish("d.md", "sha", "T", Stamp("m", "k", 2, "p", "1"))
    return path


def raised(make) -> StoreError:
    with pytest.raises(StoreError) as caught:
        make()
    return caught.value


def text(path: Path) -> Path:
    path.write_text("my notes, not a database\n" * 20)
    return path


def under_a_file(path: Path) -> Path:
    path.write_text("a file where the index's folder should be")
    return path / "i.sqlite"


def foreign(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (x)")
    return path


def other_app(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA application_id = 1234")
        db.execute("CREATE TABLE t (x)")
    return path


def other_schema(path: Path) -> Path:
    index_at(path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 1")
    return path


def mixed_vectors(path: Path) -> Path:
    index_at(path)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO chunks VALUES ('d', 1, 'S', 0, 1, 't', 'c', zeroblob(12))")
    return path


def corrupt(path: Path) -> Path:
    """Every byte after the first page scrambled: the header still says ours."""
    index_at(path)
    data = bytearray(path.read_bytes())
    for at in range(int.from_bytes(data[16:18], "big"), len(data)):
        data[at] = (data[at] * 31 + 7) % 256
    path.write_bytes(bytes(data))
    return path


def read_vectors(path: Path) -> None:
    with SQLiteStore(path, readonly=True) as store:
        store.vectors(["d"])


CASES = [
    # (id, what is done, the fact, a fragment of its message)
    ("missing", lambda p: SQLiteStore(p, readonly=True), IndexMissing, "no index at"),
    ("a folder", lambda p: p.mkdir() or SQLiteStore(p), NotAFile, "is a folder, not an index file"),
    ("empty", lambda p: p.write_bytes(b"") or SQLiteStore(p), NotOurFile, "is an empty file"),
    ("text", lambda p: SQLiteStore(text(p)), NotOurFile, "(not an SQLite database)"),
    ("foreign tables", lambda p: SQLiteStore(foreign(p)), NotOurFile, "(tables: notes)"),
    ("foreign app id", lambda p: SQLiteStore(other_app(p)), NotOurFile, "application_id 0x4d2"),
    ("other schema", lambda p: SQLiteStore(other_schema(p)), OtherSchema, "schema 1; this rag_lab reads 3"),
    ("mixed vectors", lambda p: read_vectors(mixed_vectors(p)), IndexDamaged, "(vectors of different sizes)"),
    ("corrupt", lambda p: SQLiteStore(corrupt(p), readonly=True).documents(), IndexDamaged, "is damaged (database disk image is malformed)"),
    ("write a reader", lambda p: SQLiteStore(index_at(p), readonly=True).set_meta("k", "v"), IndexReadOnly, "(attempt to write a readonly database)"),
    ("folder a file", lambda p: SQLiteStore(under_a_file(p)), IndexInaccessible, "cannot create the folder of"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "kind", "fragment"), [pytest.param(*row[1:], id=row[0]) for row in CASES]
)
def test_each_fault_is_a_fact_without_advice(tmp_path, make, kind, fragment):
    err = raised(lambda: make(tmp_path / "i.sqlite"))
    assert type(err) is kind and isinstance(err, UnusableIndex)
    assert fragment in str(err)
    assert err.path.name == "i.sqlite" and str(err.path) in str(err)
    assert not ADVICE.search(str(err)), str(err)


def test_a_lock_held_by_another_connection_is_index_locked(tmp_path):
    path = index_at(tmp_path / "i.sqlite")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        err = raised(lambda: SQLiteStore(path, timeout=0.1))
    finally:
        other.close()
    assert type(err) is IndexLocked
    assert str(err) == f"the index {path} is locked by another process (waited 0.1 s)"
    assert isinstance(err.__cause__, sqlite3.OperationalError)  # kept for --debug


def test_a_second_writer_is_index_busy_naming_the_first(tmp_path):
    path = tmp_path / "i.sqlite"
    with writer_lock(path):
        with pytest.raises(IndexBusy) as caught, writer_lock(path, timeout=0.1):
            pass
    err = caught.value
    assert err.holder.startswith("pid ") and err.waited == 0.1
    assert str(err).startswith(f"{path} is being written by another rag-lab (pid ")
    assert not ADVICE.search(str(err))


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (sqlite3.SQLITE_BUSY, IndexLocked),
        (sqlite3.SQLITE_LOCKED, IndexLocked),
        (sqlite3.SQLITE_READONLY, IndexReadOnly),
        (sqlite3.SQLITE_READONLY | (4 << 8), IndexReadOnly),  # extended: READONLY_DBMOVED
        (sqlite3.SQLITE_IOERR, IndexInaccessible),
        (sqlite3.SQLITE_FULL, DiskFull),
        (sqlite3.SQLITE_CANTOPEN, IndexInaccessible),
        (sqlite3.SQLITE_CORRUPT, IndexDamaged),
        (sqlite3.SQLITE_NOTADB, IndexDamaged),
        (None, IndexDamaged),
    ],
)
def test_sqlite_errors_become_facts_by_result_code(code, kind):
    err = sqlite3.OperationalError("what SQLite said")
    if code is not None:
        err.sqlite_errorcode = code
    got = fact(err, Path("i.sqlite"), waited=2.0)
    assert type(got) is kind
    assert "i.sqlite" in str(got) and not ADVICE.search(str(got))
