"""What each chunking strategy does to the corpus: sizes, destroyed answers, token cost.

A *destroyed* answer is a needle that no chunk's embedded ``text`` holds whole: its
recall ceiling is zero whatever the retriever, so it is counted before any ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import OVERLAP as OVERLAP_CHARS
from rag_lab.chunking import STRATEGIES, TARGET, Chunk, containing, offset_errors
from rag_lab.documents import Document
from rag_lab.experiments import chapter, plots, tables
from rag_lab.models.minilm import count_word_pieces, minilm_fingerprint
from rag_lab.questions import Question

CUT = "‖"
"""Marks a chunk boundary inside a needle when a cut is shown."""


def offset_check(chunks_by: Mapping[str, Sequence[Chunk]], docs: Sequence[Document]) -> str:
    """Every chunk of every strategy sliced back from its document: the errors, counted."""
    n_chunks = sum(len(c) for c in chunks_by.values())
    errors = [e for chunks in chunks_by.values() for e in offset_errors(chunks, docs)]
    return f"{len(errors)} offset errors in {n_chunks} chunks across {len(chunks_by)} strategies"


def size_table(chunks_by: Mapping[str, Sequence[Chunk]]) -> pd.DataFrame:
    """Chunk counts and sizes (characters of content and of embedded text) per strategy."""
    rows = []
    for name, chunks in chunks_by.items():
        content = np.array([len(c.content) for c in chunks])
        text = np.array([len(c.text) for c in chunks])
        rows.append(
            {
                "strategy": name,
                "ingredients": STRATEGIES[name].label,
                "chunks": len(chunks),
                "content median": int(np.median(content)),
                "content max": int(content.max()),
                "text mean": round(float(text.mean()), 1),
                "text max": int(text.max()),
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


def destroyed(chunks: Sequence[Chunk], questions: Sequence[Question]) -> list[Question]:
    """The questions whose needle lies whole in no chunk's ``text``."""
    return [q for q in questions if not containing(chunks, q.needle)]


