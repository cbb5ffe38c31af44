"""Every promise of the index, kept on every store (issue 28): SQLite, Milvus Lite embedded
in a folder, and Milvus over the network (the Milvus Lite gRPC server and, where its package
is installed, a real Milvus 2.3 standalone server).

The same tests run on each: a document replaced whole or not at all (an exception, a
process killed mid-write), failures kept with their reasons, stamps refused when stale,
the index check, search equal to the exact scan, names that are not UTF-8, and the command
line's index, ask, status, retry, rebuild and prune, with kill -9 at random points.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from fakes import GOOD, HashEncoder, index_to_the_end, killed_runs, versioned, write

from rag_lab.app import index
from rag_lab.app.store import DocumentRecord, MilvusLocation, MilvusStore, Stamp, Status
from rag_lab.chunking import Chunk

pytest.importorskip("pymilvus", reason="the Milvus client (pip install rag-lab[milvus])")

ROOT = Path(__file__).resolve().parents[2]
STAMP = Stamp("m", "key1", 2, "p1", "1")
SERVER_START_SECONDS = 180


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(argv: list[str], port: int, log: Path, env: dict | None = None) -> subprocess.Popen:
    """Start a server in its own process group; wait until ``port`` accepts connections."""
    proc = subprocess.Popen(
        argv, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True, env=env
    )
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{argv[0]} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                time.sleep(1.0)  # listening is not serving yet
                return proc
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail(f"{argv[0]} did not listen on {port} within {SERVER_START_SECONDS} s")


def _stop(proc: subprocess.Popen, data: Path | None = None) -> None:
    """Stop a server's process group; ``data``: also every process run from that folder
    (Milvus's wrapper starts its ``bin/milvus`` where a signal to the group misses it)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    if data is not None:
        subprocess.run(["pkill", "-KILL", "-f", str(data)], check=False)


@pytest.fixture(scope="session")
def lite_server(tmp_path_factory):
    """``milvus-lite server``: Milvus Lite behind the Milvus gRPC protocol, on loopback."""
    port = _free_port()
    data = tmp_path_factory.mktemp("milvus-lite-server")
    exe = Path(sys.executable).with_name("milvus-lite")
    proc = _serve(
        [str(exe), "server", "--data-dir", str(data), "--port", str(port)], port, data / "log"
    )
    yield f"http://127.0.0.1:{port}"
    _stop(proc)


SERVER_CLOCKS = {
    "proxy.timeTickInterval": 50,
    "queryCoord.checkInterval": 100,
    "queryCoord.distPullInterval": 100,
    "queryCoord.checkChannelInterval": 100,
    "queryCoord.checkSegmentInterval": 100,
    "indexCoord.scheduler.interval": 100,
}
"""The real server's internal clocks, in ms, shortened from 200 (the time tick), 500 to
3,000 (the query coordinator's checks) and 1,000 (the index builds' scheduler): a strong
read waits for the next tick, a load for the next checks, an index for the scheduler. Each
is set in the environment, where Milvus reads any key (``QUERYCOORD_CHECKINTERVAL``), and
in its configuration file, which the wrapper writes with the keys its template has."""


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory):
    """A real Milvus standalone server (PyPI ``milvus``, 2.3.5: Milvus's C++ and Go core with
    an embedded etcd), on loopback at its default port."""
    exe = Path(sys.executable).with_name("milvus-server")
    if not exe.exists():
        pytest.skip("the Milvus server package is not installed (pip install milvus==2.3.5)")
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", 19530)) == 0:
            pytest.skip("port 19530 is taken: another Milvus is running on this machine")
    data = tmp_path_factory.mktemp("milvus-server")
    tuned = [f"--extra-config={key}={value}" for key, value in SERVER_CLOCKS.items()]
    env = {key.replace(".", "_").upper(): str(value) for key, value in SERVER_CLOCKS.items()}
    proc = _serve(
        [str(exe), "--data", str(data), *tuned], 19530, data / "log", {**os.environ, **env}
    )
    yield "http://127.0.0.1:19530"
    _stop(proc, data)


BACKENDS = [
    "sqlite",
    "milvus-lite",
    pytest.param("milvus-lite-server", marks=pytest.mark.server),
    pytest.param("milvus-server", marks=pytest.mark.server),
]


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path):
    """Where a fresh index lives, on each backend in turn (a new index name on a server)."""
    name = f"t{uuid.uuid4().hex[:12]}"
    if request.param == "sqlite":
        return tmp_path / "index.sqlite"
    if request.param == "milvus-lite":
        return MilvusLocation.parse(str(tmp_path / "index.db"))
    server = request.getfixturevalue(
        "lite_server" if request.param == "milvus-lite-server" else "milvus_server"
    )
    return MilvusLocation.parse(f"{server}#{name}")


