"""``rag-lab index`` and a cold ``rag-lab ask``: wall time and peak memory as the folder grows.

Run as ``python benchmarks/bench_cli.py`` (``--sizes 1000,10000`` to choose the sizes,
``--backend onnx-int8`` or ``torch`` for another encoder than a new index's). For each size
it writes a deterministic folder of Markdown files of about :data:`FILE_CHARS` characters
each, built from the lab's corpus (every file gets its own title, so every chunk text is
new and nothing comes from a cache), until strategy E cuts at least that many chunks. Then,
each command in its own process, as a user runs it:

1. ``rag-lab index DIR``: wall time and peak resident memory (the child's ``ru_maxrss``
   from ``os.wait4``), embedding into an empty vector cache in a temporary folder;
2. ``rag-lab ask QUESTION``: cold, a new process each time, :data:`ASKS` different
   questions; the median wall time and the largest peak resident memory.

The table gives each number and its ratio to the smallest size's. Time is expected to grow
with the chunks for ``index`` and stay nearly flat for ``ask``; memory should stay flat for
both (``index`` holds one document at a time, ``ask`` one float32 matrix of the vectors).
The ONNX graph is taken from ``$RAG_LAB_CACHE/onnx`` (exported there first if missing).
Threads: ``$OMP_NUM_THREADS`` (default 2, as ``make bench`` sets it).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")  # before numpy and onnxruntime start their pools

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rag_lab import paths
from rag_lab.app.index import DEFAULT_BACKEND, STRATEGY
from rag_lab.chunking import chunk_document
from rag_lab.documents import Document
from rag_lab.evaluation.latency import machine
from rag_lab.models.encoder import BACKENDS
from rag_lab.sources.d2l import load_corpus

SIZES = (1_000, 2_500, 5_000, 10_000)
"""Chunks in each generated folder (at least; a folder ends with a whole file)."""
FILE_CHARS = 8_000
"""Characters of body per generated file: about 16 chunks of strategy E."""
ASKS = 5
QUESTIONS = (
    "how does broadcasting expand tensors of different shapes?",
    "what does the learning rate control in minibatch gradient descent?",
    "why does dropout help against overfitting?",
    "how is attention computed from queries, keys and values?",
    "what is the difference between a convolution and a cross-correlation?",
)
SEED = 0


@dataclass(frozen=True)
class Run:
    """One child process: its wall time, peak resident memory and exit status."""

    seconds: float
    peak_mb: float
    status: int


def write_folder(folder: Path, chunks: int, seed: int = SEED) -> tuple[int, int]:
    """Write Markdown files under ``folder`` until they hold at least ``chunks`` chunks.

    Paragraphs (and their ``## `` headings) of the lab's corpus in a seeded shuffled order,
    :data:`FILE_CHARS` per file, each file titled ``Notes NNNNN: <source title>``. Returns
    (files, chunks) written.
    """
    corpus = load_corpus()
    blocks = [
        (doc.title, block.strip())
        for doc in corpus
        for block in doc.text.split("\n\n")
        if block.strip() and not block.startswith("# ")
    ]
    random.Random(seed).shuffle(blocks)
    folder.mkdir(parents=True)
    files = total = at = 0
    while total < chunks:
        title = blocks[at % len(blocks)][0]
        body: list[str] = []
        while sum(map(len, body)) < FILE_CHARS:
            body.append(blocks[at % len(blocks)][1])
            at += 1
        doc_id = f"notes-{files:05d}"
        text = f"# Notes {files:05d}: {title}\n\n" + "\n\n".join(body) + "\n"
        (folder / f"{doc_id}.md").write_text(text, encoding="utf-8")
        total += len(chunk_document(Document(doc_id, title, text), STRATEGY))
        files += 1
    return files, total


def run(argv: list[str], env: dict[str, str], log: Path) -> Run:
    """Run ``argv``, its output to ``log``; its own peak memory comes from ``os.wait4``."""
    with log.open("ab") as out:
        start = time.perf_counter()
        child = subprocess.Popen(argv, env=env, stdout=out, stderr=out, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, usage.ru_maxrss / 1024, child.returncode)  # Linux: kB


def measure(
    size: int, backend: str, tmp: Path, env: dict[str, str], store: str = "sqlite"
) -> dict[str, float]:
    """Index a generated folder of ``size`` chunks, then ask it :data:`ASKS` times, cold.

    ``store``: ``sqlite`` (``--index FILE``), ``milvus`` (``--store FOLDER.db``, Milvus
    Lite, the engine's default HNSW index) or a server's URI (``--store URI#bench_cliN``: a
    collection of its own on that server, dropped afterwards by the caller)."""
    folder = tmp / f"docs-{size}"
    files, chunks = write_folder(folder, size)
    if store == "milvus":
        where = ["--store", str(tmp / f"index-{size}.db")]
    elif store.startswith(("http://", "https://")):
        where = ["--store", f"{store}#bench_cli{size}"]
    else:
        where = ["--index", str(tmp / f"index-{size}.sqlite")]
    log = tmp / f"log-{size}.txt"
    cli = [sys.executable, "-m", "rag_lab.app.cli"]
    built = run([*cli, "index", str(folder), *where, "--backend", backend], env, log)
    if built.status != 0:
        raise SystemExit(f"rag-lab index failed ({built.status}); see {log}:\n{log.read_text()}")
    asks = []
    for question in (QUESTIONS * ASKS)[:ASKS]:
        asked = run([*cli, "ask", question, *where], env, log)
        if asked.status != 0:
            raise SystemExit(f"rag-lab ask failed ({asked.status}):\n{log.read_text()}")
        asks.append(asked)
    return {
        "files": files,
        "chunks": chunks,
        "index_s": built.seconds,
        "index_mb": built.peak_mb,
        "ask_s": statistics.median(a.seconds for a in asks),
        "ask_mb": max(a.peak_mb for a in asks),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        default=SIZES,
        help=f"chunks per folder, comma-separated (default {','.join(map(str, SIZES))})",
    )
    parser.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND)
    parser.add_argument(
        "--stores",
        type=lambda text: tuple(text.split(",")),
        default=("sqlite", "milvus"),
        help="the indexes to measure, comma-separated: sqlite (a file), milvus (Milvus "
        "Lite, rag-lab --store FOLDER.db) and any http://host:port (a Milvus server: a "
        "collection bench_cliN of its own, dropped afterwards); default sqlite,milvus",
    )
    args = parser.parse_args(argv)
    if args.backend != "torch":
        from rag_lab.models.onnx_minilm import graph_path

        graph_path(args.backend)  # exported once, outside the timed runs
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as name:
        tmp = Path(name)
        cache = tmp / "cache"
        cache.mkdir()
        (cache / "onnx").symlink_to(paths.cache_dir().resolve() / "onnx")
        env = {
            **os.environ,
            "RAG_LAB_CACHE": str(cache),  # vectors: an empty cache, so indexing embeds all
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(paths.ROOT), os.environ.get("PYTHONPATH")])
            ),
            "TOKENIZERS_PARALLELISM": "false",
        }
        print(machine())
        print(
            f"rag-lab index and cold rag-lab ask into {' and '.join(args.stores)}, backend "
            f"{args.backend}, "
            f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, {os.cpu_count()} CPUs; "
            f"files of ~{FILE_CHARS:,} chars from the lab's corpus, strategy {STRATEGY}, an "
            f"empty vector cache; ask: median wall of {ASKS} cold processes, max peak RSS"
        )
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            print(
                "note: PYTHONDONTWRITEBYTECODE is set, so every cold process compiles the "
                "package's sources again (no __pycache__): ask times include that"
            )
        head = (
            f"{'store':>7} {'chunks':>7} {'files':>6} {'index s':>8} {'×':>6} {'index MB':>9} "
            f"{'×':>6} {'ask s':>6} {'×':>6} {'ask MB':>7} {'×':>6}"
        )
        print(head)
        for store in args.stores:
            label = "server" if store.startswith(("http://", "https://")) else store
            first = row = None
            for size in args.sizes:
                fresh = tmp / store / f"cache-{size}"  # every run embeds everything
                fresh.mkdir(parents=True)
                (fresh / "onnx").symlink_to(paths.cache_dir().resolve() / "onnx")
                row = measure(
                    size, args.backend, tmp / store, env | {"RAG_LAB_CACHE": str(fresh)}, store
                )
                if store.startswith(("http://", "https://")):
                    from bench_engine import drop_index  # its neighbour in benchmarks/

                    from rag_lab.app.store import MilvusLocation

                    drop_index(MilvusLocation.parse(f"{store}#bench_cli{size}"))
                first = first or row
                ratio = {k: row[k] / first[k] for k in ("index_s", "index_mb", "ask_s", "ask_mb")}
                print(
                    f"{label:>7} {row['chunks']:>7,} {row['files']:>6} {row['index_s']:8.1f} "
                    f"{ratio['index_s']:5.2f}x {row['index_mb']:9.0f} {ratio['index_mb']:5.2f}x "
                    f"{row['ask_s']:6.2f} {ratio['ask_s']:5.2f}x {row['ask_mb']:7.0f} "
                    f"{ratio['ask_mb']:5.2f}x",
                    flush=True,
                )
            rate = row["chunks"] / row["index_s"]
            print(
                f"{label:>7}: {rate:.1f} chunks/s at {row['chunks']:,} chunks (embedding "
                f"included): a million would take {1e6 / rate / 3600:.1f} h on this CPU"
            )


if __name__ == "__main__":
    main()
