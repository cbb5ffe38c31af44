"""Test doubles shared by the index, ingestion, CLI and evaluation tests."""

from __future__ import annotations

import re
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

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
    """``rag-lab ARGS`` on a temporary index with ``encoder`` standing in for the model:
    a function of the arguments returning (exit status, stdout, stderr)."""
    from rag_lab.app import cli

    monkeypatch.setattr(cli, "Encoder", encoder)
    monkeypatch.setenv("RAG_LAB_INDEX", str(tmp_path / "index.sqlite"))

    def call(*argv: str) -> tuple[int, str, str]:
        status = cli.main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return call
