"""Notebook 09's examples: an answer shown as a reader sees it."""

from __future__ import annotations

import pandas as pd

from rag_lab.citations import Citation
from rag_lab.evaluation.generation import outcome
from rag_lab.experiments import nb09_generation as nb09
from rag_lab.pipeline import Answer

SOURCE = Citation(1, "05-autograd", "Autograd", "Intro", "#char=0,40", "the needle is here", 0.4)


def shown(text: str) -> str:
    row = {"id": "q1/course", "question": "q?"}
    row |= outcome(Answer("q?", "prompt", [SOURCE], [], text), "needle", None)
    return nb09.examples(pd.DataFrame([row]), "cites_needle")


def test_an_answer_cut_inside_a_code_block_does_not_swallow_its_sources():
    text = shown("The needle [1]:\n```python\nx = 1")
    fences = [line for line in text.splitlines() if line.lstrip("> ").startswith("```")]
    assert len(fences) == 2  # opened by the model, closed for display
    body, sources = text.split("**Sources**")
    assert body.rstrip("> \n").endswith("```") and sources.count("05-autograd") == 1
    text = shown("The needle [1]:\n```\nx = 1\n```")
    assert sum(line.lstrip("> ").startswith("```") for line in text.splitlines()) == 2
