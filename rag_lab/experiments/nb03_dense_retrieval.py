"""Notebook 03: the six chunkings under dense retrieval
(:func:`rag_lab.evaluation.retrieval.strategies`), in tables that fit a page."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import pandas as pd

from rag_lab.evaluation import baselines, chapter, overlap
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.evaluation.paired import paired_table as paired_family
from rag_lab.evaluation.recall import RecallTable, fmt_interval
from rag_lab.evaluation.retrieval import STRATEGY_KS, Strategies, by_phrasing
from rag_lab.experiments.nb02_chunking import rescued_by_overlap
from rag_lab.experiments.present import Table
from rag_lab.metrics import Ranks
from rag_lab.models.encoder import Timing
from rag_lab.questions import Query

HEADLINE = ("E>A@R20", "E>C@R20", "F<E@R20", "B=A@R20")
"""The claims this notebook opens with: the chapter's recall claims on its central table."""
PAIRED = ("k", "a − b by question", "questions", "p")
"""The columns of a paired comparison this notebook and notebook 04 add to the chapter's."""
SIGN_TEST = "p: their sign test, unadjusted"
PER_QUERY = {"R@1": "R@1 per query", "R@20": "R@20 per query", "no hit": "queries missed"}
"""The columns of recall as the chapter tabulates it: Wilson's interval over the queries."""


def by_question(
    recall: RecallTable,
    clusters: Sequence[Hashable],
    mrr: bool = True,
    axis: str | None = None,
    note: str = "",
) -> Table:
    """Recall@k (and MRR) with the questions as the sample; notebook 04 shows its own so."""
    columns = [f"R@{k}" for k in recall.ks] + (["MRR"] if mrr else [])
    return Table(
        recall.view(intervals="by question")[columns].rename_axis(axis),
        caption=f"Recall@k over {recall.rows[0].n} queries, 95 % interval with the "
        f"{len(set(clusters))} questions as the sample{note}",
    )


def recall_tables(dense: Strategies) -> tuple[Table, Table]:
    """Recall@k by question; beside it the chapter's table: R@20 per query, the needles no
    chunk holds, the chapter's own interval where it gives one."""
    view = dense.recall.view(intervals="per query")[["R@20", "no hit"]].rename(columns=PER_QUERY)
    destroyed = dense.destroyed
    view["questions destroyed"] = [destroyed.count(s) for s in view.index] if destroyed else "–"
    view["chapter R@20"] = [
        fmt_interval(chapter.WILSON_R20[s]) if s in chapter.WILSON_R20 else "–" for s in view.index
    ]
    return by_question(dense.recall, dense.clusters), Table(
        view,
        caption="As the chapter tabulates them: R@20 with Wilson's interval over the "
        f"{dense.recall.rows[0].n} queries; queries no chunk can answer (needle cut); "
        "questions whose needle is cut; chapter R@20: its Wilson interval, where it gives one",
    )


def paired_table(dense: Strategies) -> Table:
    """Every comparison of the family, beside the chapter's per-query test and result."""
    return Table(
        dense.paired.view(chapter.paired_reference),
        caption=f"a − b in Recall@k; questions: won/lost by a; {SIGN_TEST}",
    )


def phrasing_table(dense: Strategies) -> Table:
    """Recall per strategy and phrasing (each phrasing one query per question)."""
    view = dense.by_phrasing.view(intervals="per query").rename_axis("strategy, wording")
    return Table(
        view.drop(columns=["n", "no hit"]),
        caption=f"Recall@k per wording, n = {view['n'].iloc[0]} queries each, Wilson 95 % interval",
    )


def ranking_table(dense: Strategies, a: str = "B", b: str = "A") -> Table:
    """``a`` against ``b`` on the queries whose needle neither destroys: the overlap's effect
    on ranking alone, without the needles it rescues."""
    pairs = zip(dense.ranks[a], dense.ranks[b], strict=True)
    kept = [i for i, (x, y) in enumerate(pairs) if x is not None and y is not None]
    ranks = {s: [dense.ranks[s][i] for i in kept] for s in (a, b)}
    clusters = [dense.clusters[i] for i in kept]
    view = paired_family(ranks, [(a, b)], STRATEGY_KS, clusters).view(columns=["pair", *PAIRED])
    return Table(
        view.set_index("pair"),
        caption=f"{a} − {b} in Recall@k on the {len(kept)} queries ({len(set(clusters))} "
        f"questions) whose needle neither destroys; questions: won/lost by {a}; {SIGN_TEST}",
    )


