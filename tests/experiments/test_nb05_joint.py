"""Notebook 05's view and reading of the LLM reranker, on a made-up sample."""

from __future__ import annotations

import numpy as np

from rag_lab.evaluation import joint
from rag_lab.experiments import nb05_reranking as nb05
from rag_lab.experiments.present import Table
from rag_lab.questions import Query, Question


def sample(hybrid, llm) -> joint.Joint:
    qs = [Query(Question(f"q{i}", "d", "n", "c?", "t?"), "course") for i in range(len(hybrid))]
    n = len(qs)
    return joint.Joint(qs, {joint.HYBRID: hybrid, joint.LLM: llm}, np.full(n, 2.5), np.ones(n), 0)


def test_the_view_fits_and_names_the_sample():
    j = sample([1, 2, None, 4], [2, 1, None, 1])
    view = nb05.joint_view(j)
    assert isinstance(view, Table)
    text = repr(view)
    assert "LLM reranker" in text and "the chapter, cross-encoder" in text
    assert "4 sampled questions" in view.caption


def test_the_reading_says_the_verdict_and_the_cost():
    j = sample([2] * 8, [2] * 8)
    cost = nb05.Latency("LLM reranker × 25", np.array([2500.0]))
    line = nb05.joint_reading(j, joint.entries(j), cost)
    assert "an LLM reranker, not the chapter's cross-encoder" in line
    assert "inconclusive" in line and "8 questions cannot tell" in line
    assert "took 2,500 ms" in line and "4× the chapter's 569 ms" in line
