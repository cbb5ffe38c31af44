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
95 % bootstrap interval over queries, and the engine's warm latency per query.

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
from rag_lab.chunking import Chunk
from rag_lab.experiments.timing import machine
from rag_lab.models.encoder import Encoder

SIZES = (10_000, 100_000, 1_000_000)
PER_DOC = 100
"""Chunks per document of the built indexes (10,000 documents at a million)."""
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


def cold_asks(flag: list[str], env: dict[str, str], log: Path) -> tuple[float, float]:
    """Median wall seconds and largest peak MB of :data:`ASKS` cold ``rag-lab ask``."""
    walls, peaks = [], []
    for _ in range(ASKS):
        with log.open("ab") as out:
            start = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, "-m", "rag_lab.app.cli", "ask", QUESTION, *flag],
                env=env,
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
            )
            _, status, usage = os.wait4(child.pid, 0)
            walls.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"rag-lab ask {' '.join(flag)} failed; see {log}")
        peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(walls), max(peaks)


def recall_at_10(store: MilvusStore, vectors: np.ndarray, queries: np.ndarray) -> tuple:
    """Per query |engine top 10 ∩ exact top 10| / 10; (mean, low, high, warm ms median)."""
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


def disk_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--index-type", default="HNSW", choices=("HNSW", "FLAT"))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
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
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp_name:
        tmp = Path(tmp_name)
        for size in sizes:
            vectors, n_real = vectors_of(size, real, np.random.default_rng(SEED))
            db = tmp / f"sqlite-{size}.sqlite"
            with SQLiteStore(db) as store:
                sqlite_build = build(store, vectors, stamp)
            where = MilvusLocation.parse(str(tmp / f"milvus-{size}.db"))
            with MilvusStore(where, index_type=args.index_type) as store:
                milvus_build = build(store, vectors, stamp)
            with MilvusStore(where, readonly=True) as store:  # reopened: indexes built, loaded
                recall, low, high, warm_ms = recall_at_10(store, vectors, queries)
            log = tmp / "log.txt"
            sq_wall, sq_peak = cold_asks(["--index", str(db)], env, log)
            mv_wall, mv_peak = cold_asks(["--store", str(where)], env, log)
            rows.append(
                (
                    size,
                    n_real,
                    sqlite_build,
                    milvus_build,
                    sq_wall,
                    mv_wall,
                    recall,
                    low,
                    high,
                    warm_ms,
                    sq_peak,
                    mv_peak,
                    disk_mb(db),
                    disk_mb(Path(where.uri)),
                )
            )
            print(
                f"{size:>9,} vectors ({n_real:,} real): build SQLite {sqlite_build:.0f} s, "
                f"Milvus {milvus_build:.0f} s; cold ask SQLite {sq_wall:.2f} s ({sq_peak:.0f} MB), "
                f"Milvus {mv_wall:.2f} s ({mv_peak:.0f} MB); recall@10 {recall:.3f} "
                f"[{low:.3f}, {high:.3f}], warm {warm_ms:.1f} ms/query; disk "
                f"{disk_mb(db):.0f} MB vs {disk_mb(Path(where.uri)):.0f} MB",
                flush=True,
            )
            db.unlink()
            shutil.rmtree(where.uri)
        print()
        print(
            "| vectors | real | cold `ask` SQLite s | cold `ask` Milvus s | ratio | "
            "recall@10 [95 % CI] | peak MB SQLite / Milvus | disk MB SQLite / Milvus |"
        )
        print("|---:|---:|---:|---:|---:|---|---|---|")
        for size, n_real, _, _, sq, mv, r, lo, hi, _, sp, mp, sd, md in rows:
            print(
                f"| {size:,} | {n_real:,} | {sq:.2f} | {mv:.2f} | {mv / sq:.2f} | "
                f"{r:.3f} [{lo:.3f}, {hi:.3f}] | {sp:.0f} / {mp:.0f} | {sd:.0f} / {md:.0f} |"
            )


if __name__ == "__main__":
    main()
