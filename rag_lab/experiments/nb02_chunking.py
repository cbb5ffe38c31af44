"""Notebook 02: what each chunking does to the corpus, beside the chapter's counts.

The measures (sizes, destroyed answers, word-pieces) are :mod:`rag_lab.evaluation.chunking`'s;
this module adds what only the notebook shows (offsets sliced back, where a cut falls in a
destroyed needle and whether the overlap rescues it, what a chunker starting at the first
section would drop) and lays the records out in tables and figures that fit a page; the
notebook's Markdown says how to read them, and its claims are worded by
:mod:`rag_lab.claims.render`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab.chunking import OVERLAP as OVERLAP_CHARS
from rag_lab.chunking import TARGET, Chunk, offset_errors
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, claims, geometry, plots
from rag_lab.evaluation.chunking import Chunking, Destroyed, Sizes, WordPieces, destroyed_questions
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.overlap import WITHOUT
from rag_lab.experiments.present import Table
from rag_lab.questions import Question

CUT = "‖"
"""Marks a chunk boundary inside a needle when a cut is shown."""

HEADLINE = ("A-destroys", "B-destroys-none", "header-window", "overlap-window")
"""The claims this notebook opens with: every chunking claim the chapter counts."""

GEOMETRY = ("geometry-A", "geometry-B", "overlap-protects-short")
"""The claims of the geometry of destroyed needles (:func:`rag_lab.evaluation.geometry.entries`)."""

NEEDLE_WIDTH = 48
"""Characters a needle's column of :func:`cut_table` holds."""

CHAPTER_DESTROYED = {
    "A": chapter.DESTROYED_BY_BLIND,
    **dict.fromkeys(WITHOUT, chapter.DESTROYED_WITH_OVERLAP),
}
"""The chapter's destroyed answers on its own corpus: blind cuts, and every strategy with an
overlap; it gives no count for the others."""


def offset_table(chunks_by: Mapping[str, Sequence[Chunk]], docs: Sequence[Document]) -> Table:
    """Every chunk of every strategy sliced back from its document: chunks and errors, per
    strategy."""
    frame = pd.DataFrame(
        {
            "chunks": [len(chunks) for chunks in chunks_by.values()],
            "offset errors": [len(offset_errors(chunks, docs)) for chunks in chunks_by.values()],
        },
        index=pd.Index(list(chunks_by), name="strategy"),
    )
    return Table(
        frame,
        caption="Each chunk's content sliced back from its document by its offsets; offset "
        "errors: chunks whose slice differs from their content",
    )


@dataclass(frozen=True)
class Cut:
    """A destroyed needle and the chunk starts that fall inside it."""

    question: str
    doc: str
    start: int
    end: int
    """``document.text[start:end]`` is the needle."""
    cuts: tuple[int, ...]
    """Offsets in the document of the chunk starts strictly inside the needle."""

    @property
    def before(self) -> int | None:
        """Characters of the needle before the first cut (None: no cut inside it)."""
        return self.cuts[0] - self.start if self.cuts else None

    def marked(self, text: str) -> str:
        """The needle with :data:`CUT` at each cut."""
        pieces, last = [], self.start
        for cut in self.cuts:
            pieces += [text[last:cut], CUT]
            last = cut
        return "".join([*pieces, text[last : self.end]])


def cuts_in(
    docs: Sequence[Document], chunks: Sequence[Chunk], questions: Sequence[Question]
) -> list[Cut]:
    """For each needle no chunk holds whole, where it is and where chunks start inside it."""
    texts = {d.id: d.text for d in docs}
    out = []
    for q in destroyed_questions(chunks, questions):
        start = texts[q.doc].find(q.needle)
        end = start + len(q.needle)
        cuts = tuple(c.start for c in chunks if c.doc_id == q.doc and start < c.start < end)
        out.append(Cut(q.id, q.doc, start, end, cuts))
    return out


def sizes_table(sizes: Sizes) -> Table:
    """Chunk counts and sizes per strategy, the budget's quantity (content) apart from what
    is embedded (text)."""
    table = sizes.table.copy()
    table["text mean"] = table["text mean"].map("{:.1f}".format)
    return Table(
        table,
        caption=f"Characters per chunk: content is what is quoted and what the {TARGET}-character "
        "budget caps; text is what is embedded (content + header + overlap)",
    )


def rescued_by_overlap(destroyed: Destroyed) -> dict[str, tuple[str, ...]]:
    """Per strategy with an overlap: the questions its overlap-free twin destroys
    (:data:`rag_lab.evaluation.overlap.WITHOUT`: A for B, C for D, E for F) and it holds
    whole, in question order. Notebooks 02 and 03 both count B's rescues with this."""
    return {
        s: tuple(q for q in destroyed.questions[base] if q not in destroyed.questions[s])
        for s, base in WITHOUT.items()
        if s in destroyed.questions and base in destroyed.questions
    }


