# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab`` against a hostile cache and a writer that died mid-transaction (issue 26).

The cache is optional: read-only, full, deleted mid-run or a file in its place, it is one
warning naming the cache and ``$RAG_LAB_CACHE``, and the run goes on without it (the
index is never blamed). A hot journal left by a dead writer is rolled back by whichever
command opens the index next, or, where it cannot be, reported as such with the one
command that recovers it.

The cache here is the real one (:mod:`rag_lab.models.vector_cache`, in a temporary
``$RAG_LAB_CACHE``) behind the hashed stand-in for the model; the ONNX rows load the real
encoder. Read-only and full places are small tmpfs mounts, so those rows need root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from fakes import GOOD, HashEncoder, write
from test_hostile import state

from rag_lab import paths
from rag_lab.app import cli, commands, exits
from rag_lab.models import onnx_minilm
from rag_lab.models.encoder import Encoder
from rag_lab.models.minilm import minilm_fingerprint
from rag_lab.models.vector_cache import open_cache, through_cache

ROOT = Path(__file__).resolve().parents[2]
AS_ROOT = os.geteuid() == 0 and shutil.which("mount") is not None
NEEDS_ROOT = "a read-only or full place is a tmpfs mount here, which needs root"


class CachedHashEncoder(HashEncoder):
    """The hashed stand-in for the model behind the real embedding cache, as the Encoder
    puts it (``open_cache`` then ``through_cache``); ``on_compute`` runs before each batch
    the model computes (a fault injected mid-run)."""

    on_compute = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.cache = open_cache(self.fingerprint)

    def encode(self, texts, *, progress=None):
        def compute(todo):
            if CachedHashEncoder.on_compute is not None:
                CachedHashEncoder.on_compute()
            return list(HashEncoder.encode(self, todo))

        vectors, _ = through_cache(texts, self.cache, compute)
        return np.stack(vectors) if vectors else HashEncoder.encode(self, texts)


@pytest.fixture
def env(tmp_path, monkeypatch, capsys):
    """(run, docs, index path, cache folder): ``run(*argv)`` gives (status, stdout, stderr)."""
    monkeypatch.setattr(commands, "Encoder", CachedHashEncoder)
    monkeypatch.setattr(CachedHashEncoder, "on_compute", None)
    monkeypatch.setattr(onnx_minilm, "_RUN_FOLDER", [], raising=False)
    monkeypatch.setattr(paths, "_WARNED", set(), raising=False)
    monkeypatch.setenv("RAG_LAB_LOCK_TIMEOUT", "0.2")
    cache = tmp_path / "cache"
    monkeypatch.setenv(paths.CACHE_ENV, str(cache))
    path = tmp_path / "index.sqlite"
    monkeypatch.setenv("RAG_LAB_INDEX", str(path))
    docs = write(tmp_path / "docs", dict(GOOD))

    def run(*argv: str) -> tuple[int, str, str]:
        try:
            status = cli.main([str(a) for a in argv])
        except SystemExit as done:
            status = done.code
        out, err = capsys.readouterr()
        return status, out, err

    yield run, docs, path, cache
    for mount in reversed(_MOUNTS):
        subprocess.run(["umount", "-l", str(mount)], check=False)
    _MOUNTS.clear()


_MOUNTS: list[Path] = []


def tmpfs(where: Path, size: str = "1m") -> Path:
    """A small tmpfs at ``where`` (root only), unmounted after the test."""
    if not AS_ROOT:
        pytest.skip(NEEDS_ROOT)
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    _MOUNTS.append(where)
    return where


def read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def fill(where: Path) -> None:
    """Fill the file system of ``where`` to the last byte."""
    for name, block in (("filler", 65536), ("filler-tail", 1)):  # then the last partial block
        fd = os.open(where / name, os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * block)
        except OSError:
            pass
        finally:
            os.close(fd)


# --- what a row does to the cache first ------------------------------------------------


def cache_read_only(run, docs, cache, index):
    read_only(tmpfs(cache))


def warm(run, docs) -> None:
    """Vectors in the cache already (of another text), its file closed."""
    cache = open_cache(HashEncoder().fingerprint)
    cache.put({"0" * 64: HashEncoder().encode(["something else entirely"])[0]})
    cache._db.close()


def cache_read_only_warm(run, docs, cache, index):
    """A cache that holds vectors already, then mounted read-only."""
    tmpfs(cache)
    warm(run, docs)
    read_only(cache)


def cache_full(run, docs, cache, index):
    fill(tmpfs(cache))


def cache_full_midway(run, docs, cache, index):
    """The cache file exists and works, then its disk fills up."""
    tmpfs(cache)
    warm(run, docs)
    fill(cache)


def cache_deleted_midway(run, docs, cache, index):
    """The cache folder is removed while the second batch is being embedded."""
    calls = []

    def remove():
        calls.append(1)
        if len(calls) == 2:
            shutil.rmtree(cache)

    CachedHashEncoder.on_compute = staticmethod(remove)


