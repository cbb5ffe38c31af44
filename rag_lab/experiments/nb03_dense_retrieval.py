"""Notebook 03: the six chunkings under dense retrieval, beside the chapter's claims.

The measures are :func:`rag_lab.evaluation.retrieval.strategies`'s (a
:class:`~rag_lab.evaluation.retrieval.Strategies` record); this module embeds the chunkings,
lays the record out in tables that fit a page (its figure is
:func:`rag_lab.evaluation.figures.strategies_figure`) and adds the comparisons only this
notebook shows: the overlap on ranking alone, the ticket wording, what the overlap rescues.
The notebook's Markdown says how to read them; its claims are worded by
:mod:`rag_lab.claims.render`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.evaluation import baselines, chapter, claims, overlap
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.paired import paired_table as paired_family
from rag_lab.evaluation.recall import fmt_interval
from rag_lab.evaluation.retrieval import STRATEGY_KS, Strategies, by_phrasing
from rag_lab.experiments.nb02_chunking import rescued_by_overlap
from rag_lab.experiments.present import Table
from rag_lab.metrics import Ranks
from rag_lab.models.encoder import Timing
from rag_lab.questions import Query

HEADLINE = ("E>A@R20", "E>C@R20", "F<E@R20", "B=A@R20")
"""The claims this notebook opens with: the chapter's recall claims on its central table."""

PAIRED = ("k", "a − b by question", "questions", "p")
"""The columns of a paired comparison this notebook adds: the difference by question with its
interval, the questions won and lost, their sign test."""


def index_all(lab: Lab) -> Table:
    """Embed the six chunkings (from the cache where it has them): per strategy, its chunks,
    those embedded on this run and those read from the cache."""
    rows = []
    for name, chunks in lab.chunks_by.items():
        lab.index(name)
        fresh = lab.encoder.last.computed if hasattr(lab.encoder, "last") else len(chunks)
        rows.append(
            {
                "strategy": name,
                "chunks": len(chunks),
                "embedded now": fresh,
                "from the cache": len(chunks) - fresh,
            }
        )
    return Table(
        pd.DataFrame(rows).set_index("strategy"),
        caption="The chunkings indexed: chunks embedded on this run, and read from the cache",
    )


def entries(dense: Strategies) -> list[Entry]:
    """The chapter's chunking claims on the lab's corpus: this notebook's part of the ledger."""
    return claims.strategy_entries(dense, "03", "d2l", sections=dense.sections)


def recall_tables(dense: Strategies) -> tuple[Table, Table]:
    """Recall@k of each strategy with the design's interval, and beside it what the
    chapter's table shows: its per-query interval at R@20, needles no chunk holds."""
    ks = dense.recall.ks
    n, questions = dense.recall.rows[0].n, len(set(dense.clusters))
    view = dense.recall.view(intervals="by question")
    recall = Table(
        view[[f"R@{k}" for k in ks] + ["MRR"]],
        caption=f"Recall@k over {n} queries, 95 % interval with the {questions} questions as "
        "the sample",
    )
    per_query = dense.recall.view(intervals="per query")
    misses = pd.DataFrame(
        {
            "R@20 per query": per_query["R@20"],
            "queries missed": view["no hit"],
            "questions destroyed": [dense.destroyed.count(s) for s in view.index]
            if dense.destroyed is not None
            else "–",
            "chapter R@20": [
                fmt_interval(chapter.WILSON_R20[s]) if s in chapter.WILSON_R20 else "–"
                for s in view.index
            ],
        },
        index=view.index,
    )
    return recall, Table(
        misses,
        caption=f"As the chapter tabulates them: R@20 with Wilson's interval over the {n} "
        "queries; queries no chunk can answer (needle cut); questions whose needle is cut; "
        "chapter R@20: its Wilson interval, where it gives one",
    )


def paired_table(dense: Strategies) -> Table:
    """Every comparison of the family: the difference by question with its interval, the
    question-level test, the chapter's per-query test, the chapter's result."""
    return Table(
        dense.paired.view(chapter.paired_reference),
        caption="a − b in Recall@k; questions: won/lost by a; p: their sign test, unadjusted",
    )


def phrasing_table(dense: Strategies) -> Table:
    """Recall per strategy and phrasing (each phrasing one query per question)."""
    view = dense.by_phrasing.view(intervals="per query").rename_axis("strategy, wording")
    n = int(view["n"].iloc[0])
    return Table(
        view.drop(columns=["n", "no hit"]),
        caption=f"Recall@k per wording, n = {n} queries each, Wilson 95 % interval",
    )


def ranking_table(dense: Strategies, a: str = "B", b: str = "A") -> Table:
    """``a`` against ``b`` on the queries whose needle neither destroys (both rank a chunk
    that holds it): the overlap's effect on ranking alone, without the needles it rescues;
    the difference by question, at the strategies' cutoffs."""
    both = [
        x is not None and y is not None for x, y in zip(dense.ranks[a], dense.ranks[b], strict=True)
    ]
    kept = {s: [r for r, keep in zip(dense.ranks[s], both, strict=True) if keep] for s in (a, b)}
    clusters = [c for c, keep in zip(dense.clusters, both, strict=True) if keep]
    view = paired_family(kept, [(a, b)], STRATEGY_KS, clusters).view(columns=PAIRED)
    view.index = pd.Index([f"{a} vs {b}"] * len(view), name="pair")
    return Table(
        view,
        caption=f"{a} − {b} in Recall@k on the {sum(both)} queries ({len(set(clusters))} "
        f"questions) whose needle neither destroys; questions: won/lost by {a}; p: their "
        "sign test, unadjusted",
    )


