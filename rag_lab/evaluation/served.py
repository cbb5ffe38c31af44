"""A built index, measured: the question file asked of it as ``rag-lab ask`` asks it.

``rag-lab evaluate --index PATH`` or ``--store URI`` does not chunk or embed the corpus: it
opens the index a deploy built (SQLite, scanned exactly, or Milvus, searched by its own
approximate index) and asks it every query of the question file through the retriever
``ask`` uses, to :data:`DEPTH` chunks. A query's first-hit rank is the position of the first
returned chunk that holds one of its question's passages whole
(:func:`rag_lab.metrics.relevant_chunks`, the lab's one definition of relevance); a question
is destroyed when no stored chunk of its passages' documents holds any of them whole. The
result is a :class:`Served` record (Recall@k and MRR with intervals by question) and the
:class:`~rag_lab.evaluation.deploy.Deployment` record the regression gate pairs, so two
deploys of an index (an exact scan and an engine's approximate search, two encoders, two
chunkers) are compared question by question.

Ranks deeper than :data:`DEPTH` are not seen: such a query counts as no hit, and its
reciprocal rank as 0 (it is at most ``1/(DEPTH + 1)`` in a full ranking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rag_lab import dense, stats
from rag_lab.evaluation.deploy import Deployment
from rag_lab.evaluation.deploy import asks as deploy_asks
from rag_lab.evaluation.retrieval import SYSTEM_KS
from rag_lab.evaluation.twins import Calibration, Twins, calibrate
from rag_lab.metrics import hits_at, relevant_chunks
from rag_lab.questions import Question, QuestionSet

DEPTH = 100
"""How many chunks each query is asked for: ranks beyond it count as no hit."""


@dataclass(frozen=True)
class Served:
    """The question file's queries asked of one built index, by the retriever ``ask`` uses."""

    index: str
    """Where the index is (its path or URI)."""
    engine: str
    """The storage (``SQLite``, ``Milvus Lite``, ``Milvus``)."""
    search: str
    """How it is searched: an exact scan, or the engine's index and its parameters."""
    depth: int
    documents: int
    """Documents indexed (searched)."""
    chunks: int
    """Chunks searched."""
    failed: tuple[str, ...]
    """Documents the index holds as failed (not searched)."""
    unindexed: tuple[str, ...]
    """Questions whose document is not indexed: their queries cannot be hit."""
    ks: tuple[int, ...]
    queries: tuple[str, ...]
    clusters: tuple[str, ...]
    """The question each query asks: the unit of every interval."""
    ranks: tuple[int | None, ...]

    def view(self, level: float = 0.95) -> pd.DataFrame:
        """:meth:`metrics` as the report shows them (three decimals)."""
        return self.metrics(level).round(3)

    def metrics(self, level: float = 0.95) -> pd.DataFrame:
        """Recall@k with its clustered Wilson interval and MRR with its bootstrap interval
        over questions, one row per metric."""
        rows = {}
        for k in self.ks:
            hits = hits_at(list(self.ranks), k)
            lo, hi = stats.clustered_wilson(hits, self.clusters, level)
            rows[f"Recall@{k}"] = (float(hits.mean()), lo, hi)
        rr = np.array([0.0 if r is None else 1.0 / r for r in self.ranks])
        per_question = stats.per_question(rr, self.clusters)
        rows["MRR"] = (float(rr.mean()), *stats.bootstrap_mean(per_question, level=level))
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=["value", "lo", "hi"])
        frame.index.name = "metric"
        return frame

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "engine": self.engine,
            "search": self.search,
            "depth": self.depth,
            "documents": self.documents,
            "chunks": self.chunks,
            "failed": list(self.failed),
            "unindexed": list(self.unindexed),
            "metrics": {
                name: {"value": v, "lo": lo, "hi": hi}
                for name, (v, lo, hi) in self.metrics().iterrows()
            },
        }


