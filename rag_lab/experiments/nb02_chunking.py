"""Notebook 02: what each chunking does to the corpus, worded against the chapter.

The measures (sizes, destroyed answers, word-pieces) are :mod:`rag_lab.evaluation.chunking`'s;
this module adds what only the notebook shows (offsets sliced back, where a cut falls in a
destroyed needle and whether the overlap rescues it, what a chunker starting at the first
section would drop), lays the records out in tables that fit a page, and reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab.chunking import OVERLAP as OVERLAP_CHARS
from rag_lab.chunking import STRATEGIES, TARGET, Chunk, offset_errors
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, claims, geometry, plots
from rag_lab.evaluation.chunking import Chunking, Destroyed, Sizes, WordPieces, destroyed_questions
from rag_lab.evaluation.ledger import Entry
from rag_lab.experiments.present import Table
from rag_lab.questions import Question

CUT = "‖"
"""Marks a chunk boundary inside a needle when a cut is shown."""

HEADLINE = ("A-destroys", "B-destroys-none", "header-window", "overlap-window")
"""The claims this notebook opens with: every chunking claim the chapter counts."""

NEEDLE_WIDTH = 58
"""Characters a needle's column of :func:`cut_table` holds."""


def offset_check(chunks_by: Mapping[str, Sequence[Chunk]], docs: Sequence[Document]) -> str:
    """Every chunk of every strategy sliced back from its document: the errors, counted."""
    n_chunks = sum(len(c) for c in chunks_by.values())
    errors = [e for chunks in chunks_by.values() for e in offset_errors(chunks, docs)]
    return f"{len(errors)} offset errors in {n_chunks} chunks across {len(chunks_by)} strategies"


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


def destroyed_table(destroyed: Destroyed) -> Table:
    """Per strategy, the questions whose needle no chunk holds whole."""
    return Table(
        destroyed.view(),
        caption=f"Destroyed answers: questions (of {destroyed.of}) whose needle no chunk's "
        "embedded text holds whole",
    )


def pieces_table(pieces: WordPieces) -> Table:
    """Word-pieces embedded per strategy (thousands separated), the header's share, chunks
    past the window."""
    shown = pieces.view()
    for column in ("embedded word-pieces", "header word-pieces"):
        shown[column] = [f"{int(v):,}" for v in shown[column]]
    return Table(
        shown,
        caption=f"Word-pieces embedded, all chunks of a strategy; over {pieces.window}: chunks "
        "past the encoder's window; max: the longest chunk",
    )


def cut_table(
    docs: Sequence[Document],
    chunks_by: Mapping[str, Sequence[Chunk]],
    questions: Sequence[Question],
) -> Table:
    """The needles blind cuts destroy (strategy A), one row each: its length, the characters
    of it before A's first cut, whether B's overlap keeps it whole, and the needle with
    :data:`CUT` where A's chunks start inside it (wrapped in HTML within :data:`NEEDLE_WIDTH`
    characters; the plain text cuts it there with ``…``)."""
    lost_by_b = {q.id for q in destroyed_questions(chunks_by["B"], questions)}
    texts = {d.id: d.text for d in docs}
    rows = [
        {
            "question": cut.question,
            "length": cut.end - cut.start,
            "before cut": cut.before,
            "under B": "cut" if cut.question in lost_by_b else "whole",
            "needle, ‖ at A's cut": cut.marked(texts[cut.doc]),
        }
        for cut in cuts_in(docs, chunks_by["A"], questions)
    ]
    return Table(
        pd.DataFrame(rows).set_index("question"),
        caption="The needles A destroys: length and characters before A's cut, in characters; "
        f"under B: does B's {OVERLAP_CHARS}-character overlap hold it whole",
        shorten={"needle, ‖ at A's cut": NEEDLE_WIDTH},
    )


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


def chapter_token_line() -> str:
    """The chapter's word-piece figures for strategy E, in one line."""
    ref = chapter_token_row()
    return (
        f"chapter, strategy E: {ref['header word-pieces']:,} of {ref['embedded word-pieces']:,} "
        f"word-pieces ({ref['header share']:.1%}); over the window: E {chapter.OVER_WINDOW['E']}, "
        f"F {chapter.OVER_WINDOW['F']}"
    )


def chapter_token_row() -> dict[str, float]:
    """The chapter's strategy-E token figures, for display beside ours."""
    return {
        "embedded word-pieces": chapter.EMBEDDED_TOKENS,
        "header word-pieces": chapter.HEADER_TOKENS,
        "header share": chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS,
    }


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


def chapter_destroyed_line() -> str:
    return (
        f"chapter: A {chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']}, "
        f"overlap strategies {chapter.DESTROYED_WITH_OVERLAP}"
    )


