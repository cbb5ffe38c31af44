"""Wall time per call of each stage, measured the same way in every notebook.

Timings are shown, never checked: they depend on the machine and on what else it is
doing. The condition is the chapter's: single-threaded (:func:`single_threaded` pins torch
and the BLAS to one thread while a stage is timed); each input is timed ``repeats`` times
and the best run kept, after one warm-up call outside the measurement; tables report the
median and the 90th percentile over the inputs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from rag_lab import dense
from rag_lab.chunking import Chunk
from rag_lab.evaluation import chapter
from rag_lab.models.encoder import DEFAULT_BACKEND, Encoder, Timing
from rag_lab.questions import Query
from rag_lab.search import ChunkIndex, TextEncoder

_CHAPTER_MS = {
    "embed query": chapter.QUERY_EMBED_MS,
    "BM25": chapter.BM25_MS_PER_QUERY,
    "vector scan": chapter.VECTOR_SCAN_MS_PER_QUERY,
    "cross-encoder": chapter.CROSS_ENCODER_MS_PER_QUERY,
}
"""The chapter's figure for each stage, matched on the start of our stage names."""


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


CONDITION = "single-threaded, best of repeats per input, median over inputs"
"""How every timing of the lab is taken; notebooks print it beside their numbers."""


@contextmanager
def single_threaded() -> Iterator[None]:
    """One thread for the BLAS/OpenMP pools, and for torch if loaded, while inside.

    Torch is pinned only when something has imported it already: importing it here would
    cost seconds in runs that never use it. ONNX Runtime fixes its threads when a session
    is made, so the timed encoders below are made with ``threads=1``.
    """
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(before)


def time_per_call(stage: str, fn: Callable, inputs: Sequence, repeats: int = 3) -> Latency:
    """Time ``fn(x)`` for each input, single-threaded; the best of ``repeats`` runs per
    input, in ms."""
    with single_threaded():
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


def index_timing(
    chunks: Sequence[Chunk], sample: int = 128, backend: str = DEFAULT_BACKEND
) -> Timing:
    """Model time per chunk, single-threaded, cache bypassed, on an evenly spaced sample."""
    picks = np.linspace(0, len(chunks) - 1, min(sample, len(chunks))).round().astype(int)
    encoder = Encoder(backend=backend, cache=False, threads=1)
    encoder.encode(["warm-up"])  # model loading is not indexing
    with single_threaded():
        encoder.encode([chunks[i].text for i in picks], progress=False)
    return encoder.last


def stage_latencies(
    index: ChunkIndex, queries: Sequence[Query], encoder: TextEncoder
) -> list[Latency]:
    """Query embedding (uncached, on ``encoder``'s backend), the BM25 scorer and the vector
    scan, per query."""
    backend = getattr(encoder, "backend", DEFAULT_BACKEND)
    uncached = Encoder(backend=backend, cache=False, threads=1)
    vectors = encoder.encode([q.text for q in queries])
    return [
        time_per_call(
            f"embed query ({backend})", lambda q: uncached.encode([q.text]), queries, repeats=1
        ),
        time_per_call("BM25 (score + rank)", lambda q: index.bm25.rank(q.text), queries),
        time_per_call(
            "vector scan (distances + rank)",
            lambda i: dense.rank(vectors[i], index.vectors),
            range(len(queries)),
        ),
    ]


def chapter_reference(latencies: Sequence[Latency]) -> dict[str, float]:
    """The chapter's ms per query for each of our stages that it reports."""
    out = {}
    for lat in latencies:
        for prefix, ms in _CHAPTER_MS.items():
            if lat.stage.startswith(prefix):
                out[lat.stage] = ms
    return out


def cost_table(latencies: Sequence[Latency]):
    """Median and p90 ms per query per stage, the ratio to the cheapest, and the chapter's.

    ``× cheapest`` divides each median by the smallest median here; ``chapter ×`` does the
    same with the chapter's figures (over the stages it reports).
    """
    import pandas as pd

    reference = chapter_reference(latencies)
    cheapest = min(lat.median for lat in latencies)
    chapter_cheapest = min(reference.values(), default=float("nan"))
    rows = []
    for lat in latencies:
        ref = reference.get(lat.stage, float("nan"))
        rows.append(
            {
                "stage": lat.stage,
                "n": len(lat.ms),
                "median ms": round(lat.median, 3),
                "p90 ms": round(lat.p90, 3),
                "× cheapest": round(lat.median / cheapest, 1),
                "chapter ms": ref,
                "chapter ×": round(ref / chapter_cheapest, 1),
            }
        )
    return pd.DataFrame(rows).set_index("stage")


_FEATURES = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile")
"""The instruction sets that change how fast the encoder and the generator run."""


def machine() -> str:
    """The CPU beside every timing: its model, cores and the features that matter for speed
    (``AMD EPYC, 2 cores, avx2 avx512f avx512_vnni``). Speeds are compared only as ratios
    measured in one run, on one such machine."""
    import os
    import platform

    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() in ("flags", "Features"):
                    flags = set(value.split())
                    break
    except OSError:
        pass
    if not flags:
        present = "CPU features unknown (no /proc/cpuinfo)"
    else:
        present = " ".join(f for f in _FEATURES if f in flags) or "none of " + " ".join(_FEATURES)
    return f"machine: {model}, {os.cpu_count()} cores, {present}"