def wording_table(dense: Strategies, queries: Sequence[Query]) -> Table:
    """Course wording against ticket wording, per strategy, paired by question (each
    question asked once in each wording), at the strategies' cutoffs."""
    questions = [q.question.id for q in queries if q.phrasing == "course"]
    if questions != [q.question.id for q in queries if q.phrasing == "ticket"]:
        raise ValueError("each question needs its course and ticket phrasing, in one order")
    strategies = list(dense.ranks)
    pairs = [(f"{s} course", f"{s} ticket") for s in strategies]
    view = paired_family(by_phrasing(dense.ranks, queries), pairs, STRATEGY_KS, questions).view(
        columns=PAIRED
    )
    view.index = pd.Index([s for s in strategies for _ in STRATEGY_KS], name="strategy")
    return Table(
        view.rename(columns={"a − b by question": "course − ticket by question"}),
        caption=f"Course − ticket wording in Recall@k, by question ({len(questions)} questions, "
        "one query in each wording); questions: won/lost by the course wording; p: their sign "
        "test, unadjusted",
    )


def index_cost_table(cold: Timing, backend: str) -> Table:
    """What indexing costs per chunk, single-threaded, beside the chapter's figure."""
    frame = pd.DataFrame(
        {
            "ms per chunk": [f"{cold.ms_per_text:.1f}", f"{chapter.INDEX_MS_PER_CHUNK:.1f}"],
            "chunks timed": [cold.computed, "–"],
            "backend": [backend, "–"],
        },
        index=pd.Index(["here, strategy E", "the chapter"], name="index time"),
    )
    return Table(
        frame,
        caption="Model time to embed a chunk, single-threaded; here: a sample of E's chunks "
        "with the cache bypassed",
    )


def baseline_table(ranks: Ranks, queries: Sequence[Query], chunks: int) -> Table:
    """The chapter's dense R@1 and MRR beside strategy E's, overall, by phrasing and by
    needle length (:func:`rag_lab.evaluation.baselines.side_by_side`)."""
    questions = len({q.question.id for q in queries})
    return Table(
        baselines.side_by_side(ranks, queries, chunks),
        caption=f"Dense retrieval, R@1 and MRR over queries; 95 % intervals by question "
        f"({questions} questions, two phrasings each); chunks: how many compete per query",
    )


def rescue_table(destroyed: Destroyed, quoted_cut: Mapping[str, Sequence[str]]) -> Table:
    """Per strategy with an overlap (the keys of ``quoted_cut``): its twin without the
    overlap, the needles the twin destroys, those the overlap rescues
    (:func:`rag_lab.experiments.nb02_chunking.rescued_by_overlap`, notebook 02's count from
    the same record), and those whole in an embedded text only, which a hit brings to the
    prompt cut (``quoted_cut``: :func:`rag_lab.evaluation.overlap.rescued_cut`)."""
    rescued = rescued_by_overlap(destroyed)
    rows = [
        {
            "strategy": s,
            "twin": overlap.WITHOUT[s],
            "twin destroys": destroyed.count(overlap.WITHOUT[s]),
            "rescued": len(rescued[s]),
            "quoted cut": len(cut),
            "rescued questions": ", ".join(rescued[s]) or "none",
        }
        for s, cut in quoted_cut.items()
    ]
    return Table(
        pd.DataFrame(rows).set_index("strategy"),
        caption=f"Needles (questions, of {destroyed.of}): twin: the same cuts without the "
        "overlap; rescued: the twin destroys them and the overlap holds them whole; quoted "
        "cut: whole in an embedded text only, so a hit reaches the prompt cut in two",
        shorten={"rescued questions": 32},
    )


def quoted_table(ranks: Mapping[str, Mapping[str, Ranks]]) -> Table:
    """Recall@k on the embedded text against the quoted content, per overlapping strategy
    (:func:`rag_lab.evaluation.overlap.quoted_table`), rates to three places."""
    frame = overlap.quoted_table(ranks).reset_index(level="k")
    for column in ("R@k embedded", "R@k quoted"):
        frame[column] = frame[column].map("{:.3f}".format)
    n = len(next(iter(next(iter(ranks.values())).values())))
    return Table(
        frame,
        caption=f"Dense retrieval, Recall@k over {n} queries: the needle whole in the chunk's "
        "embedded text (the hit counted so far) or in its quoted content (what the prompt and "
        "the citation get); found, quoted cut: queries hit only in the first sense",
    )


def pull_table(pulls: Sequence[overlap.Pull]) -> Table:
    """Cosine of each chunk to its predecessor's vector, with and without the overlap."""
    frame = overlap.pull_table(pulls)
    for column in ("cos without", "cos with"):
        frame[column] = frame[column].map("{:.3f}".format)
    documents = len({d for p in pulls for d in p.documents})
    return Table(
        frame,
        caption="Cosine of a chunk's vector to its predecessor's (the overlap-free twin's), "
        "mean over chunks; increase: mean per document, 95 % t-interval over "
        f"{documents} documents",
    )
