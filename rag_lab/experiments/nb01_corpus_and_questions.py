"""Notebook 01: the corpus and the ground truth, beside the chapter's, and the validator.

The records are the corpus's Markdown structure (:func:`rag_lab.markdown.structure`) and the
question set; this module counts where the needles sit, lays the counts out in tables and
figures that fit a page and checks the properties every later notebook relies on
(:func:`entries`); the notebook's Markdown says how to read them, with no number of its own.
Those checks are not chapter claims under test: each holds *by construction* (the corpus and
the question file were made so) and is checked on the run, so they open the notebook in the
ledger's form but are not saved to the ledger.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab.chunking import section_of, sections
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, plots
from rag_lab.evaluation.ledger import Entry, fixed_entry
from rag_lab.experiments.present import Table
from rag_lab.markdown import MarkdownDoc, structure
from rag_lab.questions import (
    CHAPTER_DESIGN,
    PHRASINGS,
    QuestionsError,
    QuestionSet,
    Violation,
    load_questions,
)

BROKEN = """
questions:
  - id: b1
    doc: 03-linear-algebra
    needle: "Matrices are for the brave."
    course: "What are matrices for?"
    ticket: "matrices, who are they for"
  - id: b2
    doc: 04-calculus
    needle: "Visualization Utilities"
    course: "Which plotting helpers does the book define?"
    ticket: "how do i plot stuff"
  - id: b2
    doc: 01-ndarray
    needle: "tensor"
    course: "What is a tensor?"
    ticket: "tensor what"
  - id: b4
    doc: 01-ndarray
    needle: "Getting Started"
    course: "How do I start?"
negatives:
  - id: n1
    kind: sideways
    query: "how do i bake bread"
"""
"""A question file with one mistake of each kind the validator catches."""

PLANTED = (
    (5, "b1", "needle"),
    (10, "b2", "needle"),
    (13, "b2", "id"),
    (15, "b2", "needle"),
    (18, "b4", "ticket"),
    (24, "n1", "kind"),
)
"""The faults planted in :data:`BROKEN`, as (line, id, field): a needle not in the corpus, a
needle that is a heading, a duplicate id, a needle found many times, a missing field, an
unknown negative kind."""

HEADLINE = ("corpus-kind", "design", "needle-once", "validator-faults")
"""The checks this notebook opens with."""

WIDTH = 100
"""Characters of a printed line."""


def per_document(docs: Sequence[Document]) -> pd.DataFrame:
    """One row per document: its title and its Markdown structure (sections, code, tables…)."""
    rows = [{"doc": d.id, "title": d.title, **structure(d.text)} for d in docs]
    return pd.DataFrame(rows).set_index("doc")


def beside_chapter(per_doc: pd.DataFrame) -> pd.DataFrame:
    """The corpus's totals beside the chapter's corpus, where the chapter gives a figure,
    with characters per section (the mean length of a section) and their ratio."""
    totals = per_doc.drop(columns="title").sum()
    here = {"documents": len(per_doc), **{k: int(v) for k, v in totals.to_dict().items()}}
    ref = {k: float(chapter.CORPUS.get(k, np.nan)) for k in here}
    table = pd.DataFrame({"here": here, "chapter": ref})
    table.loc["characters per section"] = [
        here["characters"] / here["sections"],
        chapter.CORPUS["characters"] / chapter.CORPUS["sections"],
    ]
    table["here ÷ chapter"] = table["here"] / table["chapter"]
    return table


def totals_table(per_doc: pd.DataFrame) -> Table:
    """:func:`beside_chapter` for reading: counts with thousands separators, the ratio to two
    decimals, a dash where the chapter gives no figure."""
    table = beside_chapter(per_doc)
    shown = pd.DataFrame(
        {
            "here": [f"{v:,.0f}" for v in table["here"]],
            "chapter": ["–" if pd.isna(v) else f"{v:,.0f}" for v in table["chapter"]],
            "here ÷ chapter": ["–" if pd.isna(v) else f"{v:.2f}" for v in table["here ÷ chapter"]],
        },
        index=pd.Index(table.index, name="corpus"),
    )
    return Table(
        shown,
        caption="The corpus's totals beside the chapter's (it reports documents, characters and "
        "sections only)",
    )


def document_figure(per_doc: pd.DataFrame):
    """What each document holds, as small multiples: one panel per count of
    :func:`rag_lab.markdown.structure`, one bar per document, sharing the documents' axis."""
    import matplotlib.pyplot as plt

    measures = [c for c in per_doc.columns if c != "title"]
    n = len(per_doc)
    with plots.style():
        fig, axes = plt.subplots(
            1, len(measures), figsize=(11.5, 0.24 * n + 1.6), sharey=True, squeeze=False
        )
        y = np.arange(n)[::-1]
        for ax, measure in zip(axes[0], measures, strict=True):
            values = per_doc[measure].to_numpy(dtype=float)
            scale, unit = (1000, "thousands of\ncharacters") if measure == "characters" else (1, "")
            ax.barh(y, values / scale, color=plots.NEUTRAL["mid"], height=0.7)
            total = f"{values.sum():,.0f}"
            ax.set_title(f"{measure}\n(total {total})", fontsize=8)
            if unit:
                ax.set_xlabel(unit, fontsize=8)
            ax.grid(axis="y", visible=False)
            ax.tick_params(axis="x", labelsize=7)
        axes[0][0].set_yticks(y, list(per_doc.index), fontsize=7.5)
        fig.suptitle(
            f"What each of the {n} documents holds (a bar: one document's count)", fontsize=10
        )
        fig.tight_layout()
    return fig


