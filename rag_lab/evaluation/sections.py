"""What a report shows of each record, declared once by the record's type.

:func:`section` maps a record of :mod:`rag_lab.evaluation` (a :class:`Chunking`, the
strategies, the systems, the refusal gate, the twin-calibrated cutoff, the span suite, the
deployment, the index as served, the power) to its :class:`Section`: its tables with their
notes, its figures, the chapter's claims judged on it, and which of its tables the terminal
prints. Changing one table of the report is changing that one function. A part that was not
measured is a :class:`GateSkipped`, whose section says why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any

import pandas as pd

from rag_lab import gate, stats
from rag_lab.chunking import STRATEGIES
from rag_lab.evaluation import chapter, figures, hypotheses, power, recall_curves, spans
from rag_lab.evaluation import refusal as refusal_suite
from rag_lab.evaluation import retrieval as retrieval_suite
from rag_lab.evaluation import twins as twins_suite
from rag_lab.evaluation.chunking import Chunking, Destroyed
from rag_lab.evaluation.deploy import Deployment
from rag_lab.evaluation.failures import Failures
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.power import Power
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.render import Table
from rag_lab.evaluation.retrieval import Strategies, Systems
from rag_lab.evaluation.served import Served
from rag_lab.evaluation.spans import SpanEvaluation
from rag_lab.evaluation.twins import Calibration


@dataclass(frozen=True)
class GateSkipped:
    """The refusal gate (or its twin calibration) was not measured, and why."""

    reason: str
    key: str = "gate"
    heading: str = "Distances and the refusal gate on strategy E (notebook 06)"


def _table(frame: pd.DataFrame, caption: str, note: str = "", headline: bool = False) -> Table:
    """A report's table: report.md and the terminal show its whole frame, held to no page."""
    return Table(frame, caption, note=note, headline=headline, page=False)


@dataclass(frozen=True)
class Section:
    key: str
    """The record's key in ``report.json``."""
    heading: str
    tables: tuple[Table, ...] = ()
    figures: dict[str, Callable[[], Any]] = field(default_factory=dict)
    """Figure name → a function drawing it (drawn only when the report is written)."""
    claims: tuple[Entry, ...] = ()
    skipped: str = ""


@singledispatch
def section(result: Any, benchmark: str) -> Section:
    raise TypeError(f"no report section is declared for {type(result).__name__}")


@section.register
def _(r: Chunking, benchmark: str) -> Section:
    return Section(
        "chunking",
        "Chunking (notebook 02)",
        (
            _table(r.sizes.table, "chunk sizes"),
            _table(
                r.destroyed.view(),
                "destroyed answers",
                "Needles that lie whole in no chunk: no retriever can find them.",
            ),
            _table(r.pieces.view(), "word-pieces"),
        ),
        {
            "chunk_sizes": lambda: figures.size_figure(r.sizes),
            "chunk_word_pieces": lambda: figures.window_figure(r.pieces),
        },
        tuple(hypotheses.chunking_entries(r, "02", benchmark)),
    )


_PAIRED_NOTE = (
    "Wins and losses of a over b, exact sign test: per query (`here`, the chapter's test) "
    "and per question (both phrasings scored together), the latter Holm-adjusted over "
    "the table; the verdict reads the adjusted question-level test; the chapter's result "
    "where it has one."
)


def _lost(d: Destroyed | None) -> Mapping[str, tuple]:
    """Per strategy, the questions it destroys (none known: none)."""
    return d.questions if d is not None else {"A": (), "B": ()}


@section.register
def _(r: Strategies, benchmark: str) -> Section:
    return Section(
        "dense by strategy",
        "Dense retrieval over six chunkings (notebook 03)",
        (
            _table(
                r.recall_view(),
                "dense recall by strategy",
                "Recall@k with Wilson 95 % intervals per query, and 95 % Wilson intervals over "
                "questions (clustered_wilson: the questions as the sample); MRR; queries never "
                "hit.",
                headline=True,
            ),
            _table(
                r.paired.view(chapter.paired_reference),
                "paired tests between strategies",
                _PAIRED_NOTE,
            ),
            _table(r.by_phrasing.view(), "recall by phrasing"),
        ),
        {"dense_recall_by_strategy": lambda: figures.strategies_figure(r.ranks, r.clusters)},
        tuple(
            hypotheses.strategy_entries(
                r, "03", benchmark, sections=r.sections, destroyed=_lost(r.destroyed)
            )
        ),
    )