def cache_a_file(run, docs, cache, index):
    shutil.rmtree(cache, ignore_errors=True)
    cache.write_text("a file where the cache folder should be")


def embeddings_a_file(run, docs, cache, index):
    cache.mkdir()
    (cache / "embeddings").write_text("a file where the vectors' folder should be")


def cache_entry_a_folder(run, docs, cache, index):
    (cache / "embeddings" / f"{HashEncoder().fingerprint.key}.sqlite").mkdir(parents=True)


def indexed_then(fault):
    def setup(run, docs, cache, index):
        assert run("index", docs)[0] == exits.OK
        fault(run, docs, cache, index)

    setup.__name__ = f"indexed_then_{fault.__name__}"
    return setup


CACHE_CASES = [
    # (id, setup, argv, exit status, stderr fragment, index state after)
    ("index, read-only cache", cache_read_only, ["index", "{docs}"], 0, "Read-only file system", "3 indexed, 0 failed"),
    ("index, read-only warm cache", cache_read_only_warm, ["index", "{docs}"], 0, "readonly database", "3 indexed, 0 failed"),
    ("index, full cache disk", cache_full, ["index", "{docs}"], 0, "full", "3 indexed, 0 failed"),
    ("index, cache disk fills up", cache_full_midway, ["index", "{docs}"], 0, "full", "3 indexed, 0 failed"),
    ("index, cache deleted mid-run", cache_deleted_midway, ["index", "{docs}"], 0, "is gone", "3 indexed, 0 failed"),
    ("index, cache is a file", cache_a_file, ["index", "{docs}"], 0, "a file where a folder should be", "3 indexed, 0 failed"),
    ("index, embeddings is a file", embeddings_a_file, ["index", "{docs}"], 0, "a file where a folder should be", "3 indexed, 0 failed"),
    ("index, cache entry is a folder", cache_entry_a_folder, ["index", "{docs}"], 0, "embedding cache", "3 indexed, 0 failed"),
    ("ask, read-only cache", indexed_then(cache_read_only), ["ask", "tensors"], 0, "Read-only file system", "3 indexed, 0 failed"),
    ("ask, full cache disk", indexed_then(cache_full), ["ask", "tensors"], 0, "full", "3 indexed, 0 failed"),
    ("ask, cache is a file", indexed_then(cache_a_file), ["ask", "tensors"], 0, "a file where a folder should be", "3 indexed, 0 failed"),
    ("retry, cache is a file", indexed_then(cache_a_file), ["retry"], 0, "a file where a folder should be", "3 indexed, 0 failed"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CACHE_CASES],
)
def test_a_hostile_cache_is_one_warning(env, setup, argv, code, fragment, after):
    run, docs, path, cache = env
    setup(run, docs, cache, path)
    status, out, err = run(*[a.format(docs=docs) for a in argv])
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err
    assert "cannot write the index" not in err and "cannot use the index" not in err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    if fragment:
        assert len(warnings) == 1, err
        assert fragment in warnings[0], err
        assert "cache" in warnings[0] and f"${paths.CACHE_ENV}" in warnings[0], err
    if argv[0] == "ask":
        assert "sources under cosine distance" in out or "source under" in out, out
    assert state(path) == after


# --- the ONNX graph, with the real encoder -------------------------------------------------


@contextmanager
def tempdir_refused(monkeypatch):
    """``tempfile``'s folder is a file, so no temporary folder can be made."""
    blocker = Path(tempfile.mkdtemp()) / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker))
    try:
        yield
    finally:
        shutil.rmtree(blocker.parent)