def destroyed_table(
    chunks_by: Mapping[str, Sequence[Chunk]], questions: Sequence[Question]
) -> pd.DataFrame:
    """Per strategy: how many answers are destroyed, of how many, and which."""
    rows = []
    for name, chunks in chunks_by.items():
        lost = destroyed(chunks, questions)
        rows.append(
            {
                "strategy": name,
                "destroyed": len(lost),
                "of": len(questions),
                "questions": ", ".join(q.id for q in lost) or "none",
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


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
    for q in destroyed(chunks, questions):
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


def token_table(chunks_by: Mapping[str, Sequence[Chunk]]) -> pd.DataFrame:
    """Word-pieces embedded per strategy, the header's share, and chunks past the window.

    Counts use the encoder's own tokenizer with ``[CLS]``/``[SEP]`` and no truncation.
    A header's cost is ``pieces(text) − pieces(text without its header line)``.
    """
    window = minilm_fingerprint().max_seq_length
    rows = []
    for name, chunks in chunks_by.items():
        texts = [c.text for c in chunks]
        pieces = count_word_pieces(texts)
        if STRATEGIES[name].header:
            bodies = [t.split("\n", 1)[1] for t in texts]
            header = int((pieces - count_word_pieces(bodies)).sum())
        else:
            header = 0
        total = int(pieces.sum())
        rows.append(
            {
                "strategy": name,
                "embedded word-pieces": total,
                "header word-pieces": header,
                "header share": header / total,
                f"over {window}": int((pieces > window).sum()),
                "max": int(pieces.max()),
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


def token_view(tokens: pd.DataFrame) -> pd.DataFrame:
    """:func:`token_table` as shown: the header's share as a percentage."""
    view = tokens.copy()
    view["header share"] = view["header share"].map("{:.1%}".format)
    return view


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


def size_figure(chunks_by: Mapping[str, Sequence[Chunk]]):
    """Small multiples: characters of embedded text per chunk, one panel per strategy."""
    import matplotlib.pyplot as plt

    with plots.style():
        fig, axes = plt.subplots(2, 3, figsize=(10, 5.4), sharex=True, sharey=True)
        bins = np.arange(0, 801, 25)
        for ax, (name, chunks) in zip(axes.flat, chunks_by.items(), strict=False):
            sizes = [len(c.text) for c in chunks]
            ax.hist(np.clip(sizes, 0, 800), bins=bins, color=plots.COLORS[name])
            ax.axvline(TARGET, color="k", lw=0.8, ls="--")
            ax.set_title(f"{name}: {STRATEGIES[name].label}\n(n = {len(chunks)})", fontsize=8)
        for ax in axes[-1]:
            ax.set_xlabel("characters per chunk\n(clipped at 800)")
        for ax in axes[:, 0]:
            ax.set_ylabel("chunks")
        fig.suptitle(f"Chunk sizes by strategy; dashed: the {TARGET}-character budget")
        fig.tight_layout()
    return fig


def window_figure(chunks_by: Mapping[str, Sequence[Chunk]]):
    """Word-pieces per embedded text for the boundary strategies, with the encoder's window."""
    import matplotlib.pyplot as plt

    window = minilm_fingerprint().max_seq_length
    names = [n for n in chunks_by if STRATEGIES[n].cuts == "boundaries"]
    with plots.style():
        fig, ax = plt.subplots(figsize=(7.5, 4.2))
        bins = np.arange(0, 401, 8)
        for name in names:
            pieces = count_word_pieces([c.text for c in chunks_by[name]])
            over = int((pieces > window).sum())
            ax.hist(
                np.clip(pieces, 0, 400),
                bins=bins,
                histtype="step",
                lw=1.4,
                color=plots.COLORS[name],
                label=f"{name} ({STRATEGIES[name].label}): {over} over {window}",
            )
        ax.axvline(window, color="k", lw=0.8, ls="--")
        ax.set_yscale("log")  # the tail past the window is a handful of chunks
        ax.set_xlabel("word-pieces per embedded text, [CLS] and [SEP] included (clipped at 400)")
        ax.set_ylabel("chunks (log scale)")
        n = len(chunks_by[names[0]])
        ax.set_title(
            f"What the encoder sees (n = {n} chunks each); past {window} it truncates silently"
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=8)
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


def chapter_destroyed_line() -> str:
    return (
        f"chapter: A {chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']}, "
        f"overlap strategies {chapter.DESTROYED_WITH_OVERLAP}"
    )


def reading(
    destroyed_by: pd.DataFrame,
    tokens: pd.DataFrame,
    sizes: pd.DataFrame,
    n_questions: int,
) -> str:
    """A plain-language verdict on the chapter's chunking claims, computed from the tables."""
    blind = int(destroyed_by.loc["A", "destroyed"])
    overlap = {s: int(destroyed_by.loc[s, "destroyed"]) for s in ("B", "D", "F")}
    boundaries = {s: int(destroyed_by.loc[s, "destroyed"]) for s in ("C", "E")}
    share = float(tokens.loc["E", "header share"])
    window = next(c for c in tokens.columns if c.startswith("over "))
    over = {s: int(tokens.loc[s, window]) for s in ("C", "E", "F")}
    chapter_share = chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS
    n_chunks = sizes["chunks"]

    lines = [
        f"- **Blind cuts destroy answers.** Here {blind} of {n_questions} needles are in no "
        f"chunk under A (the chapter: {chapter.DESTROYED_BY_BLIND} of 32). "
        + ("The claim reproduces." if blind > 0 else "It does not reproduce on this corpus."),
    ]
    if overlap["B"] == 0:
        lines.append("- **Overlap prevents it.** B loses no needle, as in the chapter.")
    else:
        lines.append(
            f"- **Overlap prevents it — only in part.** B still loses {overlap['B']} of the "
            f"{blind} that A loses (the chapter: {chapter.DESTROYED_WITH_OVERLAP}). A "
            f"{OVERLAP_CHARS}-character overlap rescues a needle only if it starts at most "
            f"{OVERLAP_CHARS} characters before the cut; longer or earlier-starting needles stay "
            "cut. Boundary cuts are what protect whole sentences: "
            f"C and E lose {boundaries['C']} and {boundaries['E']}."
        )
    per_chunk = float(tokens.loc["E", "header word-pieces"]) / n_chunks["E"]
    chapter_per_chunk = chapter.HEADER_TOKENS / chapter.CHUNKS_PER_BOUNDARY_STRATEGY
    body_here = (float(tokens.loc["E", "embedded word-pieces"]) - per_chunk * n_chunks["E"]) / (
        n_chunks["E"]
    )
    chapter_body = (chapter.EMBEDDED_TOKENS - chapter.HEADER_TOKENS) / (
        chapter.CHUNKS_PER_BOUNDARY_STRATEGY
    )
    lines.append(
        f"- **The header costs tokens.** It is {share:.1%} of the word-pieces E embeds "
        f"(the chapter: {chapter_share:.1%}). Measured per chunk: {per_chunk:.1f} header "
        f"word-pieces and {body_here:.1f} of body here; the chapter's totals imply "
        f"{chapter_per_chunk:.1f} and {chapter_body:.1f}. So the gap in share is the header's "
        "length, not the bodies': its headers are about "
        f"{chapter_per_chunk / per_chunk:.1f}× as long as ours (its titles and section names "
        "are not published, so why cannot be measured here)."
    )
    limit = window.split()[1]
    added_by_header, added_by_overlap = over["E"] - over["C"], over["F"] - over["E"]
    lines.append(
        f"- **Chunks past the {limit}-word-piece window.** C {over['C']}, E {over['E']}, "
        f"F {over['F']} (the chapter: E {chapter.OVER_WINDOW['E']}, F "
        f"{chapter.OVER_WINDOW['F']}). "
        + (
            f"The header adds {added_by_header} here"
            if added_by_header > 0
            else "The header adds none here"
        )
        + (
            f"; the overlap on top of it adds {added_by_overlap}."
            if added_by_overlap > 0
            else "; nor does the overlap on top of it."
        )
        + " Every chunk past the window is truncated without a warning, so its tail is never "
        "embedded."
    )
    claims = tables.count_claims(
        [
            (
                "blind cuts destroy answers (A)",
                f"{chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']}",
                f"{blind} of {n_questions}",
                "reproduces" if blind > 0 else "does not reproduce",
            ),
            (
                "a 64-character overlap prevents it (B)",
                f"{chapter.DESTROYED_WITH_OVERLAP}",
                f"{overlap['B']}",
                "reproduces" if overlap["B"] == 0 else "in part only",
            ),
            (
                "the header's share of E's word-pieces",
                f"{chapter_share:.1%}",
                f"{share:.1%}",
                "measured: smaller here",
            ),
        ]
    )
    return "\n".join(lines) + "\n\n" + claims
