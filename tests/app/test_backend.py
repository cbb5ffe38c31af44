"""The encoder backend of an index: chosen by ``index``, recorded, and the only one ``ask`` uses.

Also: the query path reads the vectors in one query and imports no torch, and indexing
streams documents (one in memory at a time, bounded batches).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from fakes import GOOD, HashEncoder, cli_runner, write

from rag_lab import paths
from rag_lab.app import cli, commands, exits, index, ingest
from rag_lab.app.store import SQLiteStore, StoreError
from rag_lab.search import ChunkIndex, DenseRetriever


class Recording(HashEncoder):
    """A :class:`HashEncoder` that remembers the backend of every instance made."""

    made: ClassVar[list[str]] = []

    def __init__(self, *, backend: str = index.DEFAULT_BACKEND) -> None:
        super().__init__(backend=backend)
        Recording.made.append(backend)


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    """``rag-lab ARGS`` on a temporary index with the recording encoder: (status, out, err)."""
    Recording.made = []
    return cli_runner(Recording, tmp_path, monkeypatch, capsys)


@pytest.fixture
def folder(tmp_path) -> Path:
    return write(tmp_path / "docs", GOOD)


def meta(path: Path, key: str) -> str | None:
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def test_an_unknown_backend_is_a_usage_error(run, folder, capsys):
    for argv in (["index", str(folder), "--backend", "tensorflow"], ["ask", "x", "--backend", ""]):
        with pytest.raises(SystemExit) as done:
            cli.main(argv)
        assert done.value.code == exits.ERROR
        assert "invalid choice" in capsys.readouterr().err


def test_a_new_index_takes_the_default_and_records_it(run, folder, tmp_path):
    status, out, _ = run("index", str(folder))
    assert status == exits.OK
    assert f"(encoder: {index.DEFAULT_BACKEND})" in out
    assert meta(tmp_path / "index.sqlite", index.BACKEND_KEY) == index.DEFAULT_BACKEND


def test_ask_embeds_with_the_backend_the_index_was_built_with(run, folder):
    assert run("index", str(folder), "--backend", "torch")[0] == exits.OK
    Recording.made = []
    status, out, _ = run("ask", "gradients flow backwards", "--cutoff", "0.9")
    assert status == exits.OK and out.startswith("3 sources")
    assert Recording.made == ["torch"]
    assert run("index", str(folder))[0] == exits.OK  # a later run keeps the index's backend
    assert Recording.made[-1] == "torch"


def test_ask_refuses_another_backend_with_one_line(run, folder):
    run("index", str(folder), "--backend", "onnx")
    status, out, err = run("ask", "tensors", "--backend", "torch")
    assert (status, out) == (exits.ERROR, "")
    [line] = err.splitlines()
    assert line.startswith("rag-lab ask: the index ")
    assert "was built with the onnx encoder backend" in line
    assert f"rag-lab index {folder.resolve()} --rebuild --backend torch" in line
    assert run("ask", "tensors", "--backend", "onnx")[0] == exits.OK  # the same one is fine


def test_changing_the_backend_needs_a_rebuild(run, folder, tmp_path):
    run("index", str(folder), "--backend", "onnx")
    status, _, err = run("index", str(folder), "--backend", "onnx-int8")
    assert status == exits.ERROR
    assert "built with the onnx encoder backend" in err and "--rebuild --backend onnx-int8" in err
    assert meta(tmp_path / "index.sqlite", index.BACKEND_KEY) == "onnx"  # nothing written

    status, out, _ = run("index", str(folder), "--rebuild", "--backend", "onnx-int8")
    assert status == exits.OK and "3 indexed" in out
    assert meta(tmp_path / "index.sqlite", index.BACKEND_KEY) == "onnx-int8"
    assert run("ask", "tensors")[0] == exits.OK
    assert Recording.made[-1] == "onnx-int8"


@pytest.mark.parametrize("built", ["torch", "onnx", "onnx-int8"])
def test_an_index_from_before_backends_is_read_by_its_stamps(
    run, folder, tmp_path, monkeypatch, built
):
    from rag_lab.models import minilm, onnx_minilm

    fingerprints = {b: HashEncoder(backend=b).fingerprint for b in ("torch", "onnx", "onnx-int8")}
    monkeypatch.setattr(minilm, "minilm_fingerprint", lambda: fingerprints["torch"])
    monkeypatch.setattr(onnx_minilm, "exported_fingerprint", lambda b: fingerprints[b])
    run("index", str(folder), "--backend", built)
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        db.execute("DELETE FROM meta WHERE key = ?", (index.BACKEND_KEY,))
    with SQLiteStore(tmp_path / "index.sqlite", readonly=True) as store:
        assert index.recorded_backend(store) == built
    assert run("ask", "tensors")[0] == exits.OK
    assert Recording.made[-1] == built
    assert index.stamped_backend({"no such key"}) == index.LEGACY_BACKEND


def test_an_empty_index_records_no_backend(tmp_path):
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        assert index.recorded_backend(store) is None


def test_an_unknown_recorded_backend_is_refused(run, folder, tmp_path):
    run("index", str(folder))
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        db.execute("UPDATE meta SET value = 'tpu' WHERE key = ?", (index.BACKEND_KEY,))
    status, _, err = run("ask", "tensors")
    assert status == exits.ERROR
    assert "records the encoder backend 'tpu'" in err
    assert run("index", str(folder), "--rebuild")[0] == exits.OK  # a rebuild replaces it
    assert meta(tmp_path / "index.sqlite", index.BACKEND_KEY) == index.DEFAULT_BACKEND


def test_a_missing_onnx_runtime_is_a_usage_error(run, folder, monkeypatch):
    def missing(**kwargs):
        raise ModuleNotFoundError("No module named 'onnxruntime'", name="onnxruntime")

    monkeypatch.setattr(commands, "Encoder", missing)
    status, _, err = run("index", str(folder), "--backend", "onnx")
    assert status == exits.ERROR
    assert "the onnx backend needs onnxruntime" in err and "pip install rag_lab" in err


# --- the query path -------------------------------------------------------------------


def test_the_stored_retriever_ranks_as_the_in_memory_one(tmp_path):
    docs = write(tmp_path / "docs", GOOD)
    encoder = HashEncoder()
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        ingest.index_folder(docs, store, encoder, progress=False)
        chunks, vectors = store.chunks([r.id for r in store.documents()])
        keys, matrix = store.vectors([r.id for r in store.documents()])
        assert keys == [(c.doc_id, c.index) for c in chunks]
        assert matrix.dtype == np.float32 and np.array_equal(matrix, vectors)
        titles = {r.id: r.title for r in store.documents()}
        memory = DenseRetriever(ChunkIndex(chunks, vectors), encoder, titles)
        stored = index.retriever(store, encoder)
        for question in ("tensors and shapes", "gradients", "zebra", "plain notes"):
            assert stored.nearest(question, 3) == memory.nearest(question, 3)


def test_vectors_of_mixed_sizes_are_a_damaged_index(tmp_path):
    docs = write(tmp_path / "docs", GOOD)
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        ingest.index_folder(docs, store, HashEncoder(), progress=False)
    with sqlite3.connect(tmp_path / "i.sqlite") as db:
        db.execute("UPDATE chunks SET vector = zeroblob(8) WHERE doc_id = 'b'")
    with SQLiteStore(tmp_path / "i.sqlite", readonly=True) as store:
        with pytest.raises(StoreError, match="vectors of different sizes"):
            store.vectors(["a", "b"])


def test_indexing_streams_documents_in_bounded_batches(tmp_path, monkeypatch):
    """Each document is committed before the next is read; no encode call exceeds a batch."""
    long = "# Long\n\n" + "\n\n".join(f"Paragraph {i} about tensors. " * 12 for i in range(300))
    docs = write(tmp_path / "docs", {**GOOD, "long.md": long})
    encoder = HashEncoder()
    calls: list[int] = []
    encode = encoder.encode
    monkeypatch.setattr(
        encoder, "encode", lambda texts, **kw: calls.append(len(texts)) or encode(texts)
    )
    committed_at_read: list[int] = []
    read = ingest.read_source

    def counting(source, options):
        with SQLiteStore(tmp_path / "i.sqlite", readonly=True) as other:  # committed rows only
            committed_at_read.append(len(other.documents()))
        return read(source, options)

    monkeypatch.setattr(ingest, "read_source", counting)
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        report = ingest.index_folder(docs, store, encoder, progress=False)
        long_chunks = store.document("long").chunk_count
        total = sum(r.chunk_count for r in store.documents())
    assert len(report.indexed) == 4
    assert committed_at_read == [0, 1, 2, 3]
    assert max(calls) <= ingest.WRITE_BATCH < long_chunks
    assert sum(calls) == total  # every chunk embedded once


@pytest.mark.model
def test_ask_on_onnx_imports_no_torch(tmp_path):
    """A cold ``rag-lab ask`` on an ONNX index: no torch, sentence-transformers, pandas, scipy."""
    from rag_lab.models.onnx_minilm import graph_path

    graph_path("onnx-int8")  # exported once into the cache (imports torch here, if ever)
    docs = write(tmp_path / "docs", GOOD)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "onnx").symlink_to((paths.cache_dir() / "onnx").resolve(), target_is_directory=True)
    env = {**os.environ, "RAG_LAB_CACHE": str(cache), "PYTHONPATH": str(paths.ROOT)}
    where = ["--index", str(tmp_path / "i.sqlite")]
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "rag_lab.app.cli",
            "index",
            str(docs),
            *where,
            "--backend",
            "onnx-int8",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    code = textwrap.dedent(
        f"""
        import sys
        from rag_lab.app import cli
        status = cli.main(["ask", "what do tensors hold?", "--cutoff", "2", *{where!r}])
        heavy = ("torch", "sentence_transformers", "transformers", "pandas", "scipy")
        print(status, sorted(m for m in heavy if m in sys.modules))
        """
    )
    asked = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.splitlines()[-1] == "0 []"
    assert asked.stdout.startswith("4 sources")