@section.register
def _(r: Systems, benchmark: str) -> Section:
    return Section(
        "systems",
        f"Dense, BM25 and hybrid on strategy {r.strategy} (notebook 04)",
        (
            _table(r.recall.view(), "dense, BM25 and hybrid", headline=True),
            *(
                _table(r.two_by_two(k), f"dense and BM25 at R@{k}", "Rows: dense; columns: BM25.")
                for k in retrieval_suite.TWO_BY_TWO_KS
            ),
            _table(
                r.paired.view(chapter.paired_reference),
                "paired tests between systems",
                _PAIRED_NOTE,
            ),
        ),
        {
            "dense_bm25_hybrid_recall": lambda: figures.systems_figure(
                r.ranks, r.strategy, r.clusters
            )
        },
        tuple(hypotheses.system_entries(r, "04", benchmark)),
    )


@section.register
def _(r: Refusal, benchmark: str) -> Section:
    c = r.cheapest
    return Section(
        "gate",
        f"Distances and the refusal gate on strategy {r.strategy} (notebook 06)",
        (
            _table(
                r.overlap,
                "distances",
                "The worst distance of an answerable query to its needle's chunk against the "
                "best distance of a negative to any chunk: where a cutoff can and cannot "
                "separate them.",
            ),
            _table(
                r.at_chapter,
                "gate",
                f"At most {gate.MAX_KEPT} chunks strictly under the cutoff are kept. Bluffs: "
                f"negatives answered; refused: answerable queries refused. The "
                f"{refusal_suite.cheapest_line(c, r.bluff_cost)}, swept from "
                f"{refusal_suite.SWEEP[0]:.3f} to {refusal_suite.SWEEP[1]:.3f} in steps of "
                f"{refusal_suite.CUTOFF_STEP}.",
                headline=True,
            ),
        ),
        {
            "distance_histograms": lambda: figures.histogram_figure(
                r.distances, r.negative_kinds, r.strategy
            ),
            "bluff_curve": lambda: figures.bluff_figure(
                r.sweep,
                r.answerable,
                r.negatives,
                chosen=r.cheapest_cutoff,
                answerable_questions=len(set(r.clusters)),
            ),
        },
        tuple(hypotheses.refusal_entries(r, "06", benchmark)),
    )


@section.register
def _(r: Calibration, benchmark: str) -> Section:
    return Section(
        "twins",
        f"A cutoff calibrated on unanswerable twins, strategy {r.strategy} (notebook 06)",
        (
            _table(
                twins_suite.held_out_view(r),
                "twin-calibrated cutoff",
                twins_suite.NOTE.format(target=r.target, seed=r.seed, level=r.level)
                + f" {r.line()}: "
                + (", ".join(r.held_out.refused) or "none")
                + ".",
                headline=True,
            ),
        ),
        {"twin_bluff_curve": lambda: twins_suite.curve_figure(r)},
        tuple(twins_suite.entries(r, "06", benchmark)),
    )


@section.register
def _(r: GateSkipped, benchmark: str) -> Section:
    return Section(r.key, r.heading, skipped=r.reason)


@section.register
def _(r: SpanEvaluation, benchmark: str) -> Section:
    return Section(
        "spans",
        "Dense retrieval over six chunkings, excerpts by offsets (notebook 10)",
        (
            _table(r.destroyed, "destroyed answers"),
            _table(r.recall_view(), "dense recall by strategy", headline=True),
            _table(
                r.strategies.paired.view(chapter.paired_reference),
                "paired tests between strategies",
            ),
            _table(spans.span_view(r.scores), "Chroma's span metrics"),
            _table(r.systems.recall.view(), f"dense, BM25 and hybrid on {r.best}", headline=True),
            _table(r.systems.paired.view(chapter.paired_reference), "paired tests between systems"),
        ),
        {
            "dense_recall_by_strategy": lambda: recall_curves.recall_curve_figure(
                r.strategies.ranks, "dense", hit="questions with every excerpt"
            )
        },
        tuple(
            hypotheses.strategy_entries(
                r.strategies, "10", benchmark, sections=r.sections, destroyed=r.lost
            )
            + hypotheses.system_entries(r.systems, "10", benchmark)
        ),
    )


