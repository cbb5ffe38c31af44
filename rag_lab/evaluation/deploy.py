"""What a deploy runs, measured per query, and stamped: the record the regression gate pairs.

A :class:`Deployment` is the application's configuration (dense retrieval on one chunking,
the refusal gate at one cutoff) measured on every query of a question file: each query's
question, its first-hit rank, the chunk it now gets first and that chunk's distance; each
question's destroyed-or-not; each negative's nearest distance. Two reports hold two such
records, and :mod:`rag_lab.evaluation.regression` pairs them question by question.

:func:`stamps` says what a run was made of, so that a comparison can say what changed: the
sha256 of the corpus (its documents' ids and texts) and of the question file, the chunker
and its parameters, the encoder's fingerprint, the cutoff, rag_lab's version.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_lab import __version__, dense, gate
from rag_lab.chunking import OVERLAP, STRATEGIES
from rag_lab.documents import Document
from rag_lab.evaluation.chunking import destroyed_questions
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.retrieval import SYSTEM_KS
from rag_lab.evaluation.spans import Bench
from rag_lab.metrics import destroyed_spans, first_hit_ranks, relevant_chunks
from rag_lab.questions import Query, QuestionSet
from rag_lab.ranking import order
from rag_lab.search import TextEncoder

STAMP_FIELDS = (
    "corpus sha256",
    "questions sha256",
    "chunker",
    "encoder",
    "cutoff",
    "rag_lab",
)
"""The stamps every report carries, in the order a comparison lists what changed."""


@dataclass(frozen=True)
class Deployment:
    """Dense retrieval on ``strategy`` and the gate at ``cutoff``, per query."""

    strategy: str
    cutoff: float
    ks: tuple[int, ...]
    queries: tuple[str, ...]
    """Query ids (``question/phrasing``), in the question set's order."""
    clusters: tuple[str, ...]
    """The question each query asks: the unit a paired test counts."""
    ranks: tuple[int | None, ...]
    """Each query's first-hit rank (a chunk holding its needle whole), or None."""
    top: tuple[str, ...]
    """The chunk each query gets first (``doc#index``)."""
    nearest: tuple[float, ...]
    """Its cosine distance: the gate refuses the query when it is not under the cutoff."""
    questions: tuple[str, ...]
    destroyed: tuple[str, ...]
    """The questions none of whose passages a chunk of the strategy holds whole."""
    negatives: tuple[str, ...] = ()
    negative_nearest: tuple[float, ...] = ()
    asks: tuple[str, ...] = ()
    """Per query, a digest of what it asks (:func:`asks`): a question whose id stays while its
    phrasing or answer changes is no longer the baseline's question."""

    def to_json(self) -> dict[str, Any]:
        queries = [
            {"id": q, "question": c, "rank": r, "top chunk": t, "nearest": round(d, 6)}
            for q, c, r, t, d in zip(
                self.queries, self.clusters, self.ranks, self.top, self.nearest, strict=True
            )
        ]
        if self.asks:  # a report of Chroma's spans has none
            for row, digest in zip(queries, self.asks, strict=True):
                row["asks"] = digest
        return {
            "strategy": self.strategy,
            "cutoff": self.cutoff,
            "kept at most": gate.MAX_KEPT,
            "ks": list(self.ks),
            "queries": queries,
            "questions": list(self.questions),
            "destroyed": list(self.destroyed),
            "negatives": [
                {"id": n, "nearest": round(d, 6)}
                for n, d in zip(self.negatives, self.negative_nearest, strict=True)
            ],
        }


