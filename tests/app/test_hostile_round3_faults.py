# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab`` against the third hostile round's faults of the environment (issue 37): a
reader beside a long write, a full disk, a graph that does not fit in memory, what a killed
writer left, two writers on one server index.

Each row: what is done first (``setup(run, docs, path, tmp_path, monkeypatch, stack)``;
``stack`` closes what it holds open), the command, the exit status, a fragment of what it
says (stdout and stderr), and what is left afterwards (the index, or ``(what to look at,
what it must be)``). No row may print a traceback, an internal error or the name of a
temporary file of ours.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from fakes import HashEncoder
from test_hostile import state as index_state
from test_hostile_round3 import milvus, milvus_state
from test_store_backends import lite_server  # noqa: F401  (a fixture)

from rag_lab import paths
from rag_lab.app import exits
from rag_lab.chunking import Chunk

TEMPORARY = r"\.tmp\b|rag-lab-(milvus|questions|onnx)-|\.creating-"
"""What no row may print: the names of the temporary files and folders rag-lab makes."""


# --- what a row does first ------------------------------------------------------------


def indexed(run, docs, path, tmp_path, monkeypatch, stack, where=()):
    assert run("index", docs, *where)[0] == exits.OK


def a_long_write_in_progress(run, docs, path, tmp_path, monkeypatch, stack):
    """The three files indexed; then another writer, its transaction open, has written
    4,000 chunks of a long document (4 MB: past SQLite's page cache of 2 MB, which a writer
    that spills it into the file holds the exclusive lock for until its commit)."""
    from rag_lab.app.store import SQLiteStore

    indexed(run, docs, path, tmp_path, monkeypatch, stack)
    store = stack.enter_context(SQLiteStore(path))
    writer = stack.enter_context(store.replacing("long"))
    text = "tensors " * 64
    for at in range(0, 4_000, 500):
        chunks = [Chunk("long", i, text, text, "", 0, 1) for i in range(at, at + 500)]
        writer.add(chunks, np.full((500, 64), 0.125, dtype=np.float32))
    stack.callback(writer.finish, "long.md", "0" * 64, "Long", _stamp(store))


def _stamp(store):
    return next(r.stamp for r in store.documents() if r.stamp is not None)


HOLD_LITE = (
    "import sys, time; from rag_lab.app.store import MilvusLocation, MilvusStore\n"
    "store = MilvusStore(MilvusLocation.parse(sys.argv[1]), readonly=True)\n"
    "print('open', flush=True); time.sleep(120)\n"
)
"""``python -c HOLD_LITE FOLDER``: another process with the Milvus Lite folder open."""


