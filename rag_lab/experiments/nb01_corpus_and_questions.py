"""Where the ground truth sits in the corpus: sections, intros, a map of needles."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import section_of, sections
from rag_lab.documents import Document
from rag_lab.experiments import plots
from rag_lab.questions import QuestionSet


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
