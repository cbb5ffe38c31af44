"""The index's lifecycle: one backend rule, writability, the writer, the rebuild and its swap."""

from __future__ import annotations

import sqlite3

import pytest
from fakes import GOOD, HashEncoder, write

from rag_lab.app import index, ingest, lifecycle
from rag_lab.app.index import DEFAULT_BACKEND, BackendMismatch, UnknownBackend, resolve_backend
from rag_lab.app.store import IndexDamaged, IndexMissing, IndexReadOnly, NotOurFile, SQLiteStore
from rag_lab.sources.folder import IngestError

NO_INDEX = "no index"
EMPTY = "empty index"


@pytest.fixture
def held(tmp_path, request):
    """A store whose meta records the backend ``request.param`` (or no store, or none)."""
    if request.param == NO_INDEX:
        yield None
        return
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        store.set_meta("folder", "/docs")
        if request.param != EMPTY:
            store.set_meta(index.BACKEND_KEY, request.param)
        yield store


OTHER = "onnx-int8" if DEFAULT_BACKEND != "onnx-int8" else "onnx"

RULE = [
    # (--backend, what the index holds, rebuild, the backend or the refusal)
    (None, NO_INDEX, False, DEFAULT_BACKEND),
    (None, EMPTY, False, DEFAULT_BACKEND),
    ("torch", NO_INDEX, False, "torch"),
    ("torch", EMPTY, False, "torch"),
    (None, "torch", False, "torch"),  # ask, status, retry, index: the index's
    ("torch", "torch", False, "torch"),
    (OTHER, "torch", False, BackendMismatch),  # another one is refused, not preferred
    (OTHER, "torch", True, OTHER),  # a rebuild re-embeds everything: it may change it
    (None, "torch", True, "torch"),  # ... and keeps the index's otherwise
    (None, NO_INDEX, True, DEFAULT_BACKEND),
    (None, "tpu", False, UnknownBackend),
    ("torch", "tpu", False, UnknownBackend),
    (None, "tpu", True, DEFAULT_BACKEND),  # a rebuild replaces an unknown one
    ("torch", "tpu", True, "torch"),
]


@pytest.mark.parametrize(
    ("requested", "held", "rebuild", "expected"), RULE, indirect=["held"], ids=str
)
def test_one_backend_rule(requested, held, rebuild, expected):
    if isinstance(expected, type):
        with pytest.raises(expected) as caught:
            resolve_backend(requested, held, rebuild=rebuild)
        assert caught.value.folder == "/docs"
    else:
        assert resolve_backend(requested, held, rebuild=rebuild) == expected


def test_a_mismatch_names_both_backends_and_no_option(tmp_path):
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        store.set_meta(index.BACKEND_KEY, "torch")
        with pytest.raises(BackendMismatch) as caught:
            resolve_backend(OTHER, store)
    err = caught.value
    assert (err.held, err.requested, err.folder) == ("torch", OTHER, None)
    assert "--" not in str(err)


def test_an_unwritable_place_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "index.sqlite"
    writable: set = set()
    monkeypatch.setattr(lifecycle.os, "access", lambda p, mode: p in writable)
    with pytest.raises(IndexReadOnly, match=f"the folder {tmp_path} is read-only$"):
        lifecycle.check_writable(path)  # nothing exists: the nearest folder that does
    path.parent.mkdir()
    path.write_bytes(b"")
    with pytest.raises(IndexReadOnly, match=f"the file {path} is read-only$"):
        lifecycle.check_writable(path)
    writable.add(path)
    with pytest.raises(IndexReadOnly, match=r"its folder .*sub is read-only \(SQLite writes"):
        lifecycle.check_writable(path)
    writable.add(path.parent)
    lifecycle.check_writable(path)


def test_the_writer_refuses_before_writing_a_lock_beside(tmp_path):
    path = tmp_path / "index.sqlite"
    with pytest.raises(IndexMissing), lifecycle.writer(path, create=False):
        pass
    path.write_text("my notes\n" * 20)
    with pytest.raises(NotOurFile), lifecycle.writer(path):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.sqlite"]


def test_reading_never_creates_and_checks_when_asked(tmp_path, monkeypatch):
    path = tmp_path / "index.sqlite"
    with pytest.raises(IndexMissing), lifecycle.reading(path):
        pass
    assert not path.exists()
    SQLiteStore(path).close()
    monkeypatch.setattr(SQLiteStore, "integrity", lambda self, quick=False: ["page 3: bad"])
    with lifecycle.reading(path):
        pass
    with (
        pytest.raises(IndexDamaged, match=r"damaged \(page 3: bad\)"),
        lifecycle.reading(path, check=True),
    ):
        pass


@pytest.fixture
def built(tmp_path):
    """(docs folder, index path) with the folder indexed by the onnx backend."""
    docs = write(tmp_path / "docs", GOOD)
    path = tmp_path / "index.sqlite"
    with lifecycle.writing(path) as store:
        store.set_meta(index.BACKEND_KEY, "onnx")
        ingest.index_folder(docs, store, HashEncoder(), progress=False)
    return docs, path


def test_a_rebuild_is_planned_from_the_old_index(built, tmp_path):
    docs, path = built
    assert lifecycle.plan_rebuild(path, docs, None) == lifecycle.RebuildPlan(docs.resolve(), "onnx")
    assert lifecycle.plan_rebuild(path, docs, "torch").backend == "torch"
    other = write(tmp_path / "other", GOOD)
    with pytest.raises(IngestError, match=r"this index holds .*docs, not .*other"):
        lifecycle.plan_rebuild(path, other, None)
    plan = lifecycle.plan_rebuild(tmp_path / "none.sqlite", docs, None)
    assert (plan.backend, plan.damaged) == (DEFAULT_BACKEND, None)


def test_a_damaged_index_is_rebuilt_with_a_note(built):
    docs, path = built
    data = bytearray(path.read_bytes())
    for at in range(int.from_bytes(data[16:18], "big"), len(data)):
        data[at] = (data[at] * 31 + 7) % 256
    path.write_bytes(bytes(data))
    plan = lifecycle.plan_rebuild(path, docs, None)
    assert plan.damaged and plan.backend == DEFAULT_BACKEND


def files(path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def test_the_swap_happens_only_when_the_rebuild_completes(built):
    docs, path = built
    before = path.read_bytes()
    with pytest.raises(KeyboardInterrupt), lifecycle.rebuilding(path, "torch") as store:
        store.set_meta("folder", "half-built")
        raise KeyboardInterrupt
    assert path.read_bytes() == before
    assert files(path) == ["docs", "index.sqlite", "index.sqlite.lock"]
    with lifecycle.rebuilding(path, "torch") as store:
        ingest.index_folder(docs, store, HashEncoder(backend="torch"), progress=False)
    with sqlite3.connect(path) as db:
        assert dict(db.execute("SELECT key, value FROM meta"))[index.BACKEND_KEY] == "torch"
    assert files(path) == ["docs", "index.sqlite", "index.sqlite.lock"]
