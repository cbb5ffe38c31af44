"""Where the ground truth sits in the corpus: sections, intros, a map of needles."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab.chunking import section_of, sections
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, plots
from rag_lab.evaluation.render import markdown_table
from rag_lab.markdown import structure
from rag_lab.questions import QuestionsError, QuestionSet, load_questions

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


def per_document(docs: Sequence[Document]) -> pd.DataFrame:
    """One row per document: its title and its Markdown structure (sections, code, tables…)."""
    rows = [{"doc": d.id, "title": d.title, **structure(d.text)} for d in docs]
    return pd.DataFrame(rows).set_index("doc")


def beside_chapter(per_doc: pd.DataFrame) -> pd.DataFrame:
    """The corpus's totals beside the chapter's corpus, where the chapter gives a figure."""
    totals = per_doc.drop(columns="title").sum()
    here = {"documents": len(per_doc), **totals.to_dict()}
    return pd.DataFrame({"here": here, "chapter": {k: chapter.CORPUS.get(k, "–") for k in here}})


def negatives_table(qset: QuestionSet) -> pd.DataFrame:
    return pd.DataFrame([n.__dict__ for n in qset.negatives]).set_index("id")


def validate_broken(docs: Sequence[Document], folder: Path, text: str = BROKEN) -> list[str]:
    """Write ``text`` as ``broken.yaml`` in ``folder``, validate it, return every violation."""
    path = folder / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_questions(path, docs)
    except QuestionsError as err:
        return [v.render(path.name) for v in err.violations]
    return []


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
            ax.barh(y, len(d.text) / 1000, color="#eceff1", height=0.6)
            for sec in sections(d.text)[1:]:
                ax.plot([sec.heading_start / 1000] * 2, [y - 0.3, y + 0.3], color="#90a4ae", lw=0.6)
            xs = np.array(by_doc.get(d.id, []), dtype=float) / 1000
            ax.plot(xs, [y] * len(xs), "v", color="#d84315", ms=6)
        ax.set_yticks(range(len(docs)), [d.id for d in reversed(docs)])
        ax.set_xlabel("position in document (thousands of characters)")
        ax.set_title(
            f"Where the {len(qset.questions)} needles sit (▼), over {len(docs)} documents; "
            "grey ticks: ## sections"
        )
        ax.grid(axis="y", visible=False)
        fig.tight_layout()
    return fig


def reading(per_doc: pd.DataFrame, qset: QuestionSet, docs: Sequence[Document]) -> str:
    """What the corpus and the ground truth are beside the chapter's, computed."""
    here = beside_chapter(per_doc)["here"]
    ref = chapter.CORPUS
    s = spread(docs, qset)
    same_design = s["questions"] == ref["questions"] and s["queries"] == ref["queries"]
    beside = pd.DataFrame(
        {
            "chapter": [
                f"{ref['questions']} × 2 = {ref['queries']}",
                f"{ref['characters']:,} characters",
            ],
            "here": [
                f"{s['questions']} × 2 = {s['queries']}",
                f"{here['characters']:,} characters",
            ],
        },
        index=pd.Index(["questions in two phrasings", "corpus size"], name="design"),
    )
    claims = markdown_table(beside)
    text = "\n".join(
        [
            f"- **The corpus.** {here['documents']} documents, {here['characters']:,} characters, "
            f"{here['sections']} sections (the chapter's: {ref['documents']}, "
            f"{ref['characters']:,}, {ref['sections']}): of the same order, so sizes and counts "
            "can be compared, but it is another text, so only directions carry over.",
            f"- **The ground truth.** {s['questions']} questions in two phrasings, "
            f"{s['queries']} queries (the chapter: {ref['questions']} and {ref['queries']}): "
            + (
                "the chapter's design, kept so that its statistics apply."
                if same_design
                else "not the chapter's design."
            )
            + f" The needles come from {s['documents']} documents and {s['sections']} "
            f"sections, {s['intro needles']} of them from intros.",
            f"- **What the design implies.** The {s['queries']} queries are {s['questions']} "
            "questions asked twice, not independent trials: every later notebook shows the "
            "chapter's per-query statistics beside question-level ones (intervals from a cluster "
            "bootstrap, sign tests over questions), and calls a claim reproduced only when the "
            "question-level test agrees.",
        ]
    )
    return text + "\n\n" + claims