def measure(
    lab: Lab, strategy: str = "E", cutoff: float = gate.CUTOFF, ks: Sequence[int] = SYSTEM_KS
) -> Deployment:
    """The application's configuration on ``lab``: dense on ``strategy``, gate at ``cutoff``."""
    index = lab.index(strategy)
    queries = lab.queries
    distances = dense.cosine_distance_matrix(
        lab.encoder.encode([q.text for q in queries]), index.vectors
    )
    rankings = [order(row, descending=False) for row in distances]
    ranks = first_hit_ranks(rankings, relevant_chunks(index.chunks, queries))
    negs = lab.negatives
    nearest_neg: list[float] = []
    if negs:
        nd = dense.cosine_distance_matrix(
            lab.encoder.encode([n.query for n in negs]), index.vectors
        )
        nearest_neg = [float(x) for x in nd.min(axis=1)]
    chunks = index.chunks
    return Deployment(
        strategy,
        float(cutoff),
        tuple(ks),
        tuple(q.id for q in queries),
        tuple(q.question.id for q in queries),
        tuple(ranks),
        tuple(chunks[int(r[0])].id for r in rankings),
        tuple(float(row[int(r[0])]) for row, r in zip(distances, rankings, strict=True)),
        tuple(q.id for q in lab.qset.questions),
        tuple(q.id for q in destroyed_questions(chunks, lab.qset.questions)),
        tuple(n.id for n in negs),
        tuple(nearest_neg),
        asks(queries),
    )


def asks(queries: Sequence[Query]) -> tuple[str, ...]:
    """Per query, the first 16 hex digits of the sha256 of its text and its question's
    passages (document and needle): what the gate compares before pairing two runs' query."""
    return tuple(
        hashlib.sha256(
            json.dumps([q.text, [[p.doc, p.needle] for p in q.question.passages]]).encode()
        ).hexdigest()[:16]
        for q in queries
    )


def measure_spans(
    bench: Bench, strategy: str = "E", cutoff: float = gate.CUTOFF, ks: Sequence[int] = SYSTEM_KS
) -> Deployment:
    """:func:`measure` for questions answered by excerpts (Chroma's format): independent
    questions, one query each and its own cluster; a question is destroyed when one of its
    excerpts lies whole in no chunk; no negatives."""
    ids = bench.ids
    rankings = bench.dense_rankings(strategy)
    distances = dense.cosine_distance_matrix(
        bench.encoder.encode([q.text for q in bench.questions]), bench.index(strategy).vectors
    )
    chunks = bench.chunks_by[strategy]
    spans = bench.spans(strategy)
    return Deployment(
        strategy,
        float(cutoff),
        tuple(ks),
        tuple(ids),
        tuple(ids),
        tuple(bench.ranks(strategy)),
        tuple(chunks[int(r[0])].id for r in rankings),
        tuple(float(d[int(r[0])]) for d, r in zip(distances, rankings, strict=True)),
        tuple(ids),
        tuple(q.id for q in bench.questions if destroyed_spans(spans, q.spans)),
    )


# --- stamps --------------------------------------------------------------------------------


def corpus_sha256(docs: Sequence[Document]) -> str:
    """sha256 of the documents' ids and texts, in id order (what was chunked, not the files)."""
    h = hashlib.sha256()
    for d in sorted(docs, key=lambda d: d.id):
        for part in (d.id, d.text):
            data = part.encode("utf-8")
            h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def questions_sha256(path: str | os.PathLike | None, qset: QuestionSet | None = None) -> str:
    """sha256 of the question file's bytes; without a file, of the questions' canonical JSON."""
    if path is not None:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    items = [] if qset is None else [repr(q) for q in (*qset.questions, *qset.negatives)]
    return hashlib.sha256(json.dumps(items).encode("utf-8")).hexdigest()


def chunker(strategy: str) -> dict[str, Any]:
    """The chunker of ``strategy`` and its parameters."""
    s = STRATEGIES[strategy]
    return {
        "strategy": s.name,
        "cuts": s.cuts,
        "header": s.header,
        "overlap": OVERLAP if s.overlap else 0,
        "size": s.size,
    }


def stamps(
    docs: Sequence[Document],
    questions: str,
    strategy: str,
    encoder: TextEncoder,
    cutoff: float,
    **extra: Any,
) -> dict[str, Any]:
    """The stamps of a run (:data:`STAMP_FIELDS`), and ``extra`` (BM25's tokenizer)."""
    return {
        "corpus sha256": corpus_sha256(docs),
        "questions sha256": questions,
        "chunker": chunker(strategy),
        "encoder": encoder.fingerprint.key,
        "cutoff": float(cutoff),
        "rag_lab": __version__,
        **extra,
    }