def negatives_table(qset: QuestionSet, width: int = 84) -> Table:
    """The negatives, one row each: kind and query (wrapped within ``width`` characters)."""
    frame = pd.DataFrame([n.__dict__ for n in qset.negatives]).set_index("id")
    kinds = frame["kind"].value_counts()
    counts = ", ".join(f"{kinds[k]} {k}" for k in kinds.index)
    return Table(
        frame[["kind", "query"]],
        caption=f"The {len(frame)} negatives ({counts}): queries the corpus should refuse",
        shorten={"query": width},
    )


def broken_violations(
    docs: Sequence[Document], folder: Path, text: str = BROKEN
) -> list[Violation]:
    """Write ``text`` as ``broken.yaml`` in ``folder``, validate it, return every violation."""
    path = folder / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_questions(path, docs)
    except QuestionsError as err:
        return err.violations
    return []


def validate_broken(docs: Sequence[Document], folder: Path, text: str = BROKEN) -> list[str]:
    """Every violation of ``text`` as the validator words it, each wrapped at :data:`WIDTH`
    characters with its continuation indented."""
    return [
        textwrap.fill(v.render("broken.yaml"), WIDTH, subsequent_indent="    ")
        for v in broken_violations(docs, folder, text)
    ]


def needle_table(docs: Sequence[Document], qset: QuestionSet) -> pd.DataFrame:
    """One row per question: its document, the section its needle is in, and both phrasings."""
    by_id = {d.id: d for d in docs}
    rows = []
    for q in qset.questions:
        text = by_id[q.doc].text
        start = text.index(q.needle)
        section = section_of(text, start)
        rows.append(
            {
                "id": q.id,
                "doc": q.doc,
                "section": section or "(intro)",
                "needle chars": len(q.needle),
                "at": f"{start / len(text):.0%}",
                "course": q.course,
                "ticket": q.ticket,
            }
        )
    return pd.DataFrame(rows).set_index("id")


def spread(docs: Sequence[Document], qset: QuestionSet) -> dict[str, int]:
    """How widely the needles are spread: documents, intros, ``##`` sections."""
    table = needle_table(docs, qset)
    return {
        "questions": len(qset.questions),
        "queries": 2 * len(qset.questions),
        "documents": table["doc"].nunique(),
        "intro needles": int((table["section"] == "(intro)").sum()),
        "sections": table[["doc", "section"]].drop_duplicates().shape[0],
        "uncovered negatives": sum(n.kind == "uncovered" for n in qset.negatives),
        "offtopic negatives": sum(n.kind == "offtopic" for n in qset.negatives),
    }


def where_table(docs: Sequence[Document], qset: QuestionSet) -> Table:
    """Where each question's needle sits: its document, its ``##`` section, its length and
    how far into the document it starts."""
    table = needle_table(docs, qset).reset_index().set_index("doc")
    return Table(
        table[["id", "section", "needle chars", "at"]],
        caption="Where each needle sits; at: where it starts, as a share of its document's "
        "characters",
        shorten={"section": 30},
    )


def phrasing_table(qset: QuestionSet, width: int = 44) -> Table:
    """Each question in its two phrasings, each wrapped within ``width`` characters."""
    frame = pd.DataFrame(
        {p: [getattr(q, p) for q in qset.questions] for p in PHRASINGS},
        index=pd.Index([q.id for q in qset.questions], name="id"),
    )
    return Table(
        frame,
        caption=f"The {len(frame)} questions, each asked twice: in the course's words and as a "
        "support ticket",
        shorten=dict.fromkeys(PHRASINGS, width),
    )


