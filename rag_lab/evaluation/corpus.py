"""The lab's corpus and ground truth measured: totals, where each needle sits, the faults the
question validator finds in ``data/broken_questions.yaml``, and what every later notebook
relies on, checked on the run (*by construction*, not chapter claims under test)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_lab import paths
from rag_lab.chunking import section_of
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import chapter
from rag_lab.evaluation.ledger import Entry, fixed_entry
from rag_lab.markdown import MarkdownDoc, structure
from rag_lab.questions import CHAPTER_DESIGN, PHRASINGS, QuestionsError, QuestionSet, load_questions

BROKEN = paths.DATA / "broken_questions.yaml"
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


def totals(docs: Sequence[Document]) -> pd.Series:
    """The counts of :func:`rag_lab.markdown.structure`, summed over the documents."""
    return pd.DataFrame([structure(d.text) for d in docs]).sum()


def needles(docs: Sequence[Document], qset: QuestionSet) -> pd.DataFrame:
    """Per question: its document, its needle's ``##`` section, length and start (``at``, a
    share of the document's characters)."""
    texts, rows = {d.id: d.text for d in docs}, {}
    for q in qset.questions:
        text = texts[q.doc]
        start = text.index(q.needle)
        section, at = section_of(text, start) or "(intro)", start / len(text)
        rows[q.id] = {"doc": q.doc, "section": section, "needle chars": len(q.needle), "at": at}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("id")


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


def broken_violations(docs: Sequence[Document]) -> list:
    """Every violation the validator finds in :data:`BROKEN`."""
    try:
        load_questions(BROKEN, docs)
    except QuestionsError as err:
        return err.violations
    return []


def entries(docs: Sequence[Document], qset: QuestionSet, violations: Sequence) -> list[Entry]:
    """What every later notebook relies on, each *by construction* and *contradicted* if this
    run shows otherwise; ``violations`` are the validator's on :data:`BROKEN`."""
    t, s, negatives = totals(docs), spread(docs, qset), len(qset.negatives)
    kinds = ", ".join(f"{s[f'{k} negatives']} {k}" for k in CHAPTER_DESIGN.negatives)
    prose = [_once_in_prose(docs, q.needle) for q in qset.questions]
    caught = PLANTED & {(v.line, v.id, v.field) for v in violations}
    least = CHAPTER_DESIGN.min_documents
    design = (chapter.CORPUS["questions"], chapter.CORPUS["queries"], chapter.NEGATIVES)
    checks = {
        "corpus-kind": (
            t["code blocks"] and t["tables"] and t["display equations"] + t["inline math"],
            f"{len(docs)} documents, {t['characters']:,} characters, {t['sections']} sections: "
            f"{t['code blocks']} code blocks, {t['tables']} tables, {t['display equations']} "
            "display equations",
            "chosen so (chapters of *Dive into Deep Learning*); another text than the chapter's, "
            "so sizes compare and only directions carry over",
        ),
        "design": (
            (s["questions"], s["queries"], negatives) == design
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
            s["documents"] >= least and s["intro needles"],
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
