"""Cross-encoder latency on 25 pairs: batched (two batch sizes) against one pair per call.

Run as ``python benchmarks/bench_rerank.py``. The model is the one at
``$RAG_LAB_RERANKER`` when that is set, else the stand-in (the packaged MiniLM-L6 with an
untrained head: the real reranker's architecture, so its cost, and meaningless scores).
The pairs are real: each query with the chunk texts of its hybrid top 25 on strategy E.
Batched means one ``predict`` call per query: all 25 pairs in one padded batch, or in
length-sorted batches of ``rerank.BATCH_SIZE`` (the lab's default). Timings are the best of
a few passes, in milliseconds per query; the chapter reports 569 ms per query for the same
model on 25 pairs.
"""

from __future__ import annotations

import math
import os
import time

from rag_lab import paths
from rag_lab.chunking import chunk_corpus
from rag_lab.evaluation import chapter
from rag_lab.evaluation.runs import rank_all
from rag_lab.models import cross_encoder as rerank
from rag_lab.models.encoder import Encoder
from rag_lab.questions import CHAPTER_DESIGN, load_questions
from rag_lab.rerank import TOP_N
from rag_lab.search import ChunkIndex
from rag_lab.sources.d2l import load_corpus

N_QUERIES = 8
PASSES = 2


def candidates() -> list[tuple[str, list[str]]]:
    """(query, its hybrid top-25 chunk texts) for the first queries of the question file."""
    docs = load_corpus()
    queries = load_questions(paths.QUESTIONS, docs, CHAPTER_DESIGN).queries()[:N_QUERIES]
    encoder = Encoder()
    index = ChunkIndex.build(chunk_corpus(docs, "E"), encoder)
    rankings = rank_all(index, queries, encoder).by_system["hybrid"]
    return [
        (q.text, [index.chunks[i].text for i in r[:TOP_N]])
        for q, r in zip(queries, rankings, strict=True)
    ]


def ms_per_query(score, work: list[tuple[str, list[str]]]) -> float:
    best = math.inf
    for _ in range(PASSES):
        start = time.perf_counter()
        for query, texts in work:
            score(query, texts)
        best = min(best, time.perf_counter() - start)
    return 1000 * best / len(work)


def main() -> None:
    reranker = rerank.load_reranker() if os.environ.get(rerank.ENV_VAR) else rerank.load_standin()
    work = candidates()
    reranker.score(*work[0])  # warm-up: lazy initialisation is not scoring

    def one_by_one(query: str, texts: list[str]) -> list:
        return [reranker.score(query, [t]) for t in texts]

    variants = {
        f"one batch of {TOP_N}": lambda q, texts: reranker.score(q, texts, TOP_N),
        f"batches of {rerank.BATCH_SIZE}": reranker.score,
        "one pair per call": one_by_one,
    }
    ms = {name: ms_per_query(score, work) for name, score in variants.items()}
    single = ms["one pair per call"]
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    print(f"model: {reranker.label} ({reranker.source})")
    print(
        f"{len(work)} queries × {TOP_N} pairs; best of {PASSES} passes; OMP_NUM_THREADS={threads}"
    )
    for name, value in ms.items():
        print(f"{name:<20}: {value:8.1f} ms/query  (one by one / this: {single / value:.2f}x)")
    print(f"{'chapter':<20}: {chapter.CROSS_ENCODER_MS_PER_QUERY:8.1f} ms/query")


if __name__ == "__main__":
    main()
