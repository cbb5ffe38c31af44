"""Notebook 03: the six chunkings under dense retrieval
(:func:`rag_lab.evaluation.retrieval.strategies`), the comparisons its record does not hold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.evaluation import chapter, overlap
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.evaluation.paired import paired_table
from rag_lab.evaluation.recall import RecallTable, fmt_interval
from rag_lab.evaluation.retrieval import STRATEGY_KS, Strategies, by_phrasing
from rag_lab.experiments.present import Table
from rag_lab.models.encoder import Timing
from rag_lab.questions import Query

HEADLINE = ("E>A@R20", "E>C@R20", "F<E@R20", "B=A@R20")
PAIRED = ("k", "a − b by question", "questions", "p")
"""The columns of a paired comparison this notebook and notebook 04 add to the chapter's."""
PER_QUERY = {"R@1": "R@1 per query", "R@20": "R@20 per query", "no hit": "queries missed"}


def by_question(recall: RecallTable, mrr: bool = True, axis: str | None = None) -> Table:
    """Recall@k (and MRR), the interval with the questions as the sample."""
    columns = [f"R@{k}" for k in recall.ks] + (["MRR"] if mrr else [])
    return Table(recall.view(intervals="by question")[columns].rename_axis(axis))


def recall_tables(dense: Strategies) -> tuple[Table, Table]:
    """Recall@k by question; then as the chapter tabulates it: R@20 per query, the queries
    and questions no chunk can answer, and the chapter's interval where it gives one."""
    view = dense.recall.view(intervals="per query")[["R@20", "no hit"]].rename(columns=PER_QUERY)
    lost = dense.destroyed
    view["questions destroyed"] = [lost.count(s) for s in view.index] if lost else "–"
    r20 = chapter.WILSON_R20
    view["chapter R@20"] = [fmt_interval(r20[s]) if s in r20 else "–" for s in view.index]
    return by_question(dense.recall), Table(view)


def ranking_table(dense: Strategies, a: str = "B", b: str = "A") -> Table:
    """``a`` against ``b`` on the queries whose needle neither destroys: the overlap's effect
    on ranking alone, without the needles it rescues."""
    both = zip(dense.ranks[a], dense.ranks[b], strict=True)
    kept = [i for i, (x, y) in enumerate(both) if x is not None and y is not None]
    ranks = {s: [dense.ranks[s][i] for i in kept] for s in (a, b)}
    family = paired_table(ranks, [(a, b)], STRATEGY_KS, [dense.clusters[i] for i in kept])
    return Table(family.view(columns=["pair", *PAIRED]).set_index("pair"))


def wording_table(dense: Strategies, queries: Sequence[Query]) -> Table:
    """Course wording against ticket wording, per strategy, paired by question."""
    questions = [q.question.id for q in queries if q.phrasing == "course"]
    pairs = [(f"{s} course", f"{s} ticket") for s in dense.ranks]
    family = paired_table(by_phrasing(dense.ranks, queries), pairs, STRATEGY_KS, questions)
    view = family.view(columns=PAIRED).rename(
        columns={"a − b by question": "course − ticket by question"}
    )
    return Table(
        view.set_axis(pd.Index([s for s in dense.ranks for _ in STRATEGY_KS], name="strategy"))
    )


def index_cost_table(cold: Timing, backend: str) -> Table:
    """Model time to embed a chunk of E (the cache bypassed), single-threaded, and the chapter's."""
    return Table(
        pd.DataFrame(
            {
                "ms per chunk": [round(cold.ms_per_text, 1), chapter.INDEX_MS_PER_CHUNK],
                "chunks timed": [cold.computed, "–"],
                "backend": [backend, "–"],
            },
            index=pd.Index(["here", "the chapter"], name="index time"),
        )
    )


def rescue_table(destroyed: Destroyed, quoted_cut: Mapping[str, Sequence[str]]) -> Table:
    """Per strategy with an overlap: the needles its twin destroys, those the overlap rescues
    (notebook 02's count) and those whole in an embedded text only (``quoted_cut``)."""
    rescued = overlap.rescued_by_overlap(destroyed)
    rows = {
        s: {
            "twin": overlap.WITHOUT[s],
            "twin destroys": destroyed.count(overlap.WITHOUT[s]),
            "rescued": len(rescued[s]),
            "quoted cut": len(cut),
            "rescued questions": ", ".join(rescued[s]),
        }
        for s, cut in quoted_cut.items()
    }
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("strategy")
    return Table(frame, shorten={"rescued questions": 32})
