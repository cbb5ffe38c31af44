"""Test doubles shared by the index, ingestion, CLI and evaluation tests."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from rag_lab import paths
from rag_lab.chunking import chunk_document
from rag_lab.citations import Hit
from rag_lab.documents import Document
from rag_lab.models.minilm import Fingerprint


class HashEncoder:
    """Stands in for the model: hashed bag of words, so texts sharing words are near."""

    def __init__(
        self, name: str = "test/hash-bow", dims: int = 64, *, backend: str = "onnx"
    ) -> None:
        # As the real fingerprints do, each backend but torch is part of the fingerprint;
        # the default is the command line's default backend for a new index.
        marked = None if backend == "torch" else backend
        self.fingerprint = Fingerprint(name, "0" * 64, "bow", True, 10**6, dims, backend=marked)
        self.backend = backend
        self.calls = 0
        self.texts = 0

    def encode(self, texts, *, progress=None):
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.fingerprint.dimensions), dtype=np.float32)
        out[:, 0] = 0.1  # no zero vector, whatever the text
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i, zlib.crc32(word.encode()) % self.fingerprint.dimensions] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


GOOD = {
    "a.md": "# Alpha\n\nTensors hold numbers.\n\n## Shapes\n\nA shape lists the axis lengths.\n",
    "b.md": "# Beta\n\nGradients flow backwards through the graph.\n",
    "sub/c.txt": "Plain notes about broadcasting.\n",
}


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def questions_file(folder: Path, text: str) -> Path:
    """``text`` (dedented) as ``folder/q.yaml``: a question file for the loader's tests."""
    return write(folder, {"q.yaml": textwrap.dedent(text)}) / "q.yaml"


# A two-chunk document and a retriever that returns its chunks at fixed distances.
DOC = Document("01-a", "Alpha", "# Alpha\n\nFirst fact.\n\n## Two\n\nSecond fact.\n")
CHUNKS = chunk_document(DOC, "E")


class FixedRetriever:
    """Returns the document's chunks nearest first, at the distances given."""

    def __init__(self, distances: list[float]) -> None:
        self.distances = distances

    def nearest(self, question: str, k: int) -> list[Hit]:
        pairs = sorted(zip(self.distances, CHUNKS, strict=True), key=lambda p: p[0])[:k]
        return [Hit(c, DOC.title, d) for d, c in pairs]


@contextmanager
def serve(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server for ``folder`` (a stand-in for an upstream host) while inside:
    yields its base URL and the list of paths requested so far; logs nothing to stderr."""
    requested: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format, *args):
            pass

        def do_GET(self):
            requested.append(self.path)
            super().do_GET()

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def cli_runner(encoder: type, tmp_path: Path, monkeypatch, capsys):
    """``rag-lab ARGS`` in this process on a temporary default index (``$RAG_LAB_INDEX``),
    with ``encoder`` standing in for the model and a lock wait of 0.2 s: a function of the
    arguments (any objects, passed as strings) returning (exit status, stdout, stderr). It
    never raises: argparse's refusals are their exit status."""
    from rag_lab.app import cli, commands

    monkeypatch.setattr(commands, "Encoder", encoder)
    monkeypatch.setenv("RAG_LAB_INDEX", str(tmp_path / "index.sqlite"))
    monkeypatch.setenv("RAG_LAB_LOCK_TIMEOUT", "0.2")

    def call(*argv) -> tuple[int, str, str]:
        try:
            status = cli.main([str(a) for a in argv])
        except SystemExit as done:  # argparse's own refusals
            status = done.code
        out, err = capsys.readouterr()
        return status, out, err

    return call


# --- rag-lab index killed with SIGKILL ---------------------------------------------------

SLOW_INDEX = (
    "import sys, time; from fakes import HashEncoder; from rag_lab.app import cli, commands\n"
    "class Slow(HashEncoder):\n"
    "    def encode(self, texts, *, progress=None):\n"
    "        time.sleep(0.05); return super().encode(texts, progress=progress)\n"
    "commands.Encoder = Slow\n"
    "print('ready', flush=True)\n"
    "raise SystemExit(cli.main(sys.argv[1:]))\n"
)
"""``python -c SLOW_INDEX ARGS``: ``rag-lab ARGS`` with the stand-in encoder taking 50 ms
per batch (so a run has moments to be killed in), printing ``ready`` once it has started."""


def versioned(i: int, version: int) -> str:
    """Document ``d{i}.md`` at ``version``: 40 paragraphs, a few chunks."""
    return f"# Doc {i}\n\n" + f"Paragraph {i} (version {version}) on tensors.\n\n" * 40


def killed_runs(
    docs: Path, where: list[str], *, kills: int, delay: tuple[float, float], seed: int = 13
) -> Iterator[int]:
    """``rag-lab index DOCS WHERE`` killed with SIGKILL ``kills`` times: before each run
    three of the folder's eight ``d{i}.md`` change (so every run has work to be killed in),
    the kill comes a uniform ``delay`` seconds after it started. Yields the run's number
    after each kill, for the caller's checks; then the folder is as the last run left it.
    """
    argv, env = _slow_index(docs, where)
    rng = random.Random(seed)
    for run in range(1, kills + 1):
        for i in rng.sample(range(8), 3):
            (docs / f"d{i}.md").write_text(versioned(i, run))
        proc = subprocess.Popen(argv, env=env, cwd=paths.ROOT, stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(*delay))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        yield run


def index_to_the_end(docs: Path, where: list[str], timeout: float) -> None:
    """One ``rag-lab index DOCS WHERE`` (the slow stand-in) run to its end; it must succeed."""
    argv, env = _slow_index(docs, where)
    done = subprocess.run(
        argv, env=env, cwd=paths.ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr


def _slow_index(docs: Path, where: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of ``rag-lab index DOCS WHERE`` (:data:`SLOW_INDEX`)."""
    env = {**os.environ, "PYTHONPATH": f"{paths.ROOT}{os.pathsep}{paths.ROOT / 'tests'}"}
    return [sys.executable, "-c", SLOW_INDEX, "index", str(docs), *where], env