def needle_map_figure(docs: Sequence[Document], qset: QuestionSet):
    """Each document as a bar of its length, section starts as ticks, needles as markers."""
    import matplotlib.pyplot as plt

    by_doc: dict[str, list[int]] = {}
    for q in qset.questions:
        text = next(d.text for d in docs if d.id == q.doc)
        by_doc.setdefault(q.doc, []).append(text.index(q.needle))
    with plots.style():
        fig, ax = plt.subplots(figsize=(8, 0.28 * len(docs) + 1.2))
        for row, d in enumerate(docs):
            y = len(docs) - 1 - row
            ax.barh(y, len(d.text) / 1000, color=plots.NEUTRAL["paper"], height=0.6)
            for sec in sections(d.text)[1:]:
                ax.plot(
                    [sec.heading_start / 1000] * 2,
                    [y - 0.3, y + 0.3],
                    color=plots.NEUTRAL["mid"],
                    lw=0.6,
                )
            xs = np.array(by_doc.get(d.id, []), dtype=float) / 1000
            ax.plot(xs, [y] * len(xs), "v", color=plots.ROLE_COLORS["answerable"], ms=6)
        ax.set_yticks(range(len(docs)), [d.id for d in reversed(docs)])
        ax.set_xlabel("position in document (thousands of characters)")
        ax.set_title(
            f"Where the {len(qset.questions)} needles sit (▼: where one starts), over "
            f"{len(docs)} documents (a bar: one document's length); grey ticks: ## sections",
            fontsize=9,
        )
        ax.grid(axis="y", visible=False)
        fig.tight_layout()
    return fig


# --- what every later notebook relies on, checked -------------------------------------------


def entries(
    docs: Sequence[Document], qset: QuestionSet, violations: Sequence[Violation]
) -> list[Entry]:
    """The properties of the corpus and the ground truth every later notebook relies on, in
    the ledger's form: each *by construction*, and *contradicted* if this run shows
    otherwise. ``violations`` are the validator's on :data:`BROKEN`
    (:func:`broken_violations`). These are not saved to the ledger: they are not the
    chapter's claims under test."""
    at = {"notebook": "01", "benchmark": "d2l"}
    per_doc = per_document(docs)
    totals = per_doc.drop(columns="title").sum()
    ref = chapter.CORPUS
    s = spread(docs, qset)
    negatives = len(qset.negatives)
    kinds = {k: sum(n.kind == k for n in qset.negatives) for k in CHAPTER_DESIGN.negatives}
    prose = [_once_in_prose(docs, q.needle) for q in qset.questions]
    found = {(v.line, v.id, v.field) for v in violations}
    caught = [f for f in PLANTED if f in found]
    return [
        fixed_entry(
            "corpus-kind",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=bool(
                totals["code blocks"] > 0
                and totals["tables"] > 0
                and totals["display equations"] + totals["inline math"] > 0
            ),
            here=f"{len(docs)} documents, {totals['characters']:,} characters, "
            f"{totals['sections']} sections: {totals['code blocks']} code blocks, "
            f"{totals['tables']} tables, {totals['display equations']} display equations",
            reason="chosen so (chapters of *Dive into Deep Learning*); another text than the "
            "chapter's, so sizes compare and only directions carry over",
        ),
        fixed_entry(
            "design",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=s["questions"] == ref["questions"]
            and s["queries"] == ref["queries"]
            and negatives == chapter.NEGATIVES
            and all(getattr(q, p).strip() for q in qset.questions for p in PHRASINGS),
            here=f"{s['questions']} × 2 = {s['queries']} queries; {negatives} negatives ("
            + ", ".join(f"{n} {k}" for k, n in kinds.items())
            + ")",
            reason="the question file is written to the chapter's design and setup refuses "
            "any other count",
        ),
        fixed_entry(
            "needle-once",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=all(prose),
            here=f"{sum(prose)} of {len(prose)} needles",
            reason="the validator refuses any other file (this notebook's last section shows "
            "it at work)",
        ),
        fixed_entry(
            "needle-spread",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=s["documents"] >= CHAPTER_DESIGN.min_documents and s["intro needles"] > 0,
            here=f"{s['documents']} of {len(docs)} documents, {s['sections']} sections, "
            f"{s['intro needles']} intros",
            reason=f"the questions were chosen so; setup requires at least "
            f"{CHAPTER_DESIGN.min_documents} documents",
        ),
        fixed_entry(
            "validator-faults",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=len(caught) == len(PLANTED),
            here=f"{len(caught)} of the {len(PLANTED)} faults planted, {len(violations)} reported",
            reason="every rule is checked on every item before any error is raised",
        ),
    ]


def _once_in_prose(docs: Sequence[Document], needle: str) -> bool:
    """The needle occurs exactly once in the corpus and touches no heading, code, table or
    display-math line."""
    where = [d for d in docs if needle in d.text]
    if sum(d.text.count(needle) for d in where) != 1:
        return False
    text = where[0].text
    start = text.index(needle)
    return not any(MarkdownDoc(text).overlaps(start, start + len(needle)).values())
