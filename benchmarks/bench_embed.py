"""Embedding cost: batched against one text at a time, and the cache against the model.

Run as ``python benchmarks/bench_embed.py``. A fixed, evenly spaced sample of strategy-E
chunks is embedded three ways with the packaged all-MiniLM-L6-v2 on the CPU: one text per
call (the baseline, as a naive indexer would), in length-sorted batches of 32 (what the lab
does), and again from a warm on-disk cache. Prints milliseconds per chunk and the ratios.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from rag_lab.chunking import chunk_corpus
from rag_lab.models.encoder import Encoder
from rag_lab.sources.d2l import load_corpus

SAMPLE = 96


def main() -> None:
    chunks = chunk_corpus(load_corpus(), "E")
    picks = np.linspace(0, len(chunks) - 1, SAMPLE).round().astype(int)
    texts = [chunks[i].text for i in picks]

    one_by_one = Encoder(cache=False, batch_size=1)
    one_by_one.encode(["warm-up"])
    start = time.perf_counter()
    for text in texts:
        one_by_one.encode([text])
    single_ms = 1000 * (time.perf_counter() - start) / SAMPLE

    with tempfile.TemporaryDirectory() as tmp:
        batched = Encoder(cache_root=Path(tmp))
        batched.encode(["warm-up"])
        batched.encode(texts, progress=False)
        batch_ms = batched.last.ms_per_text
        start = time.perf_counter()
        batched.encode(texts)
        cached_ms = 1000 * (time.perf_counter() - start) / SAMPLE

    print(f"{SAMPLE} chunks of strategy E, all-MiniLM-L6-v2 on the CPU")
    print(f"one text per call (baseline): {single_ms:8.2f} ms/chunk")
    print(
        f"batches of {batched.batch_size}, length-sorted:  {batch_ms:8.2f} ms/chunk "
        f"({single_ms / batch_ms:.1f}x faster)"
    )
    print(
        f"warm cache:                   {cached_ms:8.3f} ms/chunk "
        f"({single_ms / cached_ms:.0f}x faster)"
    )


if __name__ == "__main__":
    main()