def chunks(doc_id: str, n: int) -> list[Chunk]:
    return [Chunk(doc_id, i, f"t{i}", f"c{i}", "S", 10 * i, 10 * i + 2) for i in range(n)]


def unit(rows) -> np.ndarray:
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def put(store, doc_id: str, n: int, stamp: Stamp = STAMP) -> None:
    with store.replacing(doc_id) as w:
        w.add(chunks(doc_id, n), unit([[1.0, float(i)] for i in range(n)]))
        w.finish(f"{doc_id}.md", "sha-" + doc_id, "T", stamp)


def state(store) -> tuple:
    """Everything a reader sees: records (without their times), chunk counts, vectors."""
    records = [(r.id, r.status, r.reason, r.chunk_count, r.stamp) for r in store.documents()]
    keys, vectors = store.vectors([r.id for r in store.documents()])
    return records, store.chunk_stats(), keys, np.round(vectors, 5).tolist()


# --- the store ---------------------------------------------------------------------------


def test_a_document_is_replaced_whole(where):
    with index.open_index(where) as store:
        put(store, "d", 2)
        put(store, "e", 1)
        put(store, "d", 3)
        assert [(r.id, r.chunk_count) for r in store.documents()] == [("d", 3), ("e", 1)]
        assert store.chunk_stats() == {"d": (3, {8}), "e": (1, {8})}
        assert [c.id for c in store.chunks_at([("d", 2), ("e", 0)])] == ["d#2", "e#0"]
        assert index.check(store) == []


def test_an_exception_mid_document_leaves_the_previous_state(where):
    with index.open_index(where) as store:
        put(store, "d", 2)
        before = state(store)
        with pytest.raises(KeyboardInterrupt), store.replacing("d") as w:
            w.add(chunks("d", 5), unit(np.ones((5, 2))))
            raise KeyboardInterrupt
        assert state(store) == before
        with pytest.raises(RuntimeError, match="without finish"), store.replacing("d") as w:
            w.add(chunks("d", 1), unit([[0, 1]]))
        assert state(store) == before
        assert index.check(store) == []


