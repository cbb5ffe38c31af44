"""Ground truth by character offsets: a span of a document, and a question answered by spans.

Chroma's chunking benchmark grounds each question in one or more excerpts given as offsets
(:mod:`rag_lab.sources.chroma.questions` reads them); a chunk covers a span when the span lies
whole inside the document characters the chunk embeds (:func:`rag_lab.metrics.chunk_span`).

>>> Span("d", 10, 20).within(Span("d", 0, 30)), len(Span("d", 10, 20))
(True, 10)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Span:
    """Characters ``[start, end)`` of one document: ``document.text[start:end]``."""

    doc: str
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start

    def within(self, other: Span) -> bool:
        """True when this span lies whole inside ``other`` (same document)."""
        return self.doc == other.doc and other.start <= self.start and self.end <= other.end


@dataclass(frozen=True)
class SpanQuestion:
    """A question whose ground truth is one or more excerpts, given by offsets.

    It is answered when every span is retrieved whole; ``text`` is what a retriever is
    asked (the question's only phrasing).
    """

    id: str
    text: str
    spans: tuple[Span, ...]
