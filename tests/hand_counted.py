"""Inputs small enough to count by hand, shared by a measure's tests (tests/evaluation) and
its notebook view's tests (tests/experiments)."""

from __future__ import annotations

import pandas as pd

from rag_lab.documents import Document
from rag_lab.questions import Negative, Question, QuestionSet

# Notebook 01: the documents BROKEN names, small enough to count by hand: "tensor" occurs
# twice, two needles of BROKEN are headings.
DOCS = [
    Document("01-ndarray", "Data", "# Data\n\n## Getting Started\n\nA tensor is a tensor.\n"),
    Document("03-linear-algebra", "LA", "# LA\n\nIntro text here.\n\n## Sums\n\n```\nx = 1\n```\n"),
    Document("04-calculus", "Calc", "# Calc\n\n## Visualization Utilities\n\nPlots $x$.\n"),
]
QSET = QuestionSet(
    (
        Question("q1", "03-linear-algebra", "Intro text here.", "what intro", "intro?"),
        Question("q2", "04-calculus", "Plots $x$.", "what plots", "plots?"),
    ),
    (Negative("n1", "uncovered", "how do i bake bread"), Negative("n2", "offtopic", "rain?")),
)

# Notebooks 02-03: one document whose needle a blind 512-character cut splits.
NEEDLE = "The answer is forty-two."
DOC = Document("01-t", "Title", "# Title\n\nIntro words.\n\n## Part\n\n" + "f" * 470 + " " + NEEDLE)
QUESTIONS = [
    Question("q1", "01-t", NEEDLE, "what is the answer", "answer?"),
    Question("q2", "01-t", "Intro words.", "what is the intro", "intro?"),
]


def ocr_records() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Notebook 11: OCR's pages (their confidence) and needles (kept, and their confidence)."""
    pages = pd.DataFrame(
        {"document": list("aabb"), "page": [1, 2, 1, 2], "confidence": [60.0, 75.0, 85.0, 96.0]}
    )
    needles = pd.DataFrame(
        {
            "document": list("aabbb"),
            "needle": ["n0", "n1", "n2", "n3", "n4"],
            "kept": [False, True, False, True, True],
            "kept, marks ignored": [True] * 5,
            "confidence": [60.0, 75.0, 85.0, 96.0, 96.0],
        }
    )
    return pages, needles
