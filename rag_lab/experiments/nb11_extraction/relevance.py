"""Relevance over extracted text: the chunks that hold a query's needle, whitespace normalised.

The one relevance rule of notebook 11, kept here alone. It is the core's rule
(:func:`rag_lab.metrics.relevant_chunks`: a chunk's embedded text holds the needle whole)
with whitespace normalised first, because extraction rewraps lines: a needle may come out
with a newline where it had a space. The two are to become one.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_lab.chunking import Chunk
from rag_lab.questions import Query, Question
from rag_lab.sources.pdf.typeset import flat


def relevant_flat(chunks: Sequence[Chunk], queries: Sequence[Query | Question]) -> list[set[int]]:
    """Per query, the chunks whose embedded text holds the needle, whitespace normalised
    (extraction rewraps lines, so a needle may come out with a newline where it had a space)."""
    flats = [flat(c.text) for c in chunks]
    memo: dict[str, set[int]] = {}
    for q in queries:
        if q.needle not in memo:
            n = flat(q.needle)
            memo[q.needle] = {i for i, t in enumerate(flats) if n in t}
    return [memo[q.needle] for q in queries]
