"""Notebook 05's views of the second stages, on made-up samples."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluation import chapter, joint
from rag_lab.evaluation.latency import Latency
from rag_lab.experiments import nb05_reranking as nb05
from rag_lab.experiments.nb04_bm25_and_hybrid import costs
from rag_lab.experiments.present import Table
from rag_lab.questions import Query, Question


def sample(hybrid, llm) -> joint.Joint:
    qs = [Query(Question(f"q{i}", "d", "n", "c?", "t?"), "course") for i in range(len(hybrid))]
    n = len(qs)
    ranks = {joint.HYBRID: hybrid, joint.LLM: llm}
    return joint.Joint(qs, ranks, np.full(n, 2.5), np.ones(n), 0, (1, 1, 0, 1))


def test_the_view_fits_and_sets_both_orders_beside_the_chapter():
    j = sample([1, 2, None, 4], [2, 1, None, 1])
    view = nb05.joint_view(j)
    assert isinstance(view, Table)
    frame = view.frame
    assert list(frame.index) == [
        "hybrid",
        "LLM reranker",
        "a random order of the top 25 (expected)",
        "the chapter, first stage",
        "the chapter, cross-encoder",
    ]
    assert frame.loc["hybrid", "R@1"] == 0.25 and frame.loc["LLM reranker", "R@1"] == 0.5
    # MRR: hybrid (1 + 1/2 + 0 + 1/4) / 4, the LLM (1/2 + 1 + 0 + 1) / 4
    assert frame.loc["hybrid", "MRR"] == 0.4375 and frame.loc["LLM reranker", "MRR"] == 0.625
    first = frame.loc["the chapter, first stage"]
    assert (first["R@1"], first["MRR"]) == (chapter.RERANK_R1["dense"], chapter.RERANK_MRR["dense"])
    assert first["queries"] == chapter.CORPUS["queries"]
    assert view.shown().loc["the chapter, first stage", "R@5"] == "–"
    # chance: three queries with one relevant chunk in 25, one with none
    assert frame.loc["a random order of the top 25 (expected)", "R@5"] == pytest.approx(0.15)


def test_the_llm_cost_sits_beside_the_cross_encoder_timed_here():
    timed = [
        Latency("BM25 (score + rank)", np.array([0.05])),
        Latency("vector scan (distances + rank)", np.array([0.25])),
        Latency("cross-encoder × 25 pairs, stand-in (meaningless scores)", np.array([600.0])),
    ]
    llm = Latency("LLM reranker (Yes/No log-odds) × 25", np.array([2500.0]))
    frame = costs([timed[-1], llm], shorten=36).frame
    assert len(frame) == 2 and frame.index[1] == llm.stage
    assert frame["median ms"].tolist() == ["600.000", "2,500.000"]
    assert frame["chapter ms"].tolist() == [f"{chapter.CROSS_ENCODER_MS_PER_QUERY:,.2f}", "–"]


def test_movement_leaves_a_needle_beyond_the_reranked_top_out_of_reach():
    ranks = {"hybrid": [1, 2, 30, 1], joint.LATE: [2, 1, 30, 1]}
    moved = nb05.movement_table(ranks, n=25).frame.loc[joint.LATE]
    # the needle at 30 is beyond the reranked 25: out of reach, its rank unchanged
    assert moved.tolist() == [1, 1, 1, 1]  # up, down, same, beyond 25