def destroyed_table(destroyed: Destroyed) -> Table:
    """Per strategy, the questions whose needle no chunk holds whole; for a strategy with an
    overlap, how many of its twin's it rescues (:func:`rescued_by_overlap`); the chapter's
    count on its own corpus where it gives one."""
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
    """Word-pieces embedded per strategy (all chunks, thousands separated), the header's
    share, the header's and the body's word-pieces per chunk (the body: all but the
    header, ``[CLS]`` and ``[SEP]`` included), chunks past the window and the longest; then
    the chapter's figures for E and F, per chunk over its
    :data:`~rag_lab.evaluation.chapter.CHUNKS_PER_BOUNDARY_STRATEGY` chunks."""
    over = f"over {pieces.window}"
    rows = {}
    for s, row in pieces.table.iterrows():
        chunks = sizes.chunks(str(s))
        embedded, header = int(row["embedded word-pieces"]), int(row["header word-pieces"])
        rows[s] = {
            "embedded": f"{embedded:,}",
            "header": f"{header:,}",
            "header share": f"{float(row['header share']):.1%}",
            "header per chunk": f"{header / chunks:.1f}",
            "body per chunk": f"{(embedded - header) / chunks:.1f}",
            over: int(row["over window"]),
            "max": int(row["max"]),
        }
    per = chapter.CHUNKS_PER_BOUNDARY_STRATEGY
    rows["chapter E"] = {
        "embedded": f"{chapter.EMBEDDED_TOKENS:,}",
        "header": f"{chapter.HEADER_TOKENS:,}",
        "header share": f"{chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS:.1%}",
        "header per chunk": f"{chapter.HEADER_TOKENS / per:.1f}",
        "body per chunk": f"{(chapter.EMBEDDED_TOKENS - chapter.HEADER_TOKENS) / per:.1f}",
        over: chapter.OVER_WINDOW["E"],
        "max": "–",
    }
    rows["chapter F"] = {
        **dict.fromkeys(rows["chapter E"], "–"),
        over: chapter.OVER_WINDOW["F"],
    }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("strategy"),
        caption="Word-pieces embedded: all chunks of a strategy, and per chunk the header and "
        f"the rest (the body); over {pieces.window}: chunks past the encoder's window; max: the "
        f"longest chunk; chapter: its figures, per chunk over its {per} chunks",
    )


def cut_table(
    docs: Sequence[Document],
    chunks_by: Mapping[str, Sequence[Chunk]],
    questions: Sequence[Question],
) -> Table:
    """The needles blind cuts destroy (strategy A), one row each: its length, the characters
    of it before A's first cut, whether that is within the overlap's reach (at most
    :data:`OVERLAP_CHARS`), whether B's overlap keeps it whole, and the needle with
    :data:`CUT` where A's chunks start inside it (wrapped in HTML within :data:`NEEDLE_WIDTH`
    characters; the plain text cuts it there with ``…``)."""
    lost_by_b = {q.id for q in destroyed_questions(chunks_by["B"], questions)}
    texts = {d.id: d.text for d in docs}
    rows = [
        {
            "question": cut.question,
            "length": cut.end - cut.start,
            "before cut": cut.before,
            "reach": "–" if cut.before is None else _reach(cut.before),
            "under B": "cut" if cut.question in lost_by_b else "whole",
            "needle, ‖ at A's cut": cut.marked(texts[cut.doc]),
        }
        for cut in cuts_in(docs, chunks_by["A"], questions)
    ]
    return Table(
        pd.DataFrame(rows).set_index("question"),
        caption="The needles A destroys: length and characters before A's cut, in characters; "
        f"reach: at most {OVERLAP_CHARS} characters before the cut (within the reach of B's "
        "overlap) or more (beyond); under B: does B's overlap hold it whole",
        shorten={"needle, ‖ at A's cut": NEEDLE_WIDTH},
    )


def _reach(before: int) -> str:
    return "beyond" if before > OVERLAP_CHARS else "within"


def overlap_cuts(
    docs: Sequence[Document],
    chunks_by: Mapping[str, Sequence[Chunk]],
    questions: Sequence[Question],
) -> pd.DataFrame:
    """For each needle A destroys (a cut inside it): its ``length``, its characters
    ``before`` A's first cut, whether B destroys it too (``lost``) and whether the
    overlap's reach says so (``beyond``: more than :data:`OVERLAP_CHARS` before the cut)."""
    lost_by_b = {q.id for q in destroyed_questions(chunks_by["B"], questions)}
    cuts = [c for c in cuts_in(docs, chunks_by["A"], questions) if c.cuts]
    frame = pd.DataFrame(
        {
            "length": [c.end - c.start for c in cuts],
            "before": [c.before for c in cuts],
            "lost": [c.question in lost_by_b for c in cuts],
        },
        index=pd.Index([c.question for c in cuts], name="question"),
    )
    frame["beyond"] = frame["before"] > OVERLAP_CHARS
    return frame