def destroyed_counts(measured: Chunking) -> dict[str, int]:
    """Destroyed needles per strategy (questions), as :func:`geometry.entries` takes them."""
    return {s: measured.destroyed.count(s) for s in measured.destroyed.questions}


GEOMETRY_STRATEGIES = {"A": 0, "B": OVERLAP_CHARS}
"""The blind strategies and their overlap in characters: the ones the geometry predicts."""


def geometry_table(lengths: Sequence[int], destroyed: Mapping[str, int]) -> Table:
    """For A and B: destroyed needles observed, the geometry's expectation from the needles'
    lengths and its central 95 % range, and the chapter's count on its own corpus."""
    chapter_count = {"A": chapter.DESTROYED_BY_BLIND, "B": chapter.DESTROYED_WITH_OVERLAP}
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
                "chapter": chapter_count[s],
            }
        )
    return Table(
        pd.DataFrame(rows).set_index("strategy"),
        caption=f"Destroyed needles, questions (of {len(lengths)}): observed, and expected "
        f"from the needles' lengths under cuts every {TARGET} characters (overlap in "
        "characters; 95 % range of the exact count distribution); chapter: its own corpus",
    )


def geometry_line(lengths: Sequence[int], overlap: int = OVERLAP_CHARS) -> str:
    """The general statement with the numbers it rests on, in three short lines."""
    protected = geometry.protected_length(overlap)
    longer = sum(int(n) > protected for n in lengths)
    implied = geometry.implied_length(
        chapter.DESTROYED_BY_BLIND, chapter.CORPUS["questions"], TARGET
    )
    median = float(pd.Series(lengths).median())
    return (
        f"an overlap of {overlap} characters keeps whole every needle of at most {protected}\n"
        f"here: {longer} of {len(lengths)} needles are longer, median {median:.0f} characters\n"
        f"the chapter's {chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']} under "
        f"blind cuts implies needles of about {implied:.0f} characters"
    )


def entries(measured: Chunking) -> list[Entry]:
    """The chapter's chunking counts on the lab's corpus: this notebook's part of the ledger."""
    return claims.chunking_entries(measured, "02", "d2l")


def reading(
    measured: Chunking,
    cuts: pd.DataFrame | None = None,
    lengths: Sequence[int] | None = None,
) -> str:
    """What the counts mean, read from the record and worded with the ledger's verdicts
    (:func:`entries`); ``cuts`` (:func:`overlap_cuts`) adds where the overlap reaches,
    ``lengths`` (the needles', in characters) what the geometry predicts."""
    judged = {e.claim: e for e in entries(measured)}
    lines = [_cuts(measured, judged, cuts)]
    if lengths is not None:
        lines.append(_geometry(lengths, measured))
    lines += [_header_cost(measured), _window(measured, judged)]
    return "\n".join(lines)


def _geometry(lengths: Sequence[int], m: Chunking) -> str:
    """The geometry's prediction against the counts, and the general statement."""
    judged = {e.claim: e for e in geometry.entries(lengths, destroyed_counts(m), "02", "d2l")}
    blind, kept = (
        geometry.expected_destroyed(lengths, m.destroyed.count(s), TARGET, o)
        for s, o in GEOMETRY_STRATEGIES.items()
    )
    protected = geometry.protected_length(OVERLAP_CHARS)
    longer = sum(int(n) > protected for n in lengths)
    implied = geometry.implied_length(
        chapter.DESTROYED_BY_BLIND, chapter.CORPUS["questions"], TARGET
    )
    median = float(pd.Series(lengths).median())
    agree = judged["geometry-A"].verdict.agrees and judged["geometry-B"].verdict.agrees
    title = "The geometry predicts the counts" if agree else "The geometry and the counts"
    return (
        f"- **{title}.** From the needles' lengths alone, blind cuts "
        f"should destroy {blind.expected:.1f} (95 % range {blind.low}–{blind.high}) and A "
        f"destroys {blind.observed} ({_verdict(judged['geometry-A'])}); with the overlap "
        f"{kept.expected:.1f} ({kept.low}–{kept.high}) and B destroys {kept.observed} "
        f"({_verdict(judged['geometry-B'])}). An overlap of {OVERLAP_CHARS} characters keeps "
        f"whole only needles of at most {protected} characters "
        f"({_verdict(judged['overlap-protects-short'])}); {longer} of {len(lengths)} needles "
        f"here are longer (median {median:.0f}). The chapter's "
        f"{chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']} under blind cuts "
        f"implies needles of about {implied:.0f} characters"
        + (
            f", short enough for the overlap to keep them all (its "
            f"{chapter.DESTROYED_WITH_OVERLAP} with overlap)"
            if round(implied) <= protected
            else ", longer than the overlap protects"
        )
        + (": the counts differ by the needles' length, not by the chunker." if agree else ".")
    )


