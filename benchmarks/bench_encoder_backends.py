"""Encoder backends: do ONNX Runtime fp32 and int8 give the torch vectors and retrieval?

Run as ``python benchmarks/bench_encoder_backends.py`` (their speed is in
``bench_stages.py``). Prints two tables:

1. agreement over the whole strategy-E corpus: max |Δ| per component, min and mean cosine;
2. retrieval: Recall@4/@20 of the 64 queries on strategy E, and the paired exact sign test.

The ONNX graphs are exported into ``$RAG_LAB_CACHE/onnx`` on first use (a few seconds, once);
vectors go to a temporary cache, so nothing the lab reports is touched.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from rag_lab.evaluation.runs import dense_ranks
from rag_lab.experiments.lab import setup
from rag_lab.metrics import hits_at
from rag_lab.models.encoder import BACKENDS, Encoder
from rag_lab.stats import paired

CUTOFFS = (4, 20)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cached = {b: Encoder(backend=b, cache_root=Path(tmp) / b) for b in BACKENDS}
        lab = setup(encoder=cached["torch"])
        chunks = lab.chunks_by["E"]
        texts = [c.text for c in chunks]
        queries = [q.text for q in lab.queries]

        vectors = {b: enc.encode(texts, progress=False) for b, enc in cached.items()}
        print(f"agreement over all {len(texts)} strategy-E chunks")
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