def a_lite_folder_held_by_another_process(run, docs, path, tmp_path, monkeypatch, stack):
    milvus()
    indexed(run, docs, path, tmp_path, monkeypatch, stack, ("--store", tmp_path / "kb.db"))
    env = {**os.environ, "PYTHONPATH": str(paths.ROOT)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LITE, str(tmp_path / "kb.db")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    stack.callback(holder.wait, 30)
    stack.callback(holder.kill)
    assert holder.stdout.readline() == "open\n"


KILLED_REBUILD = (
    "import os, signal, sys; from fakes import HashEncoder; from rag_lab.app import cli, commands\n"
    "class Killed(HashEncoder):\n"
    "    def encode(self, texts, *, progress=None):\n"
    "        if self.calls == 1:\n"
    "            os.kill(os.getpid(), signal.SIGKILL)\n"
    "        return super().encode(texts, progress=progress)\n"
    "commands.Encoder = Killed\n"
    "raise SystemExit(cli.main(sys.argv[1:]))\n"
)
"""``python -c KILLED_REBUILD ARGS``: ``rag-lab ARGS`` killed with SIGKILL as it embeds its
second document."""


def a_rebuild_killed(*where: str):
    """The three files indexed (into ``where``, else the row's SQLite file); then ``index
    --rebuild`` killed with SIGKILL as it embeds its second document, ``$TMPDIR`` a folder
    of the row's (where its private folders are)."""

    def setup(run, docs, path, tmp_path, monkeypatch, stack):
        if where:
            milvus()
        where_ = [w.format(tmp=tmp_path) for w in where]
        indexed(run, docs, path, tmp_path, monkeypatch, stack, where_)
        # The row's $TMPDIR, tmp_path/temp, links to a short folder of the session's: the
        # Unix socket Milvus Lite opens there stays within 107 bytes whatever the temp root.
        temp = Path(tempfile.mkdtemp(prefix="t", dir=tmp_path.parent))
        (tmp_path / "temp").symlink_to(temp, target_is_directory=True)
        monkeypatch.setattr(tempfile, "tempdir", str(temp))
        env = {
            **os.environ,
            "PYTHONPATH": f"{paths.ROOT}{os.pathsep}{paths.ROOT / 'tests'}",
            "RAG_LAB_INDEX": str(path),
            "TMPDIR": str(temp),
        }
        argv = [sys.executable, "-c", KILLED_REBUILD, "index", str(docs), "--rebuild", *where_]
        done = subprocess.run(argv, env=env, capture_output=True, timeout=120)
        assert done.returncode == -signal.SIGKILL, done.stderr

    return setup


def a_rebuild_running(run, docs, path, tmp_path, monkeypatch, stack):
    """The three files indexed; then a rebuild in progress: its fresh file beside the index,
    the writer lock held."""
    from rag_lab.app.store import writer_lock

    indexed(run, docs, path, tmp_path, monkeypatch, stack)
    stack.enter_context(writer_lock(path))
    shutil.copy(path, f"{path}.rebuild")


def beside_the_index(tmp_path: Path) -> str:
    """The files beside the SQLite index, and the private folders left in ``$TMPDIR``."""
    here = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("index.sqlite"))
    temp = tmp_path / "temp"
    left = sorted(p.name for p in temp.iterdir()) if temp.is_dir() else []
    return f"{', '.join(here)}; in $TMPDIR: {len(left)}"


def lite_and_temp(tmp_path: Path) -> str:
    temp = tmp_path / "temp"
    return f"{milvus_state(tmp_path / 'kb.db')}; in $TMPDIR: {len(list(temp.iterdir()))}"


def lite_disk_full(run, docs, path, tmp_path, monkeypatch, stack):
    """Milvus Lite's own words when its disk is full (as measured on a full tmpfs), from
    the engine's first insert of chunks."""
    pymilvus = milvus()

    def full(self, *args, **kwargs):
        raise pymilvus.MilvusException(
            code=1,
            message="[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device",
        )

    monkeypatch.setattr(pymilvus.MilvusClient, "insert", full)


def sqlite_disk_full(run, docs, path, tmp_path, monkeypatch, stack):
    """SQLite's own SQLITE_FULL: beside the three files a long one (``long.md``, 200 kB),
    and the file may hold at most 24 pages (of 4 kB)."""
    from rag_lab.app.store import connection

    (docs / "long.md").write_text("# Long\n\n" + "Tensors hold numbers.\n\n" * 8_000)

    connect = connection.sqlite3.connect

    def small(*args, **kwargs):
        db = connect(*args, **kwargs)
        db.execute("PRAGMA max_page_count = 24")
        return db

    monkeypatch.setattr(connection.sqlite3, "connect", small)


def lock_disk_full(run, docs, path, tmp_path, monkeypatch, stack):
    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("rag_lab.app.store.lock.os.pwrite", full)


BAD_ALLOC = "[ONNXRuntimeError] : 1 : FAIL : Load model from {graph} failed:std::bad_alloc"
"""ONNX Runtime's words when the graph does not fit in ``ulimit -v`` (as measured at 300 MB)."""