def first_hits(retriever: Any, text: str, k: int) -> tuple[list, float]:
    """The top ``k`` hits of ``text`` and the distance the gate compares with the cutoff: the
    dense nearest (a ranked retriever's own, :func:`rag_lab.pipeline.answer`'s rule), which
    for dense is the first hit's."""
    ranked = getattr(retriever, "ranked", None)
    if ranked is not None:
        return ranked(text, k)
    hits = retriever.nearest(text, k)
    return hits, float(hits[0].distance)


def measure(
    retriever: Any,
    qset: QuestionSet,
    *,
    index: str,
    failed: Sequence[str],
    strategy: str,
    cutoff: float,
    ks: Sequence[int] = SYSTEM_KS,
    depth: int = DEPTH,
) -> tuple[Served, Deployment]:
    """Every query of ``qset`` asked of ``retriever`` (a
    :class:`~rag_lab.app.index.StoredRetriever` or a
    :class:`~rag_lab.app.deployed.RankedRetriever`: its store open) to ``depth`` chunks."""
    store = retriever.store
    indexed = set(retriever.titles) - set(failed)
    queries = qset.queries()
    ranks: list[int | None] = []
    top: list[str] = []
    nearest: list[float] = []
    for q in queries:
        hits, closest = first_hits(retriever, q.text, depth)
        (held,) = relevant_chunks([h.chunk for h in hits], [q])
        ranks.append(min(held) + 1 if held else None)
        top.append(hits[0].chunk.id)  # the retriever refuses an empty index
        nearest.append(closest)
    asked = sorted({p.doc for q in qset.questions for p in q.passages} & indexed)
    stored, _ = store.chunks(asked) if asked else ([], None)
    by_doc: dict[str, list] = {}
    for c in stored:
        by_doc.setdefault(c.doc_id, []).append(c)
    destroyed = tuple(
        q.id
        for q in qset.questions
        if not relevant_chunks([c for d in _docs(q) for c in by_doc.get(d, [])], [q])[0]
    )
    negatives = [first_hits(retriever, n.query, 1)[1] for n in qset.negatives]
    served = Served(
        index=index,
        engine=store.engine,
        search=retriever.search.label,
        depth=depth,
        documents=len(indexed),
        chunks=retriever.size,
        failed=tuple(sorted(failed)),
        unindexed=tuple(q.id for q in qset.questions if not set(_docs(q)) & indexed),
        ks=tuple(ks),
        queries=tuple(q.id for q in queries),
        clusters=tuple(q.question.id for q in queries),
        ranks=tuple(ranks),
    )
    deployed = Deployment(
        strategy,
        float(cutoff),
        tuple(ks),
        served.queries,
        served.clusters,
        served.ranks,
        tuple(top),
        tuple(nearest),
        tuple(q.id for q in qset.questions),
        destroyed,
        tuple(n.id for n in qset.negatives),
        tuple(negatives),
        deploy_asks(queries),
    )
    return served, deployed


def _docs(q: Question) -> list[str]:
    """The documents of ``q``'s passages, each once."""
    return list(dict.fromkeys(p.doc for p in q.passages))


def calibration(retriever: Any, qset: QuestionSet, strategy: str) -> Calibration:
    """The cutoff calibrated on unanswerable twins (:mod:`rag_lab.evaluation.twins`, as
    ``evaluate`` calibrates it on a corpus) over the chunks the index serves, every vector
    scanned exactly: each query's twin is its nearest chunk once the chunks holding its needle
    are removed. ``retriever``'s store holds the chunks; ``strategy`` is theirs."""
    store, encoder = retriever.store, retriever.encoder
    chunks, vectors = store.chunks(sorted(retriever.titles))
    queries = qset.queries()
    answerable = dense.cosine_distance_matrix(encoder.encode([q.text for q in queries]), vectors)
    twins = Twins.of(
        answerable,
        relevant_chunks(chunks, queries),
        [q.id for q in queries],
        [q.question.id for q in queries],
    )
    return calibrate(twins, strategy)
