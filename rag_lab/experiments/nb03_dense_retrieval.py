"""Notebook 03: the six chunkings under dense retrieval, worded against the chapter's claims.

The measures are :func:`rag_lab.evaluation.retrieval.strategies`'s (a
:class:`~rag_lab.evaluation.retrieval.Strategies` record); this module embeds the chunkings
with a line per strategy, lays the record out in tables that fit a page and reads it (its
figure is :func:`rag_lab.evaluation.figures.strategies_figure`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_lab.chunking import STRATEGIES
from rag_lab.evaluation import chapter, claims
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.recall import fmt_interval
from rag_lab.evaluation.retrieval import Strategies
from rag_lab.evaluation.runs import split_by_phrasing
from rag_lab.models.encoder import Timing
from rag_lab.experiments import timing, wording
from rag_lab.experiments.present import Table
from rag_lab.metrics import hits_at
from rag_lab.questions import Query
from rag_lab.stats import paired_difference

HEADLINE = ("E>A@R20", "E>C@R20", "F<E@R20", "B=A@R20")
"""The claims this notebook opens with: the chapter's recall claims on its central table."""


def index_all(lab: Lab) -> list[str]:
    """Embed the six chunkings (from the cache where it has them); one line per strategy."""
    lines = []
    for name, chunks in lab.chunks_by.items():
        lab.index(name)
        fresh = lab.encoder.last.computed if hasattr(lab.encoder, "last") else len(chunks)
        cached = len(chunks) - fresh
        lines.append(f"{name}: {len(chunks)} chunks, {fresh} embedded now, {cached} from the cache")
    return lines


def entries(dense: Strategies) -> list[Entry]:
    """The chapter's chunking claims on the lab's corpus: this notebook's part of the ledger."""
    return claims.strategy_entries(dense, "03", "d2l", sections=dense.sections)


def legend() -> str:
    """The strategies' letters, for the text above a table: ``A blind · B blind + overlap …``."""
    return " · ".join(f"**{name}** {s.label}" for name, s in STRATEGIES.items())


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
        },
        index=view.index,
    )
    return recall, Table(
        misses,
        caption=f"As the chapter tabulates them: R@20 with Wilson's interval over the {n} "
        "queries; queries no chunk can answer (needle cut); questions whose needle is cut",
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


def reading(dense: Strategies, queries: Sequence[Query], strategy: str = "E") -> str:
    """What the tables add to the findings: the intervals, overlap on ranking alone, and
    the ticket wording, each read from an interval by question."""
    return "\n".join(
        [_intervals(dense), _overlap_and_ranking(dense), _ticket_wording(dense, queries, strategy)]
    )


def _intervals(dense: Strategies) -> str:
    a, e = dense.recall["A"], dense.recall["E"]
    lo_a, hi_a = a.recall[20].lo, a.recall[20].hi
    lo_e, hi_e = e.recall[20].lo, e.recall[20].hi
    separate = hi_a < lo_e or hi_e < lo_a
    return (
        f"- **Intervals.** At n = {a.n}, R@20 is [{lo_a:.3f}, {hi_a:.3f}] for A and "
        f"[{lo_e:.3f}, {hi_e:.3f}] for E (the chapter: {fmt_interval(chapter.WILSON_R20['A'])} "
        f"and {fmt_interval(chapter.WILSON_R20['E'])}); here they "
        + (
            "do not overlap."
            if separate
            else "overlap, so the unpaired table cannot tell A and E apart."
        )
        + " With the questions as the sample (both phrasings of a question succeed or "
        f"fail together): {fmt_interval(a.by_question[20])} and "
        f"{fmt_interval(e.by_question[20])}: wider, as the design is."
    )


def _overlap_and_ranking(dense: Strategies) -> str:
    """B vs A, and the same on the queries whose needle survives in both: ranking proper."""
    ranks_a, ranks_b = dense.ranks["A"], dense.ranks["B"]
    clusters = list(dense.clusters)
    both = [a is not None and b is not None for a, b in zip(ranks_a, ranks_b, strict=True)]
    kept = {
        s: [r for r, keep in zip(dense.ranks[s], both, strict=True) if keep] for s in ("A", "B")
    }
    kept_clusters = [c for c, keep in zip(clusters, both, strict=True) if keep]
    whole = [
        paired_difference(hits_at(ranks_b, k), hits_at(ranks_a, k), clusters) for k in (8, 20)
    ]
    ranking = [
        paired_difference(hits_at(kept["B"], k), hits_at(kept["A"], k), kept_clusters)
        for k in (8, 20)
    ]
    rescued = sum(a is None and b is not None for a, b in zip(ranks_a, ranks_b, strict=True))
    zero = all(d.lo <= 0 <= d.hi for d in ranking)
    return (
        f"- **Overlap and ranking.** B − A by question: {whole[0]} at R@8, {whole[1]} at R@20 "
        f"on every query; B holds {rescued} needles that A's cuts destroy. On the "
        f"{sum(both)} queries whose needle survives in both ({len(set(kept_clusters))} "
        f"questions): {ranking[0]} at R@8, {ranking[1]} at R@20 — "
        + (
            "both intervals include zero: what overlap adds here is rescued needles; on "
            "ranking alone this design cannot tell."
            if zero
            else "an interval excludes zero: overlap changes ranking too."
        )
    )


def _ticket_wording(dense: Strategies, queries: Sequence[Query], strategy: str) -> str:
    phrasing = split_by_phrasing(dense.ranks[strategy], queries)
    questions = [q.question.id for q in queries if q.phrasing == "course"]
    if questions != [q.question.id for q in queries if q.phrasing == "ticket"]:
        raise ValueError("each question needs its course and ticket phrasing, in one order")
    d = [
        paired_difference(hits_at(phrasing["course"], k), hits_at(phrasing["ticket"], k), questions)
        for k in (8, 20)
    ]
    zero = all(x.lo <= 0 <= x.hi for x in d)
    return (
        f"- **Ticket wording ({strategy}, {len(questions)} questions).** Course − ticket: "
        f"{d[0]} at R@8, {d[1]} at R@20 — "
        + (
            "both intervals include zero: at this size the wording's cost cannot be told "
            "from none, which is not evidence that there is none."
            if zero
            else "an interval excludes zero: the wording costs recall."
        )
    )


def index_cost(cold: Timing, backend: str) -> str:
    """What indexing costs per chunk, beside the chapter's figure and the machine it ran on."""
    return (
        f"index time: {cold.ms_per_text:.1f} ms per chunk over {cold.computed} chunks of E\n"
        f"  {backend} backend, single-threaded, cache bypassed\n"
        f"  the chapter: {chapter.INDEX_MS_PER_CHUNK:.0f} ms per chunk, single-threaded\n"
        f"  {timing.machine()}"
    )