@section.register
def _(r: Deployment, benchmark: str) -> Section:
    row = {
        "strategy": r.strategy,
        "cutoff": f"{r.cutoff:.3f}",
        "queries": len(r.queries),
        "questions": len(r.questions),
        "negatives": len(r.negatives),
        "destroyed": len(r.destroyed),
    }
    note = (
        "What `rag-lab evaluate --baseline OLD/report.json` pairs, question by question: "
        "per query its question, first-hit rank, the chunk it gets first and that chunk's "
        "distance (in report.json, with the run's stamps)."
    )
    frame = pd.DataFrame([row]).set_index("strategy")
    return Section(
        "deployment",
        f"The deployed configuration: dense on {r.strategy}, the gate at {r.cutoff:.3f}",
        (_table(frame, "deployed configuration", note),),
    )


@section.register
def _(r: Served, benchmark: str) -> Section:
    frame = r.view()
    unindexed = (
        f" {len(r.unindexed)} questions' documents are not indexed (failed or never indexed), "
        f"so their queries count as misses: {', '.join(r.unindexed)}."
        if r.unindexed
        else ""
    )
    note = (
        f"The {len(r.queries)} queries of the question file ({len(set(r.clusters))} questions) "
        f"asked of the index at {r.index} ({r.engine}: {r.search}; {r.documents} documents, "
        f"{r.chunks:,} chunks) as `rag-lab ask` asks it, to depth {r.depth}: a hit is a "
        "returned chunk holding the needle whole. Recall@k with Wilson's interval over "
        "questions (clustered), MRR with a bootstrap interval over per-question means; a "
        f"needle ranked past {r.depth} counts as a miss.{unindexed}"
    )
    return Section(
        "served",
        f"The index as built, asked: {r.engine}, {r.search}",
        (_table(frame, "the index, asked", note, headline=True),),
    )


@section.register
def _(r: Failures, benchmark: str) -> Section:
    found = (
        f"Queries whose needle's chunk came within k ({r.retriever} on strategy {r.strategy}), "
        f"and the queries the gate refused: their first chunk not strictly under {r.cutoff:.3f}."
    )
    failed = (
        f"Each query whose needle's chunk is not among the first {r.k} (the chunks the gate "
        "keeps at most) or that the gate refused, and what it got first instead: the chunk, "
        "its cosine distance, its section and the start of its text. `in no chunk`: no chunk "
        "holds the needle whole, so no retriever can find it."
    )
    return Section(
        "failures",
        f"What failed, and what it got instead: {r.retriever} on strategy {r.strategy}",
        (
            _table(r.found_view(), "found within k", found, headline=True),
            _table(r.view(), f"not found within {r.k}, or refused", failed, headline=True),
        ),
    )


@section.register
def _(r: Power, benchmark: str) -> Section:
    between = (
        "between chunkings (median over the chapter's pairs)"
        if all(a in STRATEGIES and b in STRATEGIES for a, b in r.pairs)
        else "between "
        + ", ".join(f"{a} and {b}" for a, b in r.pairs)
        + " on the served chunking (the median over these pairs; the other chunkings are "
        "not embedded without --lab)"
    )
    note = (
        f"The smallest difference in Recall@k a two-sided question-level test at α = "
        f"{stats.ALPHA:g} detects with {power.POWER:.0%} power on these {r.questions} "
        f"questions, δ(n) = (t(1 − α/2, n+1) + t(power, n+1)) · σ / √(n+2), and the questions "
        f"needed for ±{r.target:.2f}; σ is the per-question spread of the paired differences "
        f"observed here {between}."
    )
    return Section(
        "power",
        "How many questions you need",
        (_table(r.view(), "detectable difference", note, headline=True),),
    )
