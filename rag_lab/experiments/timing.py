"""Wall time per call of each stage, measured the same way in every notebook.

Timings are shown, never checked: they depend on the machine and on what else it is
doing. Each input is timed ``repeats`` times and the best run kept, after one warm-up call
outside the measurement.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rag_lab import dense
from rag_lab.chunking import Chunk
from rag_lab.models.encoder import Encoder, Timing
from rag_lab.questions import Query
from rag_lab.search import ChunkIndex, TextEncoder


@dataclass(frozen=True)
class Latency:
    """Per-call wall time of one stage, in milliseconds, over a list of inputs."""

    stage: str
    ms: np.ndarray

    @property
    def median(self) -> float:
        return float(np.median(self.ms))

    @property
    def p90(self) -> float:
        return float(np.percentile(self.ms, 90))


def time_per_call(stage: str, fn: Callable, inputs: Sequence, repeats: int = 3) -> Latency:
    """Time ``fn(x)`` for each input; the best of ``repeats`` runs per input, in ms."""
    fn(inputs[0])  # warm caches and lazy initialisation outside the measurement
    best = []
    for x in inputs:
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn(x)
            runs.append(time.perf_counter() - start)
        best.append(min(runs))
    return Latency(stage, 1000 * np.array(best))


def index_timing(chunks: Sequence[Chunk], sample: int = 128) -> Timing:
    """Model time per chunk, cache bypassed, on an evenly spaced sample of ``chunks``."""
    picks = np.linspace(0, len(chunks) - 1, min(sample, len(chunks))).round().astype(int)
    encoder = Encoder(cache=False)
    encoder.encode(["warm-up"])  # model loading is not indexing
    encoder.encode([chunks[i].text for i in picks], progress=False)
    return encoder.last


def stage_latencies(
    index: ChunkIndex, queries: Sequence[Query], encoder: TextEncoder
) -> list[Latency]:
    """Query embedding (uncached), the BM25 scorer and the vector scan, per query."""
    uncached = Encoder(cache=False)
    vectors = encoder.encode([q.text for q in queries])
    return [
        time_per_call("embed query", lambda q: uncached.encode([q.text]), queries, repeats=1),
        time_per_call("BM25 (score + rank)", lambda q: index.bm25.rank(q.text), queries),
        time_per_call(
            "vector scan (distances + rank)",
            lambda i: dense.rank(vectors[i], index.vectors),
            range(len(queries)),
        ),
    ]


def latency_table(latencies: Sequence[Latency], reference: dict[str, float]):
    """Median and p90 per stage beside the chapter's figure for the same stage, in ms."""
    import pandas as pd

    rows = [
        {
            "stage": lat.stage,
            "median ms": round(lat.median, 3),
            "p90 ms": round(lat.p90, 3),
            "chapter ms": reference.get(lat.stage, float("nan")),
        }
        for lat in latencies
    ]
    return pd.DataFrame(rows).set_index("stage")
