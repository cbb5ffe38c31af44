"""Notebook 05's views of the LLM reranker, on a made-up sample."""

from __future__ import annotations

import numpy as np

from rag_lab.evaluation import chapter, joint
from rag_lab.experiments import nb05_reranking as nb05
from rag_lab.experiments.present import Table
from rag_lab.experiments.timing import Latency
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
    assert frame.loc["hybrid", "R@1"] == "0.250" and frame.loc["LLM reranker", "R@1"] == "0.500"
    # MRR: hybrid (1 + 1/2 + 0 + 1/4) / 4, the LLM (1/2 + 1 + 0 + 1) / 4
    assert frame.loc["hybrid", "MRR"] == "0.438" and frame.loc["LLM reranker", "MRR"] == "0.625"
    first = frame.loc["the chapter, first stage"]
    assert (first["R@1"], first["MRR"]) == (
        f"{chapter.RERANK_R1['dense']:.3f}",
        f"{chapter.RERANK_MRR['dense']:.3f}",
    )
    assert first["R@5"] == "–" and first["queries"] == chapter.CORPUS["queries"]
    assert "4 sampled questions" in view.caption
    # chance: three queries with one relevant chunk in 25, one with none
    assert frame.loc["a random order of the top 25 (expected)", "R@5"] == f"{3 * 0.2 / 4:.3f}"


def test_the_llm_cost_sits_beside_the_cross_encoder_timed_here():
    timed = [
        Latency("BM25 (score + rank)", np.array([0.05])),
        Latency("vector scan (distances + rank)", np.array([0.25])),
        Latency("cross-encoder × 25 pairs, stand-in (meaningless scores)", np.array([600.0])),
    ]
    view = nb05.cost_view([timed[-1], Latency(f"{nb05.LLM_STAGE} × 25", np.array([2500.0]))])
    frame = view.frame
    assert len(frame) == 2 and frame.index[1].startswith(nb05.LLM_STAGE)
    assert frame["median ms"].tolist() == ["600.000", "2,500.000"]
    assert frame["chapter ms"].tolist() == [f"{chapter.CROSS_ENCODER_MS_PER_QUERY:,.2f}", "–"]
    assert "stand-in" in view.caption
