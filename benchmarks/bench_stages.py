"""Every stage of the chapter's pipeline, single-threaded, beside the chapter's figure.

Run as ``python benchmarks/bench_stages.py`` (``make bench`` runs it first). One table, one
row per way of running a stage; each stage has a baseline measured in the same run, and
``speed-up`` divides the baseline's time by the row's:

============================  ====================================  =====================
stage                         rows                                  baseline
============================  ====================================  =====================
index (ms per chunk)          torch, onnx, onnx-int8                torch
embed query (ms per query)    torch, onnx, onnx-int8                torch
BM25 (ms per query)           per-document loop, sparse product     the loop (the chapter's)
vector scan (ms per query)    per-chunk loop, one matrix product    the loop
late interaction (ms/query)   MaxSim over the top 25                cross-encoder, torch
cross-encoder, 25 pairs       torch, onnx, onnx-int8 (stand-in)     torch
============================  ====================================  =====================

The condition is the chapter's: one thread everywhere (``OMP_NUM_THREADS=1`` before any
import, ``torch.set_num_threads(1)``, ONNX Runtime sessions with one intra-op thread). Each
row is the median of :data:`REPEATS` passes over the same inputs, the variants of a stage
interleaved pass by pass so that a busy moment hurts them alike. Inputs are the lab's: a
sample of strategy-E chunks, its 64 queries, and each query's hybrid top 25.

``chapter ÷ here`` compares with the chapter's machine, not with a baseline: the first row
(torch indexing, the chapter's own setup) says how much slower this CPU is than the
chapter's, and the others should be read against it. The cross-encoder is the stand-in
(the real weights are on no reachable registry; ``$RAG_LAB_RERANKER`` points at them): the
same architecture, so the same cost. Its ONNX graphs are exported into a temporary folder.
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before numpy, torch and onnxruntime start their pools

import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag_lab import dense
from rag_lab.bm25 import LoopBM25
from rag_lab.evaluation import chapter
from rag_lab.evaluation.runs import rank_all
from rag_lab.experiments.lab import setup
from rag_lab.late_interaction import maxsim
from rag_lab.models import cross_encoder
from rag_lab.models.encoder import BACKENDS, Encoder
from rag_lab.models.token_vectors import LateInteraction
from rag_lab.rerank import TOP_N, top_texts

REPEATS = 5
INDEX_SAMPLE = 128
RERANK_QUERIES = 8
"""Queries the cross-encoders are timed on: each torch call takes about a second here."""


def median_ms(variants: dict[str, Callable[[object], object]], inputs: Sequence, repeats: int):
    """Median over ``repeats`` passes of the mean ms per input, for each variant."""
    for fn in variants.values():
        fn(inputs[0])  # warm-up: lazy initialisation and first allocations are not the stage
    passes: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            start = time.perf_counter()
            for x in inputs:
                fn(x)
            passes[name].append(1000 * (time.perf_counter() - start) / len(inputs))
    return {name: statistics.median(ms) for name, ms in passes.items()}


def loop_scan(query: np.ndarray, vectors: np.ndarray) -> list[int]:
    """The baseline scan: one dot product per chunk in Python, then a sort."""
    scores = [(-float(np.dot(query, v)), i) for i, v in enumerate(vectors)]
    return [i for _, i in sorted(scores)]


class OnnxCrossEncoder:
    """The stand-in cross-encoder exported to ONNX (fp32 or int8), scoring pairs in
    length-sorted batches like ``sentence_transformers.CrossEncoder``."""

    def __init__(self, folder: Path, graph: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=512)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros(len(texts))
        for start in range(0, len(order), cross_encoder.BATCH_SIZE):
            part = order[start : start + cross_encoder.BATCH_SIZE]
            enc = self.tokenizer.encode_batch([(query, texts[i]) for i in part])
            feed = {
                name: np.array([getattr(e, attr) for e in enc], dtype=np.int64)
                for name, attr in (
                    ("input_ids", "ids"),
                    ("attention_mask", "attention_mask"),
                    ("token_type_ids", "type_ids"),
                )
            }
            out[part] = self.session.run(None, feed)[0].reshape(-1)
        return out


def export_cross_encoder(folder: Path, dest: Path) -> dict[str, Path]:
    """The stand-in's BertForSequenceClassification as ONNX fp32 and int8 graphs in ``dest``."""
    import warnings

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import BertForSequenceClassification

    model = BertForSequenceClassification.from_pretrained(
        str(folder), attn_implementation="eager"
    ).eval()
    ids = torch.full((2, 8), 1000, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    names = ["input_ids", "attention_mask", "token_type_ids"]
    fp32, int8 = dest / "cross.onnx", dest / "cross-int8.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (ids, mask, torch.zeros_like(ids)),
            str(fp32),
            dynamo=False,
            input_names=names,
            output_names=["logits"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names},
            opset_version=17,
        )
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    return {"onnx": fp32, "onnx-int8": int8}