@pytest.mark.model
def test_an_uncachable_onnx_graph_is_exported_for_the_run(env, monkeypatch):
    """The cache a file: the graph is exported to a temporary folder (one warning), the
    run goes on, and the temporary folder is removed at exit (a fresh process here)."""
    _run, docs, path, cache = env
    cache.write_text("a file where the cache folder should be")
    code = (
        "import sys, tempfile; from rag_lab.app import cli; "
        "code = cli.main(['index', sys.argv[1], '--index', sys.argv[2]]); "
        "from rag_lab.models import onnx_minilm as m; print(m._RUN_FOLDER[0]); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(docs), str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert done.returncode == exits.OK, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, done.stderr
    assert "ONNX graph is exported to a temporary folder" in warnings[0]
    assert "Not a directory" in warnings[0] and f"${paths.CACHE_ENV}" in warnings[0]
    assert "3 indexed" in done.stdout
    assert not Path(done.stdout.strip().splitlines()[-1]).exists()  # removed at exit


def test_an_onnx_graph_with_nowhere_to_go_is_refused_before_the_index(env, monkeypatch):
    """Neither the cache nor a temporary folder takes the graph: one line naming the
    cache and ``$RAG_LAB_CACHE``, exit 2, and no index file created."""
    run, docs, path, cache = env
    monkeypatch.setattr(commands, "Encoder", Encoder)
    cache.write_text("a file where the cache folder should be")
    with tempdir_refused(monkeypatch):
        status, out, err = run("index", docs)
    assert status == exits.ERROR, (out, err)
    lines = [line for line in err.splitlines() if not line.startswith("warning:")]
    assert len(lines) == 1, err
    assert "cannot be kept in the cache" in lines[0] and f"${paths.CACHE_ENV}" in lines[0]
    assert not path.exists() and not list(path.parent.glob("index.sqlite*"))


@pytest.mark.model
def test_a_damaged_onnx_graph_in_the_cache_is_exported_again(env, monkeypatch):
    """A graph cut short in the cache is a damaged entry: one warning, exported again, and
    the run goes on (it was an internal error: "No graph was found in the protobuf")."""
    run, docs, _path, cache = env
    monkeypatch.setattr(commands, "Encoder", Encoder)
    graph = cache / "onnx" / minilm_fingerprint().key / onnx_minilm.GRAPH_FILES["onnx"]
    graph.parent.mkdir(parents=True)
    graph.write_bytes(b"\x08\x07" + b"\0" * 1000)  # a protobuf of no graph
    status, out, err = run("index", docs)
    assert status == exits.OK, (out, err)
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "does not load" in warnings[0], err
    assert f"${paths.CACHE_ENV}" in warnings[0]
    assert graph.stat().st_size > 10**6  # the real graph, in the cache again
    assert "3 indexed, 0 unchanged, 0 failed" in out


# --- a writer that died mid-transaction ------------------------------------------------------


def hot_journal(path: Path) -> None:
    """A writer that changed pages of the index, then died before its commit: the journal
    beside it is hot (SQLite spilled the changes into the file, cache_size 1)."""
    script = (
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA cache_size = 1')\n"
        "db.execute('BEGIN IMMEDIATE')\n"
        "db.execute(\"UPDATE chunks SET text = text || printf('%.2000c', 'x')\")\n"
        "db.execute(\"UPDATE documents SET status = 'failed', reason = 'half-written'\")\n"
        "os._exit(9)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], timeout=60)
    assert done.returncode == 9
    journal = Path(f"{path}-journal")
    assert journal.is_file() and journal.stat().st_size > 0


def journal_left(run, docs, path, tmp_path):
    assert run("index", docs)[0] == exits.OK
    hot_journal(path)


def journal_left_read_only(run, docs, path, tmp_path):
    """The same, on a place this process cannot write (a tmpfs remounted read-only)."""
    place = tmpfs(tmp_path / "ro", "4m")
    moved = place / path.name
    assert run("index", docs, "--index", moved)[0] == exits.OK
    hot_journal(moved)
    read_only(place)


JOURNAL_CASES = [
    # (id, setup, argv, exit status, stderr fragment, index state after)
    ("status, hot journal", journal_left, ["status"], 0, "", "3 indexed, 0 failed"),
    ("status --check, hot journal", journal_left, ["status", "--check"], 0, "", "3 indexed, 0 failed"),
    ("ask, hot journal", journal_left, ["ask", "tensors"], 0, "", "3 indexed, 0 failed"),
    ("retry, hot journal", journal_left, ["retry"], 0, "", "3 indexed, 0 failed"),
    ("index, hot journal", journal_left, ["index", "{docs}"], 0, "", "3 indexed, 0 failed"),
    ("status, hot journal, read-only", journal_left_read_only, ["status"], 2, "left mid-transaction by a writer that stopped", "hot"),
    ("status --check, hot journal, read-only", journal_left_read_only, ["status", "--check"], 2, "then run rag-lab status --index", "hot"),
    ("ask, hot journal, read-only", journal_left_read_only, ["ask", "tensors"], 2, "opening it rolls the journal back", "hot"),
    ("retry, hot journal, read-only", journal_left_read_only, ["retry"], 2, "left mid-transaction by a writer that stopped", "hot"),
    ("index, hot journal, read-only", journal_left_read_only, ["index", "{docs}"], 2, "opening it rolls the journal back", "hot"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in JOURNAL_CASES],
)
def test_a_hot_journal_is_rolled_back_or_said(env, tmp_path, setup, argv, code, fragment, after):
    run, docs, path, _cache = env
    setup(run, docs, path, tmp_path)
    index = tmp_path / "ro" / path.name if after == "hot" else path
    status, out, err = run(*[a.format(docs=docs) for a in argv], "--index", index)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err
    assert "make it writable" not in err and "cannot write the index" not in err
    assert fragment in err
    if code == exits.ERROR:
        assert err.count("\n") == 1, err
        assert f"rag-lab status --index {index}" in err
    if after == "hot":  # untouched: the journal still there, to be rolled back
        assert Path(f"{index}-journal").stat().st_size > 0
    else:
        assert not Path(f"{index}-journal").exists()
        assert state(index) == after  # the half-written transaction is gone
