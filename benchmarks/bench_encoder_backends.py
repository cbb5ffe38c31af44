"""Encoder backends: torch against ONNX Runtime fp32 and int8, on one thread.

Run as ``OMP_NUM_THREADS=1 python benchmarks/bench_encoder_backends.py`` (it sets one thread
itself: torch.set_num_threads(1), ORT intra_op_num_threads=1). Prints four tables:

1. indexing: ms per chunk over an evenly spaced sample of strategy-E chunks, embedded as the
   lab indexes (length-sorted batches of 32, no cache); median of :data:`REPEATS` runs, the
   backends interleaved, ratios against torch from the same run;
2. queries: ms per query over the lab's 64 queries, one per call as ``rag-lab ask`` does;
3. agreement over the whole strategy-E corpus: max |Δ| per component and min cosine;
4. retrieval: Recall@4/@20 of the 64 queries on strategy E, and the paired exact sign test.

The ONNX graphs are exported into ``$RAG_LAB_CACHE/onnx`` on first use (a few seconds, once);
vectors go to a temporary cache, so nothing the lab reports is touched.
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before numpy, torch and onnxruntime start their pools

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from rag_lab.experiments.lab import setup
from rag_lab.experiments.runs import dense_ranks
from rag_lab.metrics import hits_at
from rag_lab.models.encoder import BACKENDS, Encoder
from rag_lab.stats import paired

SAMPLE = 256
REPEATS = 5
QUERY_REPEATS = 3
CUTOFFS = (4, 20)


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        cached = {b: Encoder(backend=b, cache_root=Path(tmp) / b) for b in BACKENDS}
        lab = setup(encoder=cached["torch"])
        chunks = lab.chunks_by["E"]
        texts = [c.text for c in chunks]
        picks = np.linspace(0, len(texts) - 1, SAMPLE).round().astype(int)
        sample = [texts[i] for i in picks]
        queries = [q.text for q in lab.queries]

        timed = {b: Encoder(backend=b, cache=False) for b in BACKENDS}
        for enc in timed.values():
            enc.encode(sample[:32])  # warm-up: load the model, allocate
        index_s = {b: [] for b in BACKENDS}
        for _ in range(REPEATS):
            for b, enc in timed.items():
                index_s[b].append(_seconds(lambda enc=enc: enc.encode(sample, progress=False)))
        query_s = {b: [] for b in BACKENDS}
        for _ in range(QUERY_REPEATS):
            for b, enc in timed.items():
                query_s[b].append(_seconds(lambda enc=enc: [enc.encode([q]) for q in queries]))

        chunk_ms = {b: 1000 * statistics.median(s) / SAMPLE for b, s in index_s.items()}
        query_ms = {b: 1000 * statistics.median(s) / len(queries) for b, s in query_s.items()}
        print(
            f"{SAMPLE} of {len(texts)} strategy-E chunks and {len(queries)} queries, one thread, "
            f"median of {REPEATS} (queries: {QUERY_REPEATS}) runs"
        )
        print(f"{'backend':<10} {'ms/chunk':>9} {'vs torch':>9} {'ms/query':>9} {'vs torch':>9}")
        for b in BACKENDS:
            print(
                f"{b:<10} {chunk_ms[b]:9.2f} {chunk_ms['torch'] / chunk_ms[b]:8.2f}x "
                f"{query_ms[b]:9.2f} {query_ms['torch'] / query_ms[b]:8.2f}x"
            )

        vectors = {b: enc.encode(texts, progress=False) for b, enc in cached.items()}
        print(f"\nagreement over all {len(texts)} strategy-E chunks")
        print(f"{'pair':<20} {'max |Δ|':>10} {'min cos':>10} {'mean cos':>10}")
        for a, b in (("torch", "onnx"), ("onnx", "onnx-int8"), ("torch", "onnx-int8")):
            cos = (vectors[a] * vectors[b]).sum(axis=1)
            delta = np.abs(vectors[a] - vectors[b]).max()
            print(f"{a + ' / ' + b:<20} {delta:10.2e} {cos.min():10.6f} {cos.mean():10.6f}")

        ranks = {}
        for b, enc in cached.items():
            lab_b = setup(encoder=enc)
            ranks[b] = dense_ranks(lab_b.index("E"), lab_b.queries, enc)
        print(f"\nretrieval on strategy E, {len(queries)} queries (first-hit recall)")
        for b in BACKENDS:
            cells = "  ".join(f"R@{k} {hits_at(ranks[b], k).mean():.3f}" for k in CUTOFFS)
            print(f"{b:<10} {cells}")
        for a, b in (("onnx-int8", "onnx"), ("onnx", "torch")):
            tests = "  ".join(
                f"@{k}: {paired(hits_at(ranks[a], k), hits_at(ranks[b], k))}" for k in CUTOFFS
            )
            print(f"{a} vs {b}: {tests}")


if __name__ == "__main__":
    main()