def overlap_figure(cuts: pd.DataFrame):
    """The overlap story in one picture: each needle A destroys as a dot at (characters of
    the needle before the cut, needle length), coloured by what B does to it, with the
    overlap's reach as a vertical line: left of it B's chunk repeats the needle's start."""
    import matplotlib.pyplot as plt

    top = float(max(cuts["length"].max(), cuts["before"].max())) * 1.12
    with plots.style():
        fig, ax = plt.subplots(figsize=(7.6, 4.6))
        ax.axvspan(0, OVERLAP_CHARS, color=plots.NEUTRAL["paper"], lw=0)
        ax.axvline(OVERLAP_CHARS, color=plots.NEUTRAL["ink"], lw=0.9, ls="--")
        ax.plot([0, top], [0, top], color=plots.NEUTRAL["faint"], lw=0.8)
        ax.text(
            top * 0.97,
            top * 0.42,
            "below the grey line: none (a needle cannot\nstart further back than its length)",
            ha="right",
            va="top",
            fontsize=7.5,
            color=plots.NEUTRAL["mid"],
        )
        ax.text(
            OVERLAP_CHARS / 2,
            top * 0.31,
            f"shaded: the {OVERLAP_CHARS} characters\nbefore each cut that\nB's chunk repeats",
            ha="center",
            va="bottom",
            fontsize=7.5,
        )
        outcomes = ((False, "kept", "whole under B"), (True, "lost", "cut under B too"))
        for lost, role, words in outcomes:
            part = cuts[cuts["lost"] == lost]
            ax.plot(
                part["before"],
                part["length"],
                "o",
                ms=7,
                color=plots.ROLE_COLORS[role],
                label=f"{words} ({len(part)})",
            )
        for q, row in cuts.iterrows():
            ax.annotate(
                q,
                (row["before"], row["length"]),
                xytext=(6, -3),
                textcoords="offset points",
                fontsize=7.5,
            )
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel("characters of the needle before A's cut")
        ax.set_ylabel("needle length (characters)")
        ax.set_title(
            f"The {len(cuts)} needles blind {TARGET}-character cuts destroy (a dot: one needle)",
            fontsize=9,
        )
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
    return fig


def preamble_loss(
    docs: Sequence[Document], chunks: Sequence[Chunk], questions: Sequence[Question]
) -> dict[str, object]:
    """What a chunker that starts at the first ``## `` heading would silently drop.

    The chapter's chunker splits on ``## `` only, so the text between a document's
    title and its first section never reaches the index. Here it is a section of
    its own; this counts what that fix keeps.
    """
    intro = [c for c in chunks if c.section == ""]
    kept = {q.id for q in questions if any(q.needle in c.content for c in intro)}
    return {
        "documents with an intro": len({c.doc_id for c in intro}),
        "intro chunks": len(intro),
        "intro characters": sum(len(c.content) for c in intro),
        "share of corpus": sum(len(c.content) for c in intro) / sum(len(d.text) for d in docs),
        "needles in intros": sorted(kept),
    }


def destroyed_counts(measured: Chunking) -> dict[str, int]:
    """Destroyed needles per strategy (questions), as :func:`geometry.entries` takes them."""
    return {s: measured.destroyed.count(s) for s in measured.destroyed.questions}


GEOMETRY_STRATEGIES = {"A": 0, "B": OVERLAP_CHARS}
"""The blind strategies and their overlap in characters: the ones the geometry predicts."""


def geometry_table(lengths: Sequence[int], destroyed: Mapping[str, int]) -> Table:
    """For A and B: destroyed needles observed, the geometry's expectation from the needles'
    lengths and its central 95 % range, and the chapter's count on its own corpus."""
    rows = []
    for s, overlap in GEOMETRY_STRATEGIES.items():
        e = geometry.expected_destroyed(lengths, destroyed[s], TARGET, overlap)
        rows.append(
            {
                "strategy": s,
                "overlap": overlap,
                "observed": e.observed,
                "expected": f"{e.expected:.1f}",
                "95 % range": f"{e.low}–{e.high}",
                "in range": "yes" if e.agrees else "no",
                "chapter": CHAPTER_DESTROYED[s],
            }
        )
    return Table(
        pd.DataFrame(rows).set_index("strategy"),
        caption=f"Destroyed needles, questions (of {len(lengths)}): observed, and expected "
        f"from the needles' lengths under cuts every {TARGET} characters (overlap in "
        "characters; 95 % range of the exact count distribution); chapter: its own corpus",
    )


def entries(measured: Chunking) -> list[Entry]:
    """The chapter's chunking counts on the lab's corpus: this notebook's part of the ledger."""
    return claims.chunking_entries(measured, "02", "d2l")
