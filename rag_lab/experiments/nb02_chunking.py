"""Notebook 02: what each chunking does to the corpus, beside the chapter's counts.

The measures are :mod:`rag_lab.evaluation.chunking`'s; this module adds what only the notebook
shows (offsets sliced back, where blind cuts fall in the needles they destroy, what a chunker
starting at the first section would drop) and lays the records out as tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

import pandas as pd

from rag_lab.chunking import OVERLAP, TARGET, Chunk, offset_errors
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, geometry, hypotheses
from rag_lab.evaluation.chunking import Chunking, Destroyed, Sizes, WordPieces, destroyed_questions
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.overlap import WITHOUT
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
    frame = pd.DataFrame(
        [(len(chunks), len(offset_errors(chunks, docs))) for chunks in chunks_by.values()],
        columns=["chunks", "offset errors"],
        index=pd.Index(list(chunks_by), name="strategy"),
    )
    return Table(
        frame,
        caption="Each chunk's content sliced back from its document by its offsets; offset "
        "errors: chunks whose slice differs from their content",
    )


def sizes_table(sizes: Sizes) -> Table:
    return Table(
        sizes.table.assign(**{"text mean": sizes.table["text mean"].map("{:.1f}".format)}),
        caption=f"Characters per chunk: content is what is quoted and what the {TARGET}-character "
        "budget caps; text is what is embedded (content + header + overlap)",
    )


def rescued_by_overlap(destroyed: Destroyed) -> dict[str, tuple[str, ...]]:
    """Per strategy with an overlap: the questions its twin without it destroys
    (:data:`rag_lab.evaluation.overlap.WITHOUT`) and it holds whole, in question order."""
    return {
        s: tuple(q for q in destroyed.questions[base] if q not in destroyed.questions[s])
        for s, base in WITHOUT.items()
        if s in destroyed.questions and base in destroyed.questions
    }


def destroyed_table(destroyed: Destroyed) -> Table:
    rescued = rescued_by_overlap(destroyed)
    view = destroyed.view()
    view.insert(2, "rescued", [len(rescued[s]) if s in rescued else "–" for s in view.index])
    view.insert(3, "chapter", [CHAPTER_DESTROYED.get(s, "–") for s in view.index])
    return Table(
        view,
        caption=f"Destroyed answers: questions (of {destroyed.of}) whose needle no chunk's "
        "embedded text holds whole; rescued: of those the same cuts without the overlap "
        "destroy, the ones the overlap holds whole; chapter: its counts on its own corpus",
    )


def pieces_table(pieces: WordPieces, sizes: Sizes) -> Table:
    """Word-pieces embedded per strategy, and per chunk the header's and the body's (all but
    the header, ``[CLS]`` and ``[SEP]`` included); then the chapter's figures, per chunk over
    its :data:`~rag_lab.evaluation.chapter.CHUNKS_PER_BOUNDARY_STRATEGY` chunks."""
    t, per = pieces.table, chapter.CHUNKS_PER_BOUNDARY_STRATEGY
    n = pd.DataFrame(
        {
            "embedded": t["embedded word-pieces"],
            "header": t["header word-pieces"],
            "chunks": [sizes.chunks(str(s)) for s in t.index],
            "over": t["over window"],
            "max": t["max"],
        }
    )
    over = chapter.OVER_WINDOW
    n.loc["chapter E"] = [chapter.EMBEDDED_TOKENS, chapter.HEADER_TOKENS, per, over["E"], None]
    n.loc["chapter F"] = [None, None, None, over["F"], None]
    shown = {
        "embedded": (n["embedded"], "{:,.0f}"),
        "header": (n["header"], "{:,.0f}"),
        "header share": (n["header"] / n["embedded"], "{:.1%}"),
        "header per chunk": (n["header"] / n["chunks"], "{:.1f}"),
        "body per chunk": ((n["embedded"] - n["header"]) / n["chunks"], "{:.1f}"),
        f"over {pieces.window}": (n["over"], "{:.0f}"),
        "max": (n["max"], "{:.0f}"),
    }
    return Table(
        pd.DataFrame(
            {c: [None if pd.isna(v) else f.format(v) for v in s] for c, (s, f) in shown.items()},
            index=n.index.rename("strategy"),
        ),
        caption="Word-pieces embedded: all chunks of a strategy, and per chunk the header and "
        f"the rest (the body); over {pieces.window}: chunks past the encoder's window; max: the "
        f"longest chunk; chapter: its figures, per chunk over its {per} chunks",
    )


def cut_table(
    docs: Sequence[Document],
    chunks_by: Mapping[str, Sequence[Chunk]],
    questions: Sequence[Question],
) -> Table:
    """The needles blind cuts (A) destroy, one row each: its length, its characters before
    A's first cut, whether that is within B's overlap, whether B holds it whole, and the
    needle with ``‖`` where A's chunks start inside it."""
    texts = {d.id: d.text for d in docs}
    lost_by_b = {q.id for q in destroyed_questions(chunks_by["B"], questions)}
    rows = {}
    for q in destroyed_questions(chunks_by["A"], questions):
        text = texts[q.doc]
        start = text.index(q.needle)
        end = start + len(q.needle)
        cuts = [c.start for c in chunks_by["A"] if c.doc_id == q.doc and start < c.start < end]
        bounds = [start, *cuts, end]
        rows[q.id] = {
            "length": len(q.needle),
            "before cut": cuts[0] - start,
            "reach": "beyond" if cuts[0] - start > OVERLAP else "within",
            "under B": "cut" if q.id in lost_by_b else "whole",
            "needle, ‖ at A's cut": "‖".join(text[a:b] for a, b in pairwise(bounds)),
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("question"),
        caption="The needles A destroys: length and characters before A's cut, in characters; "
        f"reach: at most {OVERLAP} characters before the cut (within the reach of B's "
        "overlap) or more (beyond); under B: does B's overlap hold it whole",
        shorten={"needle, ‖ at A's cut": 48},
    )


