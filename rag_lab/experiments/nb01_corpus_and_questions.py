"""Notebook 01: the corpus and the ground truth beside the chapter's, and the validator at work.

The checks of :func:`entries` hold *by construction* (the corpus and the question file were
made so) and are checked on the run; they are not chapter claims under test, so the notebook
shows them in the ledger's form but does not save them to the ledger.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rag_lab.chunking import section_of
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import chapter
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

PLANTED = {
    (5, "b1", "needle"),  # not in the corpus
    (10, "b2", "needle"),  # a heading
    (13, "b2", "id"),  # a duplicate id
    (15, "b2", "needle"),  # found many times
    (18, "b4", "ticket"),  # a missing field
    (24, "n1", "kind"),  # an unknown negative kind
}
"""The faults planted in :data:`BROKEN`, as (line, id, field)."""

HEADLINE = ("corpus-kind", "design", "needle-once", "validator-faults")
WIDTH = 100
"""Characters of a printed line."""


def totals(docs: Sequence[Document]) -> pd.Series:
    """The counts of :func:`rag_lab.markdown.structure`, summed over the documents."""
    return pd.DataFrame([structure(d.text) for d in docs]).sum()


def totals_table(docs: Sequence[Document]) -> Table:
    """The corpus's totals beside the chapter's (a dash where it gives none), with the mean
    characters per section and the ratio."""
    here = {"documents": len(docs), **totals(docs).to_dict()}
    chapters = {k: chapter.CORPUS.get(k) for k in here}
    frame = pd.DataFrame({"here": here, "chapter": chapters}, dtype=float)
    frame.loc["characters per section"] = frame.loc["characters"] / frame.loc["sections"]
    frame["here ÷ chapter"] = frame["here"] / frame["chapter"]
    formats = {"here": "{:,.0f}", "chapter": "{:,.0f}", "here ÷ chapter": "{:.2f}"}
    shown = pd.DataFrame(
        {c: [None if pd.isna(v) else f.format(v) for v in frame[c]] for c, f in formats.items()},
        index=pd.Index(frame.index, name="corpus"),
    )
    return Table(
        shown,
        caption="The corpus's totals beside the chapter's (it reports documents, characters and "
        "sections only)",
    )


def needles(docs: Sequence[Document], qset: QuestionSet) -> pd.DataFrame:
    """One row per question: its document, its needle's ``##`` section, length in characters
    and start (``at``, a share of the document's characters)."""
    texts = {d.id: d.text for d in docs}
    rows = []
    for q in qset.questions:
        text = texts[q.doc]
        start = text.index(q.needle)
        section = section_of(text, start) or "(intro)"
        at = start / len(text)
        rows.append(
            {"id": q.id, "doc": q.doc, "section": section, "needle chars": len(q.needle), "at": at}
        )
    return pd.DataFrame(rows).set_index("id")


def spread(docs: Sequence[Document], qset: QuestionSet) -> dict[str, int]:
    """How widely the needles are spread (documents, intros, ``##`` sections), and the negatives."""
    where = needles(docs, qset)
    return {
        "questions": len(where),
        "queries": 2 * len(where),
        "documents": where["doc"].nunique(),
        "intro needles": int((where["section"] == "(intro)").sum()),
        "sections": len(where[["doc", "section"]].drop_duplicates()),
        **{
            f"{kind} negatives": sum(n.kind == kind for n in qset.negatives)
            for kind in CHAPTER_DESIGN.negatives
        },
    }


def where_table(docs: Sequence[Document], qset: QuestionSet) -> Table:
    where = needles(docs, qset).reset_index().set_index("doc")
    where["at"] = where["at"].map("{:.0%}".format)
    return Table(
        where[["id", "section", "needle chars", "at"]],
        caption="Where each needle sits; at: where it starts, as a share of its document's "
        "characters",
        shorten={"section": 30},
    )


def phrasing_table(qset: QuestionSet) -> Table:
    frame = pd.DataFrame(qset.questions).set_index("id")[list(PHRASINGS)]
    return Table(
        frame,
        caption=f"The {len(frame)} questions, each asked twice: in the course's words and as a "
        "support ticket",
        shorten=dict.fromkeys(PHRASINGS, 44),
    )


def negatives_table(qset: QuestionSet) -> Table:
    frame = pd.DataFrame(qset.negatives).set_index("id")
    kinds = ", ".join(f"{n} {kind}" for kind, n in frame["kind"].value_counts().items())
    return Table(
        frame[["kind", "query"]],
        caption=f"The {len(frame)} negatives ({kinds}): queries the corpus should refuse",
        shorten={"query": 84},
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


def messages(violations: Sequence[Violation]) -> str:
    """The validator's words, one violation a line, wrapped at :data:`WIDTH` characters."""
    return "\n".join(
        textwrap.fill(v.render("broken.yaml"), WIDTH, subsequent_indent="    ") for v in violations
    )


def entries(
    docs: Sequence[Document], qset: QuestionSet, violations: Sequence[Violation]
) -> list[Entry]:
    """What every later notebook relies on, each *by construction* and *contradicted* if this
    run shows otherwise; ``violations`` are the validator's on :data:`BROKEN`."""
    t = totals(docs)
    s = spread(docs, qset)
    negatives = len(qset.negatives)
    kinds = ", ".join(f"{s[f'{k} negatives']} {k}" for k in CHAPTER_DESIGN.negatives)
    prose = [_once_in_prose(docs, q.needle) for q in qset.questions]
    caught = PLANTED & {(v.line, v.id, v.field) for v in violations}
    least = CHAPTER_DESIGN.min_documents
    checks = {
        "corpus-kind": (
            t["code blocks"] > 0
            and t["tables"] > 0
            and t["display equations"] + t["inline math"] > 0,
            f"{len(docs)} documents, {t['characters']:,} characters, {t['sections']} sections: "
            f"{t['code blocks']} code blocks, {t['tables']} tables, {t['display equations']} "
            "display equations",
            "chosen so (chapters of *Dive into Deep Learning*); another text than the chapter's, "
            "so sizes compare and only directions carry over",
        ),
        "design": (
            s["questions"] == chapter.CORPUS["questions"]
            and s["queries"] == chapter.CORPUS["queries"]
            and negatives == chapter.NEGATIVES
            and all(getattr(q, p).strip() for q in qset.questions for p in PHRASINGS),
            f"{s['questions']} × 2 = {s['queries']} queries; {negatives} negatives ({kinds})",
            "the question file is written to the chapter's design and setup refuses any other "
            "count",
        ),
        "needle-once": (
            all(prose),
            f"{sum(prose)} of {len(prose)} needles",
            "the validator refuses any other file (this notebook's last section shows it at work)",
        ),
        "needle-spread": (
            s["documents"] >= least and s["intro needles"] > 0,
            f"{s['documents']} of {len(docs)} documents, {s['sections']} sections, "
            f"{s['intro needles']} intros",
            f"the questions were chosen so; setup requires at least {least} documents",
        ),
        "validator-faults": (
            len(caught) == len(PLANTED),
            f"{len(caught)} of the {len(PLANTED)} faults planted, {len(violations)} reported",
            "every rule is checked on every item before any error is raised",
        ),
    }
    at = {"notebook": "01", "benchmark": "d2l", "verdict": Verdict.BY_CONSTRUCTION}
    return [
        fixed_entry(claim, **at, holds=bool(holds), here=here, reason=reason)
        for claim, (holds, here, reason) in checks.items()
    ]


def _once_in_prose(docs: Sequence[Document], needle: str) -> bool:
    """The needle occurs exactly once in the corpus and touches no heading, code, table or
    display-math line."""
    where = [d for d in docs if needle in d.text]
    if sum(d.text.count(needle) for d in where) != 1:
        return False
    start = where[0].text.index(needle)
    return not any(MarkdownDoc(where[0].text).overlaps(start, start + len(needle)).values())
