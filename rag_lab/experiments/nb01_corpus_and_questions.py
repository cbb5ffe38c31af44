"""Notebook 01: the corpus and the ground truth beside the chapter's, and the validator at work
(measured by :mod:`rag_lab.evaluation.corpus`, whose checks the notebook shows but does not
save to the ledger)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_lab.documents import Document
from rag_lab.evaluation import chapter
from rag_lab.evaluation.corpus import BROKEN, needles, totals
from rag_lab.experiments.present import Table, Verbatim
from rag_lab.questions import PHRASINGS, QuestionSet

HEADLINE = ("corpus-kind", "design", "needle-once", "validator-faults")


def totals_table(docs: Sequence[Document]) -> Table:
    """:func:`~rag_lab.evaluation.corpus.totals` beside the chapter's (a dash where it gives
    none), with characters per ``##`` section and the ratio."""
    here = {"documents": len(docs), **totals(docs)}
    n = pd.DataFrame(
        {"here": here, "chapter": {k: chapter.CORPUS.get(k) for k in here}}, dtype=float
    )
    n.loc["characters per section"] = n.loc["characters"] / n.loc["sections"]
    n["here ÷ chapter"] = (n["here"] / n["chapter"]).round(2)
    for c in ("here", "chapter"):
        n[c] = [None if pd.isna(v) else f"{v:,.0f}" for v in n[c]]
    return Table(n.rename_axis("corpus"))


def ground_truth(docs: Sequence[Document], qset: QuestionSet) -> tuple[Table, Table, Table]:
    """Where each needle sits, how each question is asked, and the negatives."""
    where = needles(docs, qset).round({"at": 2}).reset_index().set_index("doc")
    asked = pd.DataFrame(qset.questions).set_index("id")[list(PHRASINGS)]
    negatives = pd.DataFrame(qset.negatives).set_index("id")[["kind", "query"]]
    return (
        Table(where, shorten={"section": 30}),
        Table(asked, shorten=dict.fromkeys(PHRASINGS, 44)),
        Table(negatives, shorten={"query": 84}),
    )


def messages(violations: Sequence) -> Verbatim:
    """The validator's words, one violation a line."""
    return Verbatim("\n".join(v.render(BROKEN.name) for v in violations))