def preamble_loss(
    docs: Sequence[Document], chunks: Sequence[Chunk], questions: Sequence[Question]
) -> dict[str, object]:
    """What a chunker that starts at the first ``## `` heading, as the chapter's does, would
    silently drop: here the text before it is a section of its own."""
    intro = [c for c in chunks if c.section == ""]
    characters = sum(len(c.content) for c in intro)
    return {
        "documents with an intro": len({c.doc_id for c in intro}),
        "intro chunks": len(intro),
        "intro characters": characters,
        "share of corpus": characters / sum(len(d.text) for d in docs),
        "needles in intros": sorted(
            q.id for q in questions if any(q.needle in c.content for c in intro)
        ),
    }


def destroyed_counts(measured: Chunking) -> dict[str, int]:
    """Destroyed needles per strategy, as :func:`rag_lab.evaluation.geometry.entries` takes them."""
    return {s: measured.destroyed.count(s) for s in measured.destroyed.questions}


def geometry_table(lengths: Sequence[int], destroyed: Mapping[str, int]) -> Table:
    """For A and B: destroyed needles observed, the geometry's expectation from the needles'
    lengths with its central 95 % range, and the chapter's count."""
    rows = {}
    for s, overlap in {"A": 0, "B": OVERLAP}.items():
        e = geometry.expected_destroyed(lengths, destroyed[s], TARGET, overlap)
        rows[s] = {
            "overlap": overlap,
            "observed": e.observed,
            "expected": f"{e.expected:.1f}",
            "95 % range": f"{e.low}–{e.high}",
            "in range": "yes" if e.agrees else "no",
            "chapter": CHAPTER_DESTROYED[s],
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("strategy"),
        caption=f"Destroyed needles, questions (of {len(lengths)}): observed, and expected "
        f"from the needles' lengths under cuts every {TARGET} characters (overlap in "
        "characters; 95 % range of the exact count distribution); chapter: its own corpus",
    )


def entries(measured: Chunking) -> list[Entry]:
    """The chapter's chunking counts on the lab's corpus: this notebook's part of the ledger."""
    return hypotheses.chunking_entries(measured, "02", "d2l")
