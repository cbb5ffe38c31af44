"""Notebook 02: what each chunking does to the corpus, worded against the chapter.

The measures (sizes, destroyed answers, word-pieces) are :mod:`rag_lab.evaluation.chunking`'s;
this module adds what only the notebook shows (offsets sliced back, where a cut falls in a
destroyed needle, what a chunker starting at the first section would drop) and the reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.chunking import OVERLAP as OVERLAP_CHARS
from rag_lab.chunking import Chunk, offset_errors
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, claims, ledger
from rag_lab.evaluation.chunking import Chunking, destroyed_questions
from rag_lab.evaluation.ledger import Entry
from rag_lab.questions import Question

CUT = "‖"
"""Marks a chunk boundary inside a needle when a cut is shown."""


def offset_check(chunks_by: Mapping[str, Sequence[Chunk]], docs: Sequence[Document]) -> str:
    """Every chunk of every strategy sliced back from its document: the errors, counted."""
    n_chunks = sum(len(c) for c in chunks_by.values())
    errors = [e for chunks in chunks_by.values() for e in offset_errors(chunks, docs)]
    return f"{len(errors)} offset errors in {n_chunks} chunks across {len(chunks_by)} strategies"


def cut_views(
    docs: Sequence[Document],
    chunks: Sequence[Chunk],
    questions: Sequence[Question],
    context: int = 30,
) -> pd.DataFrame:
    """For each destroyed needle: where it is and where the chunk boundaries cut it.

    The ``view`` column shows the needle in its surroundings with ``‖`` where a
    chunk starts inside it; ``cut at`` gives those offsets.
    """
    texts = {d.id: d.text for d in docs}
    rows = []
    for q in destroyed_questions(chunks, questions):
        text = texts[q.doc]
        start = text.find(q.needle)
        end = start + len(q.needle)
        cuts = [c.start for c in chunks if c.doc_id == q.doc and start < c.start < end]
        pieces, last = [], start
        for cut in cuts:
            pieces += [text[last:cut], CUT]
            last = cut
        pieces.append(text[last:end])
        before = text[max(0, start - context) : start].replace("\n", " ")
        after = text[end : end + context].replace("\n", " ")
        rows.append(
            {
                "question": q.id,
                "doc": q.doc,
                "needle at": f"{start}–{end}",
                "cut at": ", ".join(map(str, cuts)),
                "needle chars before the cut": cuts[0] - start if cuts else None,
                "view": f"…{before}⟦{''.join(pieces)}⟧{after}…",
            }
        )
    columns = ["question", "doc", "needle at", "cut at", "needle chars before the cut", "view"]
    return pd.DataFrame(rows, columns=columns)


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


def entries(measured: Chunking) -> list[Entry]:
    """The chapter's chunking counts on the lab's corpus: this notebook's part of the ledger."""
    return claims.chunking_entries(measured, "02", "d2l")


def reading(measured: Chunking) -> str:
    """A plain-language verdict on the chapter's chunking claims, computed from the record."""
    lines = [_blind_cuts(measured), _overlap(measured), _header_cost(measured), _window(measured)]
    return "\n".join(lines) + "\n\n" + ledger.markdown(entries(measured))


def _blind_cuts(m: Chunking) -> str:
    blind = m.destroyed.count("A")
    return (
        f"- **Blind cuts destroy answers.** Here {blind} of {m.destroyed.of} needles are in no "
        f"chunk under A (the chapter: {chapter.DESTROYED_BY_BLIND} of 32). "
        + ("The claim reproduces." if blind > 0 else "It does not reproduce on this corpus.")
    )


def _overlap(m: Chunking) -> str:
    if m.destroyed.count("B") == 0:
        return "- **Overlap prevents it.** B loses no needle, as in the chapter."
    return (
        f"- **Overlap prevents it — only in part.** B still loses {m.destroyed.count('B')} of "
        f"the {m.destroyed.count('A')} that A loses (the chapter: "
        f"{chapter.DESTROYED_WITH_OVERLAP}). A {OVERLAP_CHARS}-character overlap rescues a "
        f"needle only if it starts at most {OVERLAP_CHARS} characters before the cut; longer or "
        "earlier-starting needles stay cut. Boundary cuts are what protect whole sentences: "
        f"C and E lose {m.destroyed.count('C')} and {m.destroyed.count('E')}."
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
        "are not published, so why cannot be measured here)."
    )


def _window(m: Chunking) -> str:
    over = {s: m.pieces.over(s) for s in ("C", "E", "F")}
    by_header, by_overlap = over["E"] - over["C"], over["F"] - over["E"]
    return (
        f"- **Chunks past the {m.pieces.window}-word-piece window.** C {over['C']}, E "
        f"{over['E']}, F {over['F']} (the chapter: E {chapter.OVER_WINDOW['E']}, F "
        f"{chapter.OVER_WINDOW['F']}). "
        + (f"The header adds {by_header} here" if by_header > 0 else "The header adds none here")
        + (
            f"; the overlap on top of it adds {by_overlap}."
            if by_overlap > 0
            else "; nor does the overlap on top of it."
        )
        + " Every chunk past the window is truncated without a warning, so its tail is never "
        "embedded."
    )