def main() -> None:
    import logging

    import torch

    torch.set_num_threads(1)
    logging.getLogger().setLevel(logging.ERROR)  # the quantiser's pre-processing advice
    lab = setup()
    index = lab.index("E")
    chunks = index.chunks
    picks = np.linspace(0, len(chunks) - 1, INDEX_SAMPLE).round().astype(int)
    sample = [chunks[i].text for i in picks]
    queries = [q.text for q in lab.queries]
    encoders = {b: Encoder(backend=b, cache=False, threads=1) for b in BACKENDS}
    rows: list[tuple[str, str, float, str, float, float | None]] = []

    def add(stage: str, times: dict[str, float], baseline: str, ref: float | None) -> None:
        for name, ms in times.items():
            rows.append((stage, name, ms, baseline, times[baseline] / ms, ref))

    index_ms = median_ms(
        {b: (lambda texts, e=e: e.encode(texts, progress=False)) for b, e in encoders.items()},
        [sample],
        REPEATS,
    )
    add(
        "index (ms per chunk)",
        {b: ms / len(sample) for b, ms in index_ms.items()},
        "torch",
        chapter.INDEX_MS_PER_CHUNK,
    )
    add(
        "embed query",
        median_ms({b: (lambda q, e=e: e.encode([q])) for b, e in encoders.items()}, queries, 3),
        "torch",
        chapter.QUERY_EMBED_MS,
    )
    loop = LoopBM25([c.text for c in chunks])
    add(
        "BM25 (score + rank)",
        median_ms(
            {"per-document loop": loop.rank, "sparse product": index.bm25.rank}, queries, REPEATS
        ),
        "per-document loop",
        chapter.BM25_MS_PER_QUERY,
    )
    qvecs = lab.encoder.encode(queries)
    add(
        "vector scan (distances + rank)",
        median_ms(
            {
                "per-chunk loop": lambda i: loop_scan(qvecs[i], index.vectors),
                "matrix product": lambda i: dense.rank(qvecs[i], index.vectors),
            },
            range(len(queries)),
            REPEATS,
        ),
        "per-chunk loop",
        chapter.VECTOR_SCAN_MS_PER_QUERY,
    )

    hybrid = rank_all(index, lab.queries, lab.encoder).by_system["hybrid"]
    candidates = top_texts(hybrid, [c.text for c in chunks], TOP_N)[:RERANK_QUERIES]
    work = list(zip(queries[:RERANK_QUERIES], candidates, strict=True))
    late = LateInteraction()
    docs = [late.tokens(texts) for _, texts in work]  # an index holds these

    def late_interaction(i: int) -> list[float]:
        (query_tokens,) = late._compute([work[i][0]])
        return [maxsim(query_tokens, d) for d in docs[i]]

    standin = cross_encoder.load_standin()
    with tempfile.TemporaryDirectory() as tmp:
        graphs = export_cross_encoder(Path(standin.source), Path(tmp))
        onnx = {b: OnnxCrossEncoder(Path(standin.source), g) for b, g in graphs.items()}
        reranking = median_ms(
            {
                "torch": lambda i: standin.score(*work[i]),
                **{b: (lambda i, m=m: m.score(*work[i])) for b, m in onnx.items()},
                "late interaction": late_interaction,
            },
            range(len(work)),
            3,
        )
    late_ms = reranking.pop("late interaction")
    add(
        f"cross-encoder × {TOP_N} pairs (stand-in)",
        reranking,
        "torch",
        chapter.CROSS_ENCODER_MS_PER_QUERY,
    )
    rows.append(
        (
            f"late interaction × {TOP_N}",
            "MaxSim, torch query tokens",
            late_ms,
            "cross-encoder, torch",
            reranking["torch"] / late_ms,
            None,
        )
    )
    print_table(rows, len(sample), len(queries), len(work))


def print_table(rows, n_chunks: int, n_queries: int, n_rerank: int) -> None:
    print(
        f"single-threaded; median of passes; {n_chunks} strategy-E chunks, {n_queries} "
        f"queries ({n_rerank} for the cross-encoder and late interaction)"
    )
    head = ("stage", "variant", "ms", "speed-up", "baseline", "chapter ms", "chapter ÷ here")
    widths = ("<36", "<28", ">9", ">9", "<22", ">10", ">14")
    print(" ".join(f"{h:{w}}" for h, w in zip(head, widths, strict=True)))
    for stage, name, ms, baseline, speedup, ref in rows:
        chap = f"{ref:10.2f} {ref / ms:14.2f}" if ref is not None else f"{'–':>10} {'–':>14}"
        print(f"{stage:<36} {name:<28} {ms:9.3f} {speedup:8.2f}x {baseline:<22} {chap}")


if __name__ == "__main__":
    main()