def _verdict(e: Entry) -> str:
    return f"{e.claim}: *{e.verdict.label}*"


def _cuts(m: Chunking, judged: Mapping[str, Entry], cuts: pd.DataFrame | None) -> str:
    """Blind cuts, the overlap, and what boundaries do, in one bullet."""
    d = m.destroyed
    blind, overlap = d.count("A"), d.count("B")
    boundaries = [s for s in d.questions if STRATEGIES[s].cuts == "boundaries"]
    lost_by_boundaries = sum(d.count(s) for s in boundaries)
    text = (
        f"- **Where answers are destroyed.** Under blind cuts {blind} of {d.of} needles lie "
        f"whole in no chunk (the chapter: {chapter.DESTROYED_BY_BLIND} of "
        f"{chapter.CORPUS['questions']}; "
        f"{_verdict(judged['A-destroys'])}); the overlap keeps {blind - overlap} of them whole "
        f"and loses {overlap} (the chapter: {chapter.DESTROYED_WITH_OVERLAP}; "
        f"{_verdict(judged['B-destroys-none'])})."
    )
    if cuts is not None and len(cuts):
        explained = int((cuts["lost"] == cuts["beyond"]).sum())
        text += (
            f" B's chunk repeats the {OVERLAP_CHARS} characters before a cut, so it holds a "
            f"needle whole only when at most {OVERLAP_CHARS} of it lie before the cut: that "
            f"accounts for {explained} of the {len(cuts)}."
        )
        kept, lost = cuts[~cuts["lost"]]["length"], cuts[cuts["lost"]]["length"]
        if len(kept) and len(lost):
            text += (
                f" Length does not decide it: the needles kept are {kept.min()}–{kept.max()} "
                f"characters long, those lost {lost.min()}–{lost.max()}."
            )
    return text + (
        f" Cutting at paragraph and sentence boundaries loses {lost_by_boundaries} needles "
        f"over the {len(boundaries)} boundary strategies ({', '.join(boundaries)}): it is the "
        "boundaries, not the overlap, that keep sentences whole."
    )


def _header_cost(m: Chunking) -> str:
    e = m.pieces.table.loc["E"]
    chunks = m.sizes.chunks("E")
    per_chunk = float(e["header word-pieces"]) / chunks
    body_here = (float(e["embedded word-pieces"]) - per_chunk * chunks) / chunks
    chapter_share = chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS
    chapter_per_chunk = chapter.HEADER_TOKENS / chapter.CHUNKS_PER_BOUNDARY_STRATEGY
    chapter_body = (chapter.EMBEDDED_TOKENS - chapter.HEADER_TOKENS) / (
        chapter.CHUNKS_PER_BOUNDARY_STRATEGY
    )
    return (
        f"- **The header costs tokens.** It is {float(e['header share']):.1%} of the word-pieces "
        f"E embeds (the chapter: {chapter_share:.1%}). Measured per chunk: {per_chunk:.1f} "
        f"header word-pieces and {body_here:.1f} of body here; the chapter's totals imply "
        f"{chapter_per_chunk:.1f} and {chapter_body:.1f}. So the gap in share is the header's "
        "length, not the bodies': its headers are about "
        f"{chapter_per_chunk / per_chunk:.1f}× as long as ours (its titles and section names "
        "are not published, so the reason cannot be measured here)."
    )


def _window(m: Chunking, judged: Mapping[str, Entry]) -> str:
    over = {s: m.pieces.over(s) for s in ("C", "E", "F")}
    by_header, by_overlap = over["E"] - over["C"], over["F"] - over["E"]
    header = float(m.pieces.table.loc["E", "header word-pieces"]) / m.sizes.chunks("E")
    return (
        f"- **Chunks past the {m.pieces.window}-word-piece window.** C {over['C']}, E "
        f"{over['E']}, F {over['F']} (the chapter: E {chapter.OVER_WINDOW['E']}, F "
        f"{chapter.OVER_WINDOW['F']}). The header adds {by_header} "
        f"({_verdict(judged['header-window'])}); the overlap on top of it adds {by_overlap} "
        f"({_verdict(judged['overlap-window'])}). A chunk past the window is truncated without "
        "a warning, so its tail is never embedded."
        + (
            f" The header's {header:.1f} word-pieces per chunk carry no chunk over the line here."
            if by_header == 0
            else ""
        )
    )
