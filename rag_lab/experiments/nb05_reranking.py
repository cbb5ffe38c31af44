"""Notebook 05: a second stage on the hybrid's top 25 (:mod:`rag_lab.evaluation.joint`): its
quality, where it moves each query's first hit, and its cost. A stand-in cross-encoder's
quality is never judged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.evaluation import chapter, joint
from rag_lab.evaluation.joint import HYBRID
from rag_lab.evaluation.paired import paired_table
from rag_lab.experiments.present import Table
from rag_lab.metrics import Ranks
from rag_lab.questions import Query
from rag_lab.rerank import TOP_N

HEADLINE = ("cross>hybrid@R1", "cross-cost", "colbert")


def paired_view(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> Table:
    """Each second stage against the hybrid at R@1 and R@4, per query and per question."""
    pairs = [(name, HYBRID) for name in ranks if name != HYBRID]
    paired = paired_table(ranks, pairs, (1, 4), [q.question.id for q in queries]).view()
    return Table(paired.drop(columns="chapter").rename(columns={"questions": "won/lost"}))


def movement_table(systems: Mapping[str, Ranks], n: int = TOP_N) -> Table:
    """Per second stage, the queries whose first hit moved up, down, not, or was beyond ``n``."""
    before = pd.Series(systems[HYBRID], dtype=float)
    reach, rows = before <= n, {}
    for name in [s for s in systems if s != HYBRID]:
        after = pd.Series(systems[name], dtype=float)
        moves = {"up": after < before, "down": after > before, "same": after == before}
        rows[name] = {m: int((reach & hit).sum()) for m, hit in moves.items()}
        rows[name][f"beyond {n}"] = int((~reach).sum())
    return Table(pd.DataFrame.from_dict(rows, orient="index").rename_axis("second stage"))


def joint_view(j: joint.Joint) -> Table:
    """The LLM reranker on its sample beside the hybrid, and the chapter's own rows."""
    frame = joint.table(j)
    first = pd.DataFrame(
        {"queries": chapter.CORPUS["queries"], "R@1": chapter.RERANK_R1["dense"]}
        | {"MRR": chapter.RERANK_MRR["dense"]},
        index=["the chapter, first stage"],
    )
    frame = pd.concat([frame.iloc[:-1], first, frame.iloc[-1:]])
    return Table(frame[["queries", "R@1", "R@5", "MRR"]].rename_axis("order"))
