"""Chroma's own table on Chroma's own benchmark: their chunkers, their metric, their k.

The lab's span metrics and retrieval (:func:`rag_lab.metrics.span_scores`, dense retrieval
over all five corpora at once, as their code's single collection does) are checked end to
end against numbers nobody here wrote: the rows of Chroma's report for all-MiniLM-L6-v2
with its two baseline chunkers (:mod:`rag_lab.sources.chroma.chunkers`). Each row is run at
its size and overlap in cl100k tokens, every question retrieves its top :data:`K` chunks,
and the mean of Chroma's recall over the 472 questions carries a 95 % interval (Student's t
over the questions, one query each).

The published values are :data:`PUBLISHED` as the lab's issue 25 quotes them from the report
(research.trychroma.com/evaluating-chunking); no machine here reaches the report, so they
have not been re-read against it, and :data:`K` is the default of their evaluation code's
``run(retrieve=5)``, not a number read from the report's rows. A row that disagrees is a
finding to explain, never a number to tune.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_lab import dense
from rag_lab.documents import Document
from rag_lab.metrics import span_scores
from rag_lab.ranking import order
from rag_lab.search import TextEncoder
from rag_lab.sources.chroma.chunkers import TokenChunker
from rag_lab.spans import SpanQuestion

K = 5
"""Chunks retrieved per question: ``retrieve=5``, the default of Chroma's ``run``."""


@dataclass(frozen=True)
class Published:
    """One row of Chroma's report: a chunker and its mean recall, in percent."""

    chunker: TokenChunker
    recall: float


PUBLISHED = (
    Published(TokenChunker("fixed", 250, 0), 77.1),
    Published(TokenChunker("fixed", 250, 125), 82.4),
    Published(TokenChunker("recursive", 250, 0), 78.5),
    Published(TokenChunker("recursive", 200, 0), 75.7),
)
"""As issue 25 quotes the report for all-MiniLM-L6-v2 (sizes and overlaps in cl100k tokens)."""
SOURCE = "Smith & Troynikov, Evaluating Chunking Strategies for Retrieval (Chroma, 2024)"


@dataclass(frozen=True)
class Row:
    """A published row run here: Chroma's metrics per question, and their means."""

    published: Published
    chunks: int
    recall: np.ndarray
    precision: np.ndarray
    iou: np.ndarray

    @property
    def name(self) -> str:
        return self.published.chunker.name

    def mean(self, metric: str = "recall") -> tuple[float, float, float]:
        """The mean over questions of ``metric`` and its 95 % t-interval, in percent."""
        from scipy import stats

        values = 100 * getattr(self, metric)
        m, se = float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values)))
        half = float(stats.t.ppf(0.975, len(values) - 1)) * se
        return m, m - half, m + half


def run(
    docs: Sequence[Document],
    questions: Sequence[SpanQuestion],
    encoder: TextEncoder,
    rows: Sequence[Published] = PUBLISHED,
    k: int = K,
) -> list[Row]:
    """Every published row: chunk all the corpora, embed the chunks (cached), retrieve each
    question's top ``k`` over all of them, score with Chroma's metrics."""
    query_vectors = encoder.encode([q.text for q in questions])
    out = []
    for published in rows:
        chunks = published.chunker.chunk_corpus(docs)
        vectors = encoder.encode([c.text for c in chunks])
        distances = dense.cosine_distance_matrix(query_vectors, vectors)
        ranges = [(c.doc_id, c.start, c.end) for c in chunks]
        scores = [
            span_scores(
                [(r.doc, r.start, r.end) for r in q.spans],
                [ranges[i] for i in order(row, descending=False)[:k]],
            )
            for q, row in zip(questions, distances, strict=True)
        ]
        out.append(
            Row(
                published,
                len(chunks),
                np.array([s.recall for s in scores]),
                np.array([s.precision for s in scores]),
                np.array([s.iou for s in scores]),
            )
        )
    return out


def claim_id(row: Row, k: int = K) -> str:
    """The ledger id of a published row: ``chroma-fixed-250/0@5``."""
    c = row.published.chunker
    return f"chroma-{c.kind}-{c.size}/{c.overlap}@{k}"


def entries(rows: Sequence[Row], notebook: str = "10", benchmark: str = "chroma", k: int = K):
    """One value claim per published row (declared in ``rag_lab/claims/chapter.yaml``, with
    the report's mean recall as a fraction and the margin ``chroma_published``, narrower
    than the ledger's ±0.10, which is wider than the spread of the published rows): ours as
    a fraction, its interval Student's t over the questions (:meth:`Row.mean`). The published
    value is quoted from the report by way of the issue, not re-read here
    (:data:`PUBLISHED`)."""
    from rag_lab.evaluation.ledger import value_entry

    out = []
    for row in rows:
        mean, lo, hi = row.mean("recall")
        out.append(
            value_entry(
                claim_id(row, k),
                notebook=notebook,
                benchmark=benchmark,
                estimate=mean / 100,
                interval=(lo / 100, hi / 100),
                method="student_t",
                here=f"{mean:.1f} % of {len(row.recall)} questions, {row.chunks:,} chunks",
            )
        )
    return out
