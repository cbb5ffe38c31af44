"""Wall time per call of each stage (embedding, BM25, the vector scan, each second stage),
measured the same way in every notebook, and the machine it ran on.

Timings are shown, never checked: they depend on the machine and on what else it is doing.
"""

from __future__ import annotations

import os
import platform
import re
import sys
import time
import timeit
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab import dense
from rag_lab.chunking import Chunk
from rag_lab.evaluation import chapter
from rag_lab.late_interaction import maxsim
from rag_lab.models.cross_encoder import Reranker
from rag_lab.models.encoder import DEFAULT_BACKEND, Encoder, Timing
from rag_lab.models.token_vectors import LateInteraction
from rag_lab.questions import Query
from rag_lab.search import ChunkIndex, TextEncoder

CONDITION = "single-threaded, best of repeats per input, median over inputs"


@dataclass(frozen=True)
class Latency:
    """Per-call wall time of one stage, in milliseconds, over a list of inputs."""

    stage: str
    ms: np.ndarray

    @property
    def median(self) -> float:
        return float(np.median(self.ms))


@contextmanager
def single_threaded() -> Iterator[None]:
    """One thread for the BLAS/OpenMP pools, and for torch if something imported it (importing
    it costs seconds); ONNX Runtime fixes its threads per session (``Encoder(threads=1)``)."""
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch else None
    if torch:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        if torch:
            torch.set_num_threads(before)


def time_per_call(stage: str, fn: Callable, inputs: Sequence, repeats: int = 3) -> Latency:
    """``fn(x)`` per input, single-threaded, after one warm-up call: the best of ``repeats``."""
    with single_threaded():
        fn(inputs[0])
        best = [min(timeit.repeat(partial(fn, x), repeat=repeats, number=1)) for x in inputs]
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
    """Per query: embedding it (uncached), the BM25 scorer and the vector scan."""
    backend = getattr(encoder, "backend", DEFAULT_BACKEND)
    uncached = Encoder(backend=backend, cache=False, threads=1)
    vectors = encoder.encode([q.text for q in queries])
    return [
        time_per_call(f"embed query ({backend})", lambda q: uncached.encode([q.text]), queries, 1),
        time_per_call("BM25 (score + rank)", lambda q: index.bm25.rank(q.text), queries),
        time_per_call(
            "vector scan (distances + rank)",
            lambda i: dense.rank(vectors[i], index.vectors),
            range(len(queries)),
        ),
    ]


def cross_encoder_latency(
    reranker: Reranker, queries: Sequence[Query], candidates: Sequence[Sequence[str]]
) -> Latency:
    """Per query: one :meth:`Reranker.score` call on its candidates, one run each."""
    stage = f"cross-encoder × {max(map(len, candidates))} pairs, {reranker.label}"
    pairs = list(zip(queries, candidates, strict=True))
    return time_per_call(stage, lambda p: reranker.score(p[0].text, p[1]), pairs, repeats=1)


def late_interaction_latency(
    li: LateInteraction, queries: Sequence[Query], candidates: Sequence[Sequence[str]]
) -> Latency:
    """Per query: its token vectors (cache bypassed), MaxSim against pre-read candidates."""
    docs = [li.tokens(texts) for texts in candidates]

    def run(i: int) -> list[float]:
        (query_tokens,) = li._compute([queries[i].text])
        return [maxsim(query_tokens, d) for d in docs[i]]

    stage = f"late interaction (query tokens + MaxSim) × {max(map(len, candidates))}"
    return time_per_call(stage, run, range(len(queries)))


def llm_latency(scorer, query: Query, passages: Sequence[str]) -> Latency:
    """One query's pairs through the generator, cache bypassed, after one pair to load it."""
    scorer.score(query.text, passages[:1])
    start = time.perf_counter()
    scorer.score(query.text, passages)
    ms = 1000 * (time.perf_counter() - start)
    return Latency(f"LLM reranker (Yes/No log-odds) × {len(passages)}", np.array([ms]))


def cost_table(latencies: Sequence[Latency]) -> pd.DataFrame:
    """Median and p90 ms per stage; ``× cheapest`` and ``chapter ×``: each median over the
    smallest one, ours and the chapter's (its figure matched on the start of the stage name)."""
    reported = {
        "embed query": chapter.QUERY_EMBED_MS,
        "BM25": chapter.BM25_MS_PER_QUERY,
        "vector scan": chapter.VECTOR_SCAN_MS_PER_QUERY,
        "cross-encoder": chapter.CROSS_ENCODER_MS_PER_QUERY,
    }
    frame = pd.DataFrame(
        {
            "n": [len(lat.ms) for lat in latencies],
            "median ms": [lat.median for lat in latencies],
            "p90 ms": [float(np.percentile(lat.ms, 90)) for lat in latencies],
            "chapter ms": [
                next((ms for p, ms in reported.items() if lat.stage.startswith(p)), np.nan)
                for lat in latencies
            ],
        },
        index=pd.Index([lat.stage for lat in latencies], name="stage"),
    )
    frame.insert(3, "× cheapest", (frame["median ms"] / frame["median ms"].min()).round(1))
    frame["chapter ×"] = (frame["chapter ms"] / frame["chapter ms"].min()).round(1)
    return frame.round({"median ms": 3, "p90 ms": 3})


def machine() -> str:
    """The CPU beside every timing: its model, cores and the instruction sets that change how
    fast the encoder and the generator run (read from ``/proc/cpuinfo``, on Linux)."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    model = re.search(r"^model name\s*:\s*(.+)$", info, re.M)
    flags = re.search(r"^(?:flags|Features)\s*:\s*(.+)$", info, re.M)
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile")
    features = "CPU features unknown"
    if flags:
        found = [f for f in wanted if f in flags.group(1).split()]
        features = " ".join(found or ["none of", *wanted])
    model = model.group(1) if model else platform.machine()
    return f"machine: {model}, {os.cpu_count()} cores, {features}"
