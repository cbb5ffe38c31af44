"""BM25 query latency: the sparse scorer against a per-document Python loop.

Run as ``python benchmarks/bench_bm25.py``. The corpus is the lab's corpus (``load_corpus()``) cut
every 512 characters when it is present, else 1,000 synthetic chunk-sized texts. The
baseline precomputes everything a query does not depend on (term counts per text,
lengths, idf), so the comparison measures the scoring loop alone. Timings are the best
of a few passes over the same queries, in milliseconds per query.
"""

from __future__ import annotations

import math
import time

import numpy as np

from rag_lab.bm25 import BM25, LoopBM25, tokenize
from rag_lab.sources.d2l import CorpusError, load_corpus

N_QUERIES = 200
PASSES = 3


def corpus(rng: np.random.Generator) -> tuple[str, list[str]]:
    try:
        docs = load_corpus()
    except CorpusError as err:
        print(f"no corpus ({err}); using synthetic texts")
    else:
        texts = [d.text[i : i + 512] for d in docs for i in range(0, len(d.text), 512)]
        return f"{len(docs)} corpus documents, 512-character slices", texts
    vocabulary = np.array([f"w{i}" for i in range(5000)])
    zipf = 1 / np.arange(1, len(vocabulary) + 1)
    texts = [" ".join(rng.choice(vocabulary, size=80, p=zipf / zipf.sum())) for _ in range(1000)]
    return "synthetic, 80 Zipf-distributed words each", texts


def queries(texts: list[str], rng: np.random.Generator) -> list[str]:
    """Windows of 3-8 consecutive tokens from random texts, like keyword questions."""
    out = []
    for text in rng.choice(texts, size=N_QUERIES):
        tokens = tokenize(text)
        start = rng.integers(max(1, len(tokens) - 3))
        out.append(" ".join(tokens[start : start + rng.integers(3, 9)]))
    return out


def ms_per_query(score, qs: list[str]) -> float:
    best = math.inf
    for _ in range(PASSES):
        start = time.perf_counter()
        for q in qs:
            score(q)
        best = min(best, time.perf_counter() - start)
    return 1000 * best / len(qs)


def main() -> None:
    rng = np.random.default_rng(0)
    name, texts = corpus(rng)
    qs = queries(texts, rng)
    sparse_model, loop_model = BM25(texts), LoopBM25(texts)
    max_diff = max(float(np.abs(sparse_model.scores(q) - loop_model.scores(q)).max()) for q in qs)
    sparse_ms = ms_per_query(sparse_model.scores, qs)
    loop_ms = ms_per_query(loop_model.scores, qs)
    print(f"corpus: {len(texts)} texts ({name}); {len(qs)} queries; best of {PASSES} passes")
    print(f"max |sparse - loop| score difference: {max_diff:.2e}")
    print(f"sparse matrix : {sparse_ms:8.3f} ms/query")
    print(f"python loop   : {loop_ms:8.3f} ms/query")
    print(f"speed-up      : {loop_ms / sparse_ms:8.1f}x")


if __name__ == "__main__":
    main()