def test_a_process_killed_mid_document_leaves_the_previous_state(where):
    """``os._exit`` mid-write: no rollback, no cleanup. A reader sees the previous state
    (the orphans are never returned); the next writer removes them; then the index is sound."""
    with index.open_index(where) as store:
        put(store, "d", 2)
        before = state(store)
    script = textwrap.dedent(f"""
        import os, sys, numpy as np
        from rag_lab.app import index
        from rag_lab.app.store import MilvusLocation
        from rag_lab.chunking import Chunk
        where = {str(where)!r}
        where = MilvusLocation.parse(where) if {isinstance(where, MilvusLocation)} else where
        store = index.open_index(where)
        with store.replacing("d") as w:
            w.add([Chunk("d", i, "x", "x", "", 0, 1) for i in range(5)], np.ones((5, 2)) / 2**0.5)
            os._exit(9)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    if isinstance(where, MilvusLocation):
        with index.open_index(where, readonly=True) as reader:
            assert state(reader) == before
            found = reader.integrity()
            assert any("left unfinished" in p for p in found), found
            assert any("5 chunks of no committed write" in p for p in found), found
    with index.open_index(where) as writer:  # recovers (SQLite: rolls the journal back)
        assert state(writer) == before
        assert index.check(writer) == []
        assert writer.integrity() == []


def test_a_failure_drops_the_chunks_and_keeps_the_reason(where):
    with index.open_index(where) as store:
        put(store, "d", 2)
        store.fail([DocumentRecord.failure("d", "d.md", None, "unreadable: Permission denied")])
        r = store.document("d")
        assert (r.status, r.reason, r.stamp, r.chunk_count) == (
            Status.FAILED,
            "unreadable: Permission denied",
            None,
            None,
        )
        assert store.chunk_stats() == {}
        store.remove(["d"])
        assert store.documents() == []
        assert index.check(store) == []


def test_meta_stamps_and_awkward_names_round_trip(where):
    name = 'café "quoted" \\ name.md'  # the pipeline stores bytes that are not UTF-8 as \\xNN
    with index.open_index(where) as store:
        store.set_meta("folder", "/docs")
        put(store, name, 2)
        store.set_status([name], Status.STALE)
    with index.open_index(where, readonly=True) as store:
        assert store.meta("folder") == "/docs"
        assert store.meta("absent") is None
        (r,) = store.documents()
        assert (r.id, r.status, r.stamp, r.chunk_count) == (name, Status.STALE, STAMP, 2)
        assert [c.doc_id for c in store.chunks_at([(name, 1)])] == [name]


def test_a_reader_sees_every_write_acknowledged_before_it_opened(where, request):
    """A reader opened right after each write (the writer still open) finds the document
    whole: record, chunks and search. On a server a reader reads at one timestamp the server
    allocated as it opened (MilvusStore._reads); an eventually consistent read there would
    often miss a write made milliseconds before."""
    if isinstance(where, MilvusLocation) and where.local:
        pytest.skip("Milvus Lite: one process opens a folder once (a reader waits for the writer)")
    with index.open_index(where) as writer:
        for n in range(1, 6):
            put(writer, "d", n)
            with index.open_index(where, readonly=True) as reader:
                if request.node.callspec.params["where"] == "milvus-server":
                    assert reader._read["consistency_level"] == "Customized"
                assert [(r.id, r.chunk_count) for r in reader.documents()] == [("d", n)]
                assert len(reader.chunks(["d"])[0]) == n
                search = reader.engine_search(["d"]) or index.ExactScan(*reader.vectors(["d"]))
                assert len(search.nearest(unit([[1.0, 0.0]])[0], 10)) == n


def test_a_stale_index_is_refused_and_search_matches_the_exact_scan(where):
    rng = np.random.default_rng(7)
    vectors = unit(rng.standard_normal((300, 8)))
    stamp = Stamp("m", "0" * 16, 8, "p1", "1")
    with index.open_index(where) as store:
        for d in range(30):
            with store.replacing(f"doc{d:02}") as w:
                w.add(
                    [Chunk(f"doc{d:02}", i, f"t{i}", "c", "", 0, 1) for i in range(10)],
                    vectors[10 * d : 10 * d + 10],
                )
                w.finish(f"doc{d:02}.md", "sha", "T", stamp)
        ids = [r.id for r in store.documents()]
        exact = index.ExactScan(*store.vectors(ids))
        search = store.engine_search(ids) or exact
        assert len(search) == 300
        agree = []
        for q in unit(rng.standard_normal((40, 8))):
            theirs, ours = search.nearest(q, 10), exact.nearest(q, 10)
            agree.append(len({k for k, _ in theirs} & {k for k, _ in ours}) / 10)
            assert [d for _, d in theirs] == pytest.approx([d for _, d in ours], abs=1e-5)
        assert np.mean(agree) >= 0.99  # HNSW at 300 vectors: exact in practice
        store.set_status(ids[:1], Status.STALE)
        other = Stamp("m", "1" * 16, 8, "p1", "1")
        with store.replacing(ids[0]) as w:
            w.add([Chunk(ids[0], 0, "t", "c", "", 0, 1)], vectors[:1])
            w.finish("x.md", "sha", "T", other)
        encoder = HashEncoder(dims=8)
        with pytest.raises(index.StaleIndexError):
            index.retriever(store, encoder, "p1")


def test_a_milvus_name_that_is_not_an_index_is_refused_untouched(tmp_path):
    folder = tmp_path / "kb.db"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(Exception, match="Milvus Lite did not write"):
        MilvusStore(MilvusLocation.parse(str(folder)))
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    (tmp_path / "file.db").write_text("a file")
    with pytest.raises(Exception, match="is a file"):
        MilvusStore(MilvusLocation.parse(str(tmp_path / "file.db")))
    with pytest.raises(Exception, match="no index at"):
        MilvusStore(MilvusLocation.parse(str(tmp_path / "none.db")), readonly=True)
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("kb", "named *.db"),
        ("ftp://x", "a local folder, or http"),
        ("kb.db#9x", "not an index name"),
        ("kb.db#a__b", "not an index name"),
    ],
)
def test_a_store_uri_is_checked(text, fragment):
    with pytest.raises(ValueError, match=fragment.replace("*", r"\*")):
        MilvusLocation.parse(text)


# --- the command line --------------------------------------------------------------------


def _flag(where) -> list[str]:
    return ["--store", str(where)] if isinstance(where, MilvusLocation) else ["--index", str(where)]


def test_the_commands_on_each_store(where, run, tmp_path):
    docs = write(tmp_path / "docs", {**GOOD, "bad.md": b"\xff\xfe\x00binary\x00"})
    at = _flag(where)
    status, out, err = run("index", docs, *at)
    assert status == 1, err  # one file failed
    assert "3 indexed, 0 unchanged, 1 failed" in out
    if isinstance(where, MilvusLocation) and not where.local:  # the server's index waited for
        assert "waiting until the Milvus server's index covers the chunks written" in err
        with MilvusStore(where, readonly=True) as store:
            info = store._client.describe_index(store._chunks, index_name="vec")
        assert info["pending_index_rows"] == 0 and info["indexed_rows"] == info["total_rows"]
    status, out, _ = run("status", *at)
    assert status == 0 and "4 documents: 3 indexed, 1 failed, 0 stale" in out
    status, out, _ = run("status", "--check", *at)
    assert status == 0 and "sound" in out
    status, out, _ = run("ask", "how do gradients flow?", *at, "--json")
    assert status == 0 and '"quote": "Gradients flow backwards through the graph."' in out
    (docs / "bad.md").write_text("# Fixed\n\nGradients again.\n")
    status, out, err = run("retry", *at)
    assert status == 0, err
    status, out, _ = run("index", docs, *at)
    assert status == 0 and "0 indexed, 4 unchanged" in out
    status, out, err = run("index", docs, *at, "--rebuild")
    assert status == 0 and "4 indexed" in out, err
    shutil.rmtree(docs / "sub")
    (docs / "a.md").unlink()
    (docs / "b.md").unlink()
    status, _, err = run("index", docs, *at)
    assert status == 2 and "--prune" in err
    status, out, err = run("index", docs, *at, "--prune")
    assert status == 0 and "3 removed" in out, err
    status, out, _ = run("status", "--check", *at)
    assert status == 0 and "sound" in out


def test_a_server_that_does_not_answer_is_one_line_in_bounded_time(run, tmp_path, monkeypatch):
    """Nothing listening, and a listener that is not gRPC: pymilvus alone would retry
    without end (its memory growing by gigabytes a minute); refused within the timeout
    (here 1 s, not the 10 s default: the bound below is a third of the old one)."""
    monkeypatch.setattr("rag_lab.app.store.milvus.connection.CONNECT_SECONDS", 1.0)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    taken = listener.getsockname()[1]
    listener_free = _free_port()
    try:
        for port in (listener_free, taken):
            start = time.monotonic()
            status, _, err = run("status", "--store", f"http://127.0.0.1:{port}")
            assert status == 2
            assert f"cannot reach the Milvus server at http://127.0.0.1:{port}" in err
            assert "check that the server runs" in err
            assert time.monotonic() - start < 10
    finally:
        listener.close()


def test_a_milvus_lite_folder_open_elsewhere_waits_then_is_refused(run, tmp_path, monkeypatch):
    where = MilvusLocation.parse(str(tmp_path / "kb.db"))
    with MilvusStore(where):
        pass
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from rag_lab.app.store import MilvusLocation, MilvusStore
            store = MilvusStore(MilvusLocation.parse({str(where)!r}))
            print("open", flush=True)
            time.sleep(60)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout.readline() == "open\n"
        monkeypatch.setenv("RAG_LAB_LOCK_TIMEOUT", "0.5")
        status, _, err = run("status", "--store", where)
        assert status == 2
        assert f"the index {where} is locked by another process (waited 0.5 s)" in err
    finally:
        holder.kill()
        holder.wait()


def test_store_and_index_together_are_refused(run, tmp_path):
    status, _, err = run("status", "--index", tmp_path / "i.sqlite", "--store", tmp_path / "k.db")
    assert status == 2 and "not allowed with argument" in err


KILLS = 6
"""Runs of ``rag-lab index --store`` killed with SIGKILL at a random moment."""


@pytest.mark.parametrize("backend", ["milvus-lite"])
def test_kill_9_at_random_points_leaves_a_sound_index_that_resumes(backend, tmp_path):
    """As the SQLite table's kill -9 test (tests/app/test_hostile.py), on Milvus Lite."""

    docs = write(tmp_path / "docs", {f"d{i}.md": versioned(i, 0) for i in range(8)})
    where = MilvusLocation.parse(str(tmp_path / "index.db"))
    flag = ["--store", str(where)]
    held = 0
    # opening Milvus Lite takes about a second: the kills come later than SQLite's
    for run_no in killed_runs(docs, flag, kills=KILLS, delay=(0.5, 3.0)):
        if Path(where.uri).exists():
            try:
                store = MilvusStore(where)  # a writer's open settles what the kill left
            except Exception as err:  # killed before the index's pointer was written
                assert "no index" in str(err) or run_no == 1, err
                continue
            with store:
                assert index.check(store) == []
                assert store.integrity() == []
                records = store.documents()
            assert all(r.status.value == "indexed" and r.chunk_count for r in records)
            assert len(records) >= held
            held = len(records)
    index_to_the_end(docs, flag, timeout=120)
    with MilvusStore(where, readonly=True) as store:
        assert index.check(store) == []
        assert [r.id for r in store.documents()] == [f"d{i}" for i in range(8)]