def a_graph_too_large_for_the_memory(run, docs, path, tmp_path, monkeypatch, stack):
    """The three files indexed; then the real encoder, its ONNX graph in a cache of the row's
    (a stand-in file), which ONNX Runtime has no memory to load."""
    import onnxruntime

    from rag_lab.app import commands
    from rag_lab.models import onnx_minilm
    from rag_lab.models.encoder import Encoder

    indexed(run, docs, path, tmp_path, monkeypatch, stack)
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "onnx" / onnx_minilm.minilm_fingerprint().key
    folder.mkdir(parents=True)
    (folder / onnx_minilm.GRAPH_FILES["onnx"]).write_bytes(b"a graph")

    def no_memory(path, *args, **kwargs):
        raise RuntimeError(BAD_ALLOC.format(graph=path))

    monkeypatch.setattr(onnxruntime, "InferenceSession", no_memory)
    monkeypatch.setattr(commands, "Encoder", Encoder)


def the_graph(tmp_path: Path) -> str:
    from rag_lab.models import onnx_minilm

    folder = tmp_path / "cache" / "onnx" / onnx_minilm.minilm_fingerprint().key
    return ", ".join(sorted(p.name for p in folder.iterdir()))


def torch_not_mapped(run, docs, path, tmp_path, monkeypatch, stack):
    """The three files indexed; then an encoder whose library the loader cannot map into
    the address space left (``ulimit -v``: dlopen's words, as measured at 400 MB)."""
    from rag_lab.app import commands

    indexed(run, docs, path, tmp_path, monkeypatch, stack)

    class Unmapped(HashEncoder):
        def __init__(self, *args, **kwargs):
            raise ImportError(
                "libtorch_cpu.so: failed to map segment from shared object", name="_C"
            )

    monkeypatch.setattr(commands, "Encoder", Unmapped)


def a_rename_refused(run, docs, path, tmp_path, monkeypatch, stack):
    """A sound baseline; then every rename of a file written whole (``regression.json``
    and the others of the comparison) refused, as a read-only file system refuses it (the
    system names the temporary file)."""
    from test_hostile_round3 import baseline

    baseline(work=True)(run, docs, path, tmp_path, monkeypatch)

    def refused(src, dst):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(src), str(dst))

    monkeypatch.setattr("rag_lab.atomic.os.replace", refused)


_FAILS: dict[Path, list[int]] = {}
"""The row's folder → the size of each call of ``SQLiteStore.fail`` (a transaction each)."""


def empty_files(run, docs, path, tmp_path, monkeypatch, stack):
    """2,500 empty files beside the three: each fails ("empty file"), recorded in batches."""
    from rag_lab.app.store import SQLiteStore

    for i in range(2_500):
        (docs / f"empty{i:04}.md").touch()
    calls = _FAILS.setdefault(tmp_path, [])
    fail = SQLiteStore.fail
    monkeypatch.setattr(SQLiteStore, "fail", lambda self, f: calls.append(len(f)) or fail(self, f))


def transactions(tmp_path: Path) -> str:
    return f"failures recorded in transactions of {_FAILS.pop(tmp_path)}"


def the_report(tmp_path: Path) -> str:
    """What the report folder holds (a temporary file left would show)."""
    return ", ".join(sorted(p.name for p in (tmp_path / "r").iterdir()))


EVALUATE = ["evaluate", "--corpus", "{docs}", "--questions", "{tmp}/q.yaml", "--out", "{tmp}/r"]