def wording_table(dense: Strategies, queries: Sequence[Query]) -> Table:
    """Course wording against ticket wording, per strategy, paired by question."""
    questions = [q.question.id for q in queries if q.phrasing == "course"]
    if questions != [q.question.id for q in queries if q.phrasing == "ticket"]:
        raise ValueError("each question needs its course and ticket phrasing, in one order")
    pairs = [(f"{s} course", f"{s} ticket") for s in dense.ranks]
    family = paired_family(by_phrasing(dense.ranks, queries), pairs, STRATEGY_KS, questions)
    view = family.view(columns=PAIRED).rename(
        columns={"a − b by question": "course − ticket by question"}
    )
    return Table(
        view.set_axis(pd.Index([s for s in dense.ranks for _ in STRATEGY_KS], name="strategy")),
        caption=f"Course − ticket wording in Recall@k, by question ({len(questions)} questions, "
        f"one query in each wording); questions: won/lost by the course wording; {SIGN_TEST}",
    )


def index_cost_table(cold: Timing, backend: str) -> Table:
    """What indexing costs per chunk, single-threaded, beside the chapter's figure."""
    frame = pd.DataFrame(
        [
            [f"{cold.ms_per_text:.1f}", cold.computed, backend],
            [f"{chapter.INDEX_MS_PER_CHUNK:.1f}", "–", "–"],
        ],
        columns=["ms per chunk", "chunks timed", "backend"],
        index=pd.Index(["here, strategy E", "the chapter"], name="index time"),
    )
    return Table(
        frame,
        caption="Model time to embed a chunk, single-threaded; here: a sample of E's chunks "
        "with the cache bypassed",
    )


def baseline_table(ranks: Ranks, queries: Sequence[Query], chunks: int) -> Table:
    """The chapter's dense R@1 and MRR beside strategy E's (:func:`baselines.side_by_side`)."""
    return Table(
        baselines.side_by_side(ranks, queries, chunks),
        caption=f"Dense retrieval, R@1 and MRR over queries; 95 % intervals by question "
        f"({len({q.question.id for q in queries})} questions, two phrasings each); chunks: "
        "how many compete per query",
    )


def rescue_table(destroyed: Destroyed, quoted_cut: Mapping[str, Sequence[str]]) -> Table:
    """Per strategy with an overlap: the needles its twin destroys, those the overlap rescues
    (notebook 02's count) and those whole in an embedded text only (``quoted_cut``)."""
    rescued = rescued_by_overlap(destroyed)
    frame = pd.DataFrame(
        {
            "twin": [overlap.WITHOUT[s] for s in quoted_cut],
            "twin destroys": [destroyed.count(overlap.WITHOUT[s]) for s in quoted_cut],
            "rescued": [len(rescued[s]) for s in quoted_cut],
            "quoted cut": [len(cut) for cut in quoted_cut.values()],
            "rescued questions": [", ".join(rescued[s]) or "none" for s in quoted_cut],
        },
        index=pd.Index(list(quoted_cut), name="strategy"),
    )
    return Table(
        frame,
        caption=f"Needles (questions, of {destroyed.of}): twin: the same cuts without the "
        "overlap; rescued: the twin destroys them and the overlap holds them whole; quoted "
        "cut: whole in an embedded text only, so a hit reaches the prompt cut in two",
        shorten={"rescued questions": 32},
    )


def quoted_table(ranks: Mapping[str, Mapping[str, Ranks]]) -> Table:
    """Recall@k on the embedded text against the quoted content, per overlapping strategy."""
    n = len(next(iter(next(iter(ranks.values())).values())))
    return Table(
        overlap.quoted_table(ranks).reset_index(level="k"),
        caption=f"Dense retrieval, Recall@k over {n} queries: the needle whole in the chunk's "
        "embedded text (the hit counted so far) or in its quoted content (what the prompt and "
        "the citation get); found, quoted cut: queries hit only in the first sense",
    )


def pull_table(pulls: Sequence[overlap.Pull]) -> Table:
    """Cosine of each chunk to its predecessor's vector, with and without the overlap."""
    return Table(
        overlap.pull_table(pulls),
        caption="Cosine of a chunk's vector to its predecessor's (the overlap-free twin's), "
        "mean over chunks; increase: mean per document, 95 % t-interval over "
        f"{len({d for p in pulls for d in p.documents})} documents",
    )
