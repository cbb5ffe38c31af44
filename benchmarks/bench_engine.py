"""SQLite's exact scan against Milvus's approximate index, at 10,000 to 1,000,000 vectors.

Run as ``python benchmarks/bench_engine.py`` (``--sizes 10000,100000`` to choose the sizes,
``--index-type FLAT`` for the engine's exact index). For each size it builds two indexes of
the same vectors through the store interface the indexer uses (documents of
:data:`PER_DOC` chunks, stamped by the real encoder, so ``rag-lab ask`` accepts them): a
SQLite file and Milvus Lite (HNSW, :data:`rag_lab.app.store.milvus.HNSW_BUILD`). Then, each
in its own process as a user runs it, :data:`ASKS` cold ``rag-lab ask`` per store: the
median wall time and the largest peak resident memory (the child's ``ru_maxrss``). The
size on disk of each. And, in this process, the engine's top 10 for every query against
the exact top 10 of the same vectors (numpy, float32): recall@10 per query, its mean with a
95 % bootstrap interval over queries, and the engine's warm latency per query. A server
(``--server``) is measured as the indexer leaves it (whose writer waits until the engine's
HNSW index covers every row: :meth:`MilvusStore.wait_indexed`), then released and loaded
again (:func:`settle`), and there at each search ``ef`` of ``--ef`` (recall and warm
latency; the cold ``ask`` at the store's default, :data:`rag_lab.app.store.milvus.reads.HNSW_EF`).
``--skip-lite`` leaves Milvus Lite out (it searches every vector whatever index it is asked
for: 469 s to build at a million).

The vectors: every real chunk vector the lab's embedding cache holds for the current
encoder (``$RAG_LAB_CACHE/embeddings``: the d2l chunkings of notebooks 02–05 and, once
notebook 10 ran, Chroma's), and beyond them *perturbed copies*: a real vector plus Gaussian
noise of :data:`NOISE` per dimension, renormalised (cosine to its source about 0.93), so
that neighbourhoods keep the real vectors' shape. The table says how many are real. The
queries: the lab's 64 question wordings (``data/questions.yaml``), embedded live.

Indexing real text (embedding included) is ``bench_cli.py``'s: ``rag-lab index`` into both
stores from 1,000 to 10,000 chunks of new text, its memory against the size, and the hours a
million chunks would take on this CPU. Threads: ``$OMP_NUM_THREADS`` (default 2).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from rag_lab import paths
from rag_lab.app import index
from rag_lab.app.store import MilvusLocation, MilvusStore, SQLiteStore
from rag_lab.app.store.milvus.reads import HNSW_EF
from rag_lab.chunking import Chunk
from rag_lab.evaluation.latency import machine
from rag_lab.models.encoder import Encoder

SIZES = (10_000, 100_000, 1_000_000)
PER_DOC = 1_000
"""Chunks per document of the built indexes (1,000 documents at a million)."""
ASKS = 5
NOISE = 0.015
"""Per-dimension standard deviation of a perturbed copy's noise (384 dimensions)."""
SEED = 0
QUESTION = "how does broadcasting expand tensors of different shapes?"


def real_vectors(dims: int, key: str) -> np.ndarray:
    """Every vector the embedding cache holds for the encoder whose fingerprint is ``key``."""
    cache = paths.cache_dir() / "embeddings" / f"{key}.sqlite"
    if not cache.exists():
        raise SystemExit(f"no embedding cache at {cache}: run make reproduce first")
    with sqlite3.connect(cache) as db:
        blobs = [b for (b,) in db.execute("SELECT vec FROM vectors ORDER BY sha")]
    v = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims)
    return np.unique(v, axis=0)