CASES = [
    # (id, setup, argv, exit status, fragment of stdout + stderr, what is left)
    # medium: readers beside a long write. SQLite: not blocked (the writer does not spill its
    # page cache into the file, so it takes the exclusive lock at its commit only)
    ("ask during a long SQLite write", a_long_write_in_progress, ["ask", "tensors"], 0, "a#char=", "4 indexed, 0 failed"),
    ("status during a long SQLite write", a_long_write_in_progress, ["status"], 0, "3 documents: 3 indexed", "4 indexed, 0 failed"),
    # … Milvus Lite: the engine opens a folder in one process at a time, readers too (README)
    ("ask while another process has Milvus Lite open", a_lite_folder_held_by_another_process, ["ask", "tensors", "--store", "{tmp}/kb.db"], 2, "the index {tmp}/kb.db is locked by another process (waited 0.2 s); run again when it is done", (lambda tmp: "", "")),
    # medium: a full disk, in plain words naming the disk
    ("index, Milvus Lite's disk full", lite_disk_full, ["index", "{docs}", "--store", "{tmp}/kb.db"], 2, "no space left on the disk mounted at ", (lambda tmp: "", "")),
    ("index, Milvus Lite's disk full: what to do", lite_disk_full, ["index", "{docs}", "--store", "{tmp}/kb.db"], 2, "which holds the index {tmp}/kb.db; free space on it, then run the same command again", (lambda tmp: "", "")),
    ("index, SQLite's disk full", sqlite_disk_full, ["index", "{docs}"], 2, "which holds the index {tmp}/index.sqlite; free space on it", "2 indexed, 0 failed"),
    ("index, the lock's disk full", lock_disk_full, ["index", "{docs}"], 2, "no space left on the disk mounted at ", "absent"),
    # medium: out of memory (ulimit -v) is not a damaged cache nor a missing package
    ("ask, the ONNX graph does not fit in memory", a_graph_too_large_for_the_memory, ["ask", "tensors"], 2, "out of memory (loading the ONNX graph ", (the_graph, "model.onnx")),
    ("ask, torch cannot be mapped into memory", torch_not_mapped, ["ask", "tensors"], 2, "out of memory (loading _C: libtorch_cpu.so: failed to map segment from shared object)", "3 indexed, 0 failed"),
    # medium: a folder of empty files, its failures recorded a thousand per transaction
    ("index, 2,500 empty files", empty_files, ["index", "{docs}"], 1, "3 indexed, 0 unchanged, 2500 failed", (transactions, "failures recorded in transactions of [1000, 1000, 500]")),
    # low: a temporary file's name in a message
    ("evaluate, the comparison's rename refused", a_rename_refused, [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "{tmp}/r/regression.md: Read-only file system", (the_report, "figures, report.json, report.md")),
    # low: what a killed writer left: reported by status --check, removed by the next writer
    ("status --check, a SQLite rebuild killed", a_rebuild_killed(), ["status", "--check"], 2, "index.sqlite.rebuild: left by a rebuild that stopped (the next index or retry removes it)", "3 indexed, 0 failed"),
    ("status --check while a rebuild runs", a_rebuild_running, ["status", "--check"], 0, "index {tmp}/index.sqlite: sound", (beside_the_index, "index.sqlite, index.sqlite.lock, index.sqlite.rebuild; in $TMPDIR: 0")),
    ("index, a SQLite rebuild killed", a_rebuild_killed(), ["index", "{docs}"], 0, "0 indexed, 3 unchanged", (beside_the_index, "index.sqlite, index.sqlite.lock; in $TMPDIR: 0")),
    ("status --check, a Milvus Lite rebuild killed", a_rebuild_killed("--store", "{tmp}/kb.db"), ["status", "--check", "--store", "{tmp}/kb.db"], 2, "Milvus Lite integrity check: collections of generation g", (lite_and_temp, "Milvus Lite: rag_lab: 3 indexed, 0 failed; in $TMPDIR: 0")),
    ("index, a Milvus Lite rebuild killed", a_rebuild_killed("--store", "{tmp}/kb.db"), ["index", "{docs}", "--store", "{tmp}/kb.db"], 0, "0 indexed, 3 unchanged", (lite_and_temp, "Milvus Lite: rag_lab: 3 indexed, 0 failed; in $TMPDIR: 0")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_case(env, tmp_path, monkeypatch, setup, argv, code, fragment, after):
    run, docs, path = env
    with contextlib.ExitStack() as stack:
        setup(run, docs, path, tmp_path, monkeypatch, stack)
        argv = [a.format(docs=docs, tmp=tmp_path) for a in argv]
        status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert not re.search(TEMPORARY, out + err), (out, err)
    assert fragment.format(docs=docs, tmp=tmp_path) in out + err, (out, err)
    if code == exits.ERROR and argv[:2] != ["status", "--check"]:  # that one lists on stdout
        assert err.count("\n") == 1, err
    if isinstance(after, tuple):
        assert after[0](tmp_path) == after[1]
    else:
        assert index_state(path) == after


# --- two writers on one server index (no lock across machines) -------------------------


def _rival(monkeypatch, act) -> None:
    """The run's encoder calls ``act()`` as it embeds the second document: another writer
    acting on the same index while this one writes."""
    from rag_lab.app import commands

    class Rival(HashEncoder):
        def encode(self, texts, *, progress=None):
            if self.calls == 1:
                act()
            return super().encode(texts, progress=progress)

    monkeypatch.setattr(commands, "Encoder", Rival)


def a_rival_drops_this_generation(uri: str, monkeypatch) -> None:
    """What a rival's rebuild does when it swaps in: this run's collections dropped."""
    from rag_lab.app.store import MilvusLocation
    from rag_lab.app.store.milvus.connection import connect
    from rag_lab.app.store.milvus.generations import generation_of

    def drop():
        where = MilvusLocation.parse(uri)
        client = connect(where, create=False)
        for name in client.list_collections():
            if generation_of(where.name, name):
                client.drop_collection(name)
        client.close()

    _rival(monkeypatch, drop)


def a_rival_swaps_in_another_generation(uri: str, monkeypatch) -> None:
    """A rival's rebuild swapping in its generation, this run's collections not yet dropped."""
    from rag_lab.app.store import MilvusLocation, MilvusStore
    from rag_lab.app.store.milvus.generations import new_generation

    def swap():
        with contextlib.closing(MilvusStore(MilvusLocation.parse(uri))) as other:
            other._write_pointer(new_generation(), other.index_type)

    _rival(monkeypatch, swap)


SERVER_CASES = [
    # (id, setup, exit status, fragment of stderr): rag-lab index DOCS --store SERVER#NAME
    ("index, a rival drops this run's generation", a_rival_drops_this_generation, 2, "another process changed the index {uri} while this one used it (Milvus: collection '"),
    ("index, a rival drops it: what to do", a_rival_drops_this_generation, 2, "rag-lab takes no lock on a Milvus server; run one writer per index name at a time, and this command again when the other is done"),
    ("index, a rival swaps in its generation", a_rival_swaps_in_another_generation, 2, "another process changed the index {uri} while this one used it (it was rebuilt meanwhile, and what this run wrote went into the generation it replaced, g"),
]  # fmt: skip


@pytest.mark.server
@pytest.mark.parametrize(
    ("setup", "code", "fragment"),
    [pytest.param(*row[1:], id=row[0]) for row in SERVER_CASES],
)
def test_each_server_case(lite_server, run, tmp_path, monkeypatch, setup, code, fragment):  # noqa: F811
    """Medium: two writers on one server index. Each row its own index name."""
    milvus()
    from fakes import GOOD, write

    docs = write(tmp_path / "docs", dict(GOOD))
    uri = f"{lite_server}#r{abs(hash(tmp_path.name)) % 10**12}"
    setup(uri, monkeypatch)
    status, out, err = run("index", docs, "--store", uri)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    last = err.splitlines()[-1]  # after what the run said of its progress: the one error
    assert last.startswith("rag-lab index: ") and fragment.format(uri=uri) in last, err


# --- a server that stops answering (SIGSTOP): bounded waits that honour SIGTERM ----------


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    """A ``milvus-lite server`` of this module's own, which its tests stop (SIGSTOP) and
    resume: (its URI, its pid)."""
    milvus()
    from test_store_backends import _free_port, _serve, _stop

    port = _free_port()
    data = tmp_path_factory.mktemp("stopped-server")
    exe = Path(sys.executable).with_name("milvus-lite")
    argv = [str(exe), "server", "--data-dir", str(data), "--host", "127.0.0.1"]
    proc = _serve([*argv, "--port", str(port)], port, data / "log")
    yield f"http://127.0.0.1:{port}", proc.pid
    os.kill(proc.pid, signal.SIGCONT)
    _stop(proc)


STOPPED_MID_INDEX = (
    "import os, signal, sys; from fakes import HashEncoder; from rag_lab.app import cli, commands\n"
    "class Stopping(HashEncoder):\n"
    "    def encode(self, texts, *, progress=None):\n"
    "        if self.calls == 1:\n"
    "            os.kill(int(os.environ['SERVER_PID']), signal.SIGSTOP)\n"
    "            print('stopped', flush=True)\n"
    "        return super().encode(texts, progress=progress)\n"
    "commands.Encoder = Stopping\n"
    "raise SystemExit(cli.main(sys.argv[1:]))\n"
)
"""``python -c STOPPED_MID_INDEX ARGS``: ``rag-lab ARGS``, the server (``$SERVER_PID``) stopped
as the second document is embedded."""


@pytest.mark.server
def test_a_stopped_server_is_given_up_on_after_the_wait(own_server, run, tmp_path, monkeypatch):
    """Medium: a server stopped mid-index. Each call of the client waits a bounded time
    (here 1 s), then the command says so in one line, exit 2."""
    from fakes import GOOD, write

    server, pid = own_server
    monkeypatch.setattr("rag_lab.app.store.milvus.connection.CALL_SECONDS", 1.0)
    _rival(monkeypatch, lambda: os.kill(pid, signal.SIGSTOP))
    uri = f"{server}#given_up"
    try:
        status, out, err = run("index", write(tmp_path / "docs", dict(GOOD)), "--store", uri)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert status == exits.ERROR, (out, err)
    assert err == (
        f"rag-lab index: the Milvus server at {uri} did not answer within 1 s; check that the "
        "server runs, and its address and port\n"
    )


@pytest.mark.server
def test_sigterm_ends_a_writer_whose_server_stopped(own_server, tmp_path):
    """Medium: SIGTERM while the server does not answer. The writer unwinds as after Ctrl-C,
    its clean-up (which would wait for the server) cut short after
    :data:`~rag_lab.app.terminal.GRACE_SECONDS`: exit 143 within a few seconds, one line."""
    from fakes import GOOD, write

    from rag_lab.app.terminal import GRACE_SECONDS

    server, pid = own_server
    docs = write(tmp_path / "docs", dict(GOOD))
    env = {
        **os.environ,
        "PYTHONPATH": f"{paths.ROOT}{os.pathsep}{paths.ROOT / 'tests'}",
        "SERVER_PID": str(pid),
    }
    argv = [sys.executable, "-c", STOPPED_MID_INDEX, "index", str(docs), "--store", f"{server}#t"]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert "stopped\n" in iter(proc.stdout.readline, "")  # after its "indexing …" line
        time.sleep(1.0)  # the writer now waits for the server
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=GRACE_SECONDS + 10)
        took = time.monotonic() - began
    finally:
        proc.kill()
        os.kill(pid, signal.SIGCONT)
    assert proc.returncode == exits.TERMINATED, err
    assert took < GRACE_SECONDS + 3, took
    assert err.startswith(
        "rag-lab index: terminated (SIGTERM), its clean-up cut short; the index is consistent"
    ), err
    assert err.count("\n") == 1, err
