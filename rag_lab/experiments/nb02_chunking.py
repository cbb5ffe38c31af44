"""Notebook 02: what each chunking does to the corpus, beside the chapter's counts.

The measures are :mod:`rag_lab.evaluation.chunking`'s; this module adds what only the notebook
shows: offsets sliced back, and where blind cuts fall in the needles they destroy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

import pandas as pd

from rag_lab.chunking import OVERLAP, Chunk, offset_errors
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, geometry
from rag_lab.evaluation.chunking import Destroyed, Sizes, WordPieces, destroyed_questions
from rag_lab.evaluation.overlap import WITHOUT, rescued_by_overlap
from rag_lab.experiments.present import Table
from rag_lab.questions import Question

HEADLINE = ("A-destroys", "B-destroys-none", "header-window", "overlap-window")
GEOMETRY = ("geometry-A", "geometry-B", "overlap-protects-short")
CHAPTER_DESTROYED = {
    "A": chapter.DESTROYED_BY_BLIND,
    **dict.fromkeys(WITHOUT, chapter.DESTROYED_WITH_OVERLAP),
}
"""The chapter's destroyed answers on its own corpus; it gives no count for C and E."""


def offset_table(chunks_by: Mapping[str, Sequence[Chunk]], docs: Sequence[Document]) -> Table:
    """Chunks per strategy, and those whose offsets do not slice their content back."""
    rows = {s: [len(c), len(offset_errors(c, docs))] for s, c in chunks_by.items()}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["chunks", "offset errors"])
    return Table(frame.rename_axis("strategy"))


def destroyed_table(destroyed: Destroyed) -> Table:
    """:meth:`Destroyed.view` with what each overlap rescues and the chapter's count."""
    rescued, view = rescued_by_overlap(destroyed), destroyed.view()
    view.insert(2, "rescued", [len(rescued[s]) if s in rescued else "–" for s in view.index])
    view.insert(3, "chapter", [CHAPTER_DESTROYED.get(s, "–") for s in view.index])
    return Table(view)


def pieces_table(pieces: WordPieces, sizes: Sizes) -> Table:
    """Word-pieces embedded per strategy and per chunk the header's and the body's (all but
    the header), then the chapter's, per chunk over its ``CHUNKS_PER_BOUNDARY_STRATEGY``."""
    t, per, over = pieces.table, chapter.CHUNKS_PER_BOUNDARY_STRATEGY, chapter.OVER_WINDOW
    n = t[["embedded word-pieces", "header word-pieces", "over window", "max"]].astype(float)
    n.columns = ["embedded", "header", f"over {pieces.window}", "max"]
    n.insert(2, "chunks", [sizes.chunks(str(s)) for s in t.index])
    n.loc["chapter E"] = [chapter.EMBEDDED_TOKENS, chapter.HEADER_TOKENS, per, over["E"], None]
    n.loc["chapter F"] = [None, None, None, over["F"], None]
    n.insert(2, "header share", (n["header"] / n["embedded"]).round(3))
    n.insert(3, "header per chunk", (n["header"] / n["chunks"]).round(1))
    n.insert(4, "body per chunk", ((n["embedded"] - n["header"]) / n["chunks"]).round(1))
    n = n.drop(columns="chunks").rename_axis("strategy")
    return Table(n.convert_dtypes().astype(object).where(n.notna(), None))


def cut_table(
    docs: Sequence[Document],
    chunks_by: Mapping[str, Sequence[Chunk]],
    questions: Sequence[Question],
) -> Table:
    """The needles blind cuts (A) destroy: length, characters before A's first cut, whether
    that is within B's overlap, whether B holds it whole, and the needle, ``‖`` at A's cuts."""
    texts = {d.id: d.text for d in docs}
    lost_by_b = {q.id for q in destroyed_questions(chunks_by["B"], questions)}
    rows = {}
    for q in destroyed_questions(chunks_by["A"], questions):
        start = texts[q.doc].index(q.needle)
        end = start + len(q.needle)
        cuts = [c.start for c in chunks_by["A"] if c.doc_id == q.doc and start < c.start < end]
        rows[q.id] = {
            "length": len(q.needle),
            "before cut": cuts[0] - start,
            "reach": "beyond" if cuts[0] - start > OVERLAP else "within",
            "under B": "cut" if q.id in lost_by_b else "whole",
            "needle, ‖ at A's cut": "‖".join(
                texts[q.doc][a:b] for a, b in pairwise([start, *cuts, end])
            ),
        }
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("question")
    return Table(frame, shorten={"needle, ‖ at A's cut": 48})


def geometry_table(lengths: Sequence[int], destroyed: Mapping[str, int]) -> Table:
    """:func:`rag_lab.evaluation.geometry.expected_table` (its expectation rounded, with its
    central 95 % range ``low``, ``high``), beside the chapter's count."""
    frame = geometry.expected_table(lengths, destroyed).drop(columns="n")
    frame = frame.round({"expected": 1}).rename(columns={"agrees": "in range"})
    return Table(frame.assign(chapter=CHAPTER_DESTROYED))