def vectors_of(size: int, real: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``size`` unit vectors: the real ones first, then perturbed copies; (matrix, real)."""
    n_real = min(size, len(real))
    parts = [real[:n_real]]
    while sum(len(p) for p in parts) < size:
        need = min(size - sum(len(p) for p in parts), len(real))
        src = real[rng.integers(0, len(real), need)]
        noisy = src + rng.normal(0, NOISE, src.shape).astype(np.float32)
        parts.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
    return np.concatenate(parts), n_real


def build(store, vectors: np.ndarray, stamp) -> float:
    """Write ``vectors`` into ``store`` as documents of :data:`PER_DOC` chunks; seconds."""
    start = time.perf_counter()
    for d, lo in enumerate(range(0, len(vectors), PER_DOC)):
        doc_id = f"doc{d:06}"
        block = vectors[lo : lo + PER_DOC]
        with store.replacing(doc_id) as w:
            w.add(
                [
                    Chunk(doc_id, i, f"chunk {lo + i}", f"chunk {lo + i}", "", 0, 1)
                    for i in range(len(block))
                ],
                block,
            )
            w.finish(f"{doc_id}.md", "0" * 64, f"Document {d}", stamp)
    return time.perf_counter() - start


LAUNCH = (
    "import json, os, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "child = subprocess.Popen(sys.argv[1:], stdout=sys.stderr, stdin=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "print(json.dumps([time.perf_counter() - start, usage.ru_maxrss / 1024,\n"
    "                  os.waitstatus_to_exitcode(status)]))\n"
)
"""Runs a command and prints [wall s, peak MB, exit status]. Measured from this small
process: a child forked from the benchmark itself starts with its peak memory (gigabytes of
vectors), which ``ru_maxrss`` would report as the child's."""


def cold_asks(flag: list[str], env: dict[str, str], log: Path) -> tuple[float, float]:
    """Median wall seconds and largest peak MB of :data:`ASKS` cold ``rag-lab ask``."""
    walls, peaks = [], []
    for _ in range(ASKS):
        ask = [sys.executable, "-m", "rag_lab.app.cli", "ask", QUESTION, *flag]
        with log.open("ab") as out:
            done = subprocess.run(
                [sys.executable, "-c", LAUNCH, *ask], env=env, stdout=subprocess.PIPE, stderr=out
            )
        wall, peak, status = json.loads(done.stdout)
        if status != 0:
            raise SystemExit(f"rag-lab ask {' '.join(flag)} failed; see {log}")
        walls.append(wall)
        peaks.append(peak)
    return statistics.median(walls), max(peaks)


def recall_at_10(store: MilvusStore, vectors: np.ndarray, queries: np.ndarray) -> tuple:
    """Per query |engine top 10 ∩ exact top 10| / 10; (mean, low, high, warm ms median).
    The engine searches with ``store.ef``."""
    keys = [(f"doc{i // PER_DOC:06}", i % PER_DOC) for i in range(len(vectors))]
    search = store.engine_search([r.id for r in store.documents()])
    recalls, ms = [], []
    for q in queries:
        exact = {keys[i] for i in np.argsort(-(vectors @ q), kind="stable")[:10]}
        start = time.perf_counter()
        found = {k for k, _ in search.nearest(q, 10)}
        ms.append(1000 * (time.perf_counter() - start))
        recalls.append(len(found & exact) / 10)
    r = np.array(recalls)
    boot = np.random.default_rng(SEED).choice(r, (10_000, len(r))).mean(axis=1)
    return r.mean(), *np.quantile(boot, [0.025, 0.975]), statistics.median(ms)


def settle(where: MilvusLocation) -> float:
    """Wait until a server index's vector index covers every row (as its writer did), then
    release and load its chunks again; seconds. Whether the query nodes serve the finished
    index without a reload is what the row before this one measures."""
    start = time.perf_counter()
    with MilvusStore(where, readonly=True) as store:
        store.wait_indexed()
        store._client.release_collection(store._chunks)
        store._client.load_collection(store._chunks)
    return time.perf_counter() - start


def disk_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--index-type", default="HNSW", choices=("HNSW", "FLAT"))
    parser.add_argument(
        "--ef",
        default=str(HNSW_EF),
        help=f"a server's search ef values, comma-separated (default {HNSW_EF})",
    )
    parser.add_argument("--skip-lite", action="store_true", help="measure no Milvus Lite")
    parser.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="URI",
        help="also measure a Milvus server at URI (http://host:port); repeatable",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    efs = [int(e) for e in args.ef.split(",")]
    encoder = Encoder(backend=index.DEFAULT_BACKEND)
    stamp = index.current_stamp(encoder.fingerprint)
    real = real_vectors(stamp.dimensions, encoder.fingerprint.key)
    wordings = yaml.safe_load((paths.ROOT / "data" / "questions.yaml").read_text())["questions"]
    texts = [q[k] for q in wordings for k in ("course", "ticket")]
    queries = encoder.encode(texts)
    print(machine())
    print(
        f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; {len(real):,} real chunk vectors in "
        f"the cache; {len(queries)} queries; engine index {args.index_type}"
    )
    env = {**os.environ, "PYTHONPATH": str(paths.ROOT)}
    table = []
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp_name:
        tmp = Path(tmp_name)
        log = tmp / "log.txt"
        for size in sizes:
            vectors, n_real = vectors_of(size, real, np.random.default_rng(SEED))
            db = tmp / f"sqlite-{size}.sqlite"
            with SQLiteStore(db) as store:
                built = build(store, vectors, stamp)
            wall, peak = cold_asks(["--index", str(db)], env, log)
            base = wall
            table.append(
                (size, n_real, "SQLite (exact)", built, wall, base, None, peak, disk_mb(db))
            )
            print(
                f"{size:>9,} ({n_real:,} real) SQLite: build {built:.0f} s, cold ask "
                f"{wall:.2f} s, {peak:.0f} MB, {disk_mb(db):.0f} MB on disk",
                flush=True,
            )
            db.unlink()
            engines = (
                []
                if args.skip_lite
                else [("Milvus Lite", MilvusLocation.parse(str(tmp / f"milvus-{size}.db")))]
            )
            engines += [
                (f"Milvus server {uri}", MilvusLocation.parse(f"{uri}#bench{size}"))
                for uri in args.server
            ]
            for label, where in engines:
                with MilvusStore(where, index_type=args.index_type) as store:
                    built = build(store, vectors, stamp)
                # A server: as its writer left it (indexed), then released and loaded again,
                # there at each ef.
                states = [("", HNSW_EF)]
                if not where.local:
                    states += [(", reloaded", HNSW_EF)]
                    states += [(f", reloaded, ef {ef}", ef) for ef in efs if ef != HNSW_EF]
                for state, ef in states:
                    if state == ", reloaded":
                        waited = settle(where)
                        print(f"{size:>9,} {label}: released and loaded again in {waited:.0f} s")
                    with MilvusStore(where, readonly=True, ef=ef) as store:
                        recall = recall_at_10(store, vectors, queries)
                    # rag-lab ask searches at the default ef: its cold runs are measured there
                    wall = peak = None
                    if ef == HNSW_EF:
                        wall, peak = cold_asks(["--store", str(where)], env, log)
                    size_mb = disk_mb(Path(where.uri)) if where.local else None
                    table.append(
                        (size, n_real, label + state, built, wall, base, recall, peak, size_mb)
                    )
                    cold = (
                        ""
                        if wall is None
                        else f", cold ask {wall:.2f} s ({wall / base:.2f}x SQLite), {peak:.0f} MB"
                    )
                    print(
                        f"{size:>9,} {label}{state}: build {built:.0f} s{cold}, recall@10 "
                        f"{recall[0]:.3f} [{recall[1]:.3f}, {recall[2]:.3f}], warm "
                        f"{recall[3]:.1f} ms/query",
                        flush=True,
                    )
                drop_index(where)
    print()
    print(
        "| vectors (real) | store | build s | cold `ask` s | × SQLite | recall@10 vs exact "
        "[95 % CI] | warm ms/query | peak MB | disk MB |"
    )
    print("|---|---|---:|---:|---:|---|---:|---:|---:|")
    for size, n_real, label, built, wall, base, recall, peak, size_mb in table:
        r = "exact" if recall is None else f"{recall[0]:.3f} [{recall[1]:.3f}, {recall[2]:.3f}]"
        ms = "" if recall is None else f"{recall[3]:.1f}"
        on_disk = "(server)" if size_mb is None else f"{size_mb:.0f}"
        cold = "| | |" if wall is None else f"| {wall:.2f} | {wall / base:.2f} |"
        mb = "" if peak is None else f"{peak:.0f}"
        print(
            f"| {size:,} ({n_real:,}) | {label} | {built:.0f} {cold} {r} | {ms} | {mb} | "
            f"{on_disk} |"
        )


def drop_index(where: MilvusLocation) -> None:
    """Remove a measured index: its folder, or its collections on a server."""
    if where.local:
        shutil.rmtree(where.uri)
        return
    with MilvusStore(where) as store:
        store.drop()
        store._client.drop_collection(f"{where.name}__current")


if __name__ == "__main__":
    main()
