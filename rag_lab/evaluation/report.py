"""An evaluation of a corpus and its questions, and the report ``rag-lab evaluate`` writes.

:func:`evaluate` runs the suites on a corpus with needle questions (chunking, dense retrieval
over the six chunkings, dense / BM25 / hybrid on strategy E, the refusal gate when there are
negatives, a cutoff calibrated on unanswerable twins whether or not there are);
:func:`evaluate_spans` runs the span suite on questions answered by excerpts (Chroma's format).
Both return an :class:`Evaluation`: the records, and where they came from.

What a report shows of a record is declared once, by the record's type (:func:`section`):
its tables with their notes, its figures, the chapter's claims judged on it, and which of its
tables the terminal prints. Changing one table of the report is changing that one function.
:func:`write` renders every section to ``report.md``, the records to ``report.json`` and the
figures to ``figures/``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import singledispatch
from pathlib import Path
from typing import Any

import pandas as pd

from rag_lab import __version__, gate, stats
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, claims, deploy, figures, ledger, plots, power, spans
from rag_lab.evaluation import chunking as chunking_suite
from rag_lab.evaluation import refusal as refusal_suite
from rag_lab.evaluation import retrieval as retrieval_suite
from rag_lab.evaluation import served as served_suite
from rag_lab.evaluation import twins as twins_suite
from rag_lab.evaluation.chunking import Chunking
from rag_lab.evaluation.deploy import Deployment
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, Ledger
from rag_lab.evaluation.power import Power
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.render import markdown_table
from rag_lab.evaluation.retrieval import Strategies, Systems
from rag_lab.evaluation.served import Served
from rag_lab.evaluation.spans import SpanEvaluation
from rag_lab.evaluation.twins import Calibration
from rag_lab.progress import bar
from rag_lab.questions import QuestionSet
from rag_lab.search import TextEncoder
from rag_lab.spans import SpanQuestion

GATE_STRATEGY = "E"
"""The chunking the systems and the gate are measured on: the application's."""


@dataclass(frozen=True)
class GateSkipped:
    """The refusal gate (or its twin calibration) was not measured, and why."""

    reason: str
    key: str = "gate"
    heading: str = "Distances and the refusal gate on strategy E (notebook 06)"


NO_GATE = GateSkipped(
    "no negatives in the question file, so the refusal gate (notebook 06) was not measured: "
    "add questions the corpus cannot answer under negatives to measure it"
)
TOO_FEW_FOR_TWINS = GateSkipped(
    "fewer than 2 questions, so no cutoff was calibrated on unanswerable twins: it is chosen "
    "on one half of the questions and scored on the other",
    "twins",
    "A cutoff calibrated on unanswerable twins, strategy E (notebook 06)",
)


@dataclass(frozen=True)
class Evaluation:
    """The records of one evaluation, in report order, and what they were measured on."""

    title: str
    corpus: dict[str, Any]
    """Counts of what was evaluated: documents, characters, questions…"""
    encoder: dict[str, Any]
    """The encoder's fingerprint fields and key."""
    results: tuple[Any, ...]
    kind: str = "needles"
    """``needles`` (questions with a quoted answer) or ``spans`` (excerpts by offsets)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further plain values for ``report.json`` (query ids, BM25's tokenizer)."""

    def result(self, kind: type) -> Any:
        """The record of type ``kind``, or None."""
        return next((r for r in self.results if isinstance(r, kind)), None)

    @property
    def intro(self) -> str:
        c, fp = self.corpus, self.encoder
        what = (
            f"{c['questions']} questions answered by {c['excerpts']} excerpts (Chroma's format)"
            if self.kind == "spans"
            else f"{c['questions']} questions asked in two phrasings ({c['queries']} queries) "
            f"and {c['negatives']} negatives ({c['uncovered negatives']} uncovered, "
            f"{c['offtopic negatives']} off-topic)"
        )
        return (
            f"{c['documents']} documents ({c['characters']:,} characters); {what}. "
            f"Encoder {fp['name']}, fingerprint {fp['key']}; rag_lab {__version__}."
        )

    def sections(self) -> list[Section]:
        return [section(r, self.title) for r in self.results]

    def headline(self) -> list[tuple[str, pd.DataFrame]]:
        """The tables the terminal prints, in order."""
        return [(t.title, t.frame) for s in self.sections() for t in s.tables if t.headline]

    def notes(self) -> list[str]:
        """What the terminal should say beside the tables (a part not measured)."""
        return [r.reason for r in self.results if isinstance(r, GateSkipped)]

    def to_json(self) -> dict[str, Any]:
        out = {
            "rag_lab": __version__,
            "kind": self.kind,
            "title": self.title,
            "encoder": self.encoder,
            "corpus": self.corpus,
            **self.extra,
        }
        for s, r in zip(self.sections(), self.results, strict=True):
            out[s.key] = None if isinstance(r, GateSkipped) else r.to_json()
            if isinstance(r, GateSkipped):
                out[f"{s.key} skipped"] = r.reason
        out["claims"] = [e.to_json() for e in self.claims()]
        return out

    def claims(self) -> list[Entry]:
        """The chapter's claims judged on this corpus: its claims ledger."""
        return [e for s in self.sections() for e in s.claims]


# --- sections, by record type --------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    title: str
    frame: pd.DataFrame
    note: str = ""
    headline: bool = False
    """Printed on the terminal by ``rag-lab evaluate``."""


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
            Table("chunk sizes", r.sizes.table),
            Table(
                "destroyed answers",
                r.destroyed.view(),
                "Needles that lie whole in no chunk: no retriever can find them.",
            ),
            Table("word-pieces", r.pieces.view()),
        ),
        {
            "chunk_sizes": lambda: figures.size_figure(r.sizes),
            "chunk_word_pieces": lambda: figures.window_figure(r.pieces),
        },
        tuple(claims.chunking_entries(r, "02", benchmark)),
    )


_PAIRED_NOTE = (
    "Wins and losses of a over b, exact sign test: per query (`here`, the chapter's test) "
    "and per question (both phrasings scored together), the latter Holm-adjusted over "
    "the table; the verdict reads the adjusted question-level test; the chapter's result "
    "where it has one."
)


@section.register
def _(r: Strategies, benchmark: str) -> Section:
    return Section(
        "dense by strategy",
        "Dense retrieval over six chunkings (notebook 03)",
        (
            Table(
                "dense recall by strategy",
                r.recall_view(),
                "Recall@k with Wilson 95 % intervals per query, and 95 % cluster-bootstrap "
                "intervals per question (10,000 resamples, seed 0); MRR; queries never hit.",
                headline=True,
            ),
            Table(
                "paired tests between strategies",
                r.paired.view(chapter.paired_reference),
                _PAIRED_NOTE,
            ),
            Table("recall by phrasing", r.by_phrasing.view()),
        ),
        {"dense_recall_by_strategy": lambda: figures.strategies_figure(r.ranks, r.clusters)},
        tuple(claims.strategy_entries(r, "03", benchmark, sections=r.sections)),
    )


@section.register
def _(r: Systems, benchmark: str) -> Section:
    return Section(
        "systems",
        f"Dense, BM25 and hybrid on strategy {r.strategy} (notebook 04)",
        (
            Table("dense, BM25 and hybrid", r.recall.view(), headline=True),
            *(
                Table(f"dense and BM25 at R@{k}", r.two_by_two(k), "Rows: dense; columns: BM25.")
                for k in retrieval_suite.TWO_BY_TWO_KS
            ),
            Table(
                "paired tests between systems",
                r.paired.view(chapter.paired_reference),
                _PAIRED_NOTE,
            ),
        ),
        {
            "dense_bm25_hybrid_recall": lambda: figures.systems_figure(
                r.ranks, r.strategy, r.clusters
            )
        },
        tuple(claims.system_entries(r, "04", benchmark)),
    )


@section.register
def _(r: Refusal, benchmark: str) -> Section:
    c = r.cheapest
    return Section(
        "gate",
        f"Distances and the refusal gate on strategy {r.strategy} (notebook 06)",
        (
            Table(
                "distances",
                r.overlap,
                "The worst distance of an answerable query to its needle's chunk against the "
                "best distance of a negative to any chunk: where a cutoff can and cannot "
                "separate them.",
            ),
            Table(
                "gate",
                r.at_chapter,
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
        tuple(claims.refusal_entries(r, "06", benchmark)),
    )


@section.register
def _(r: Calibration, benchmark: str) -> Section:
    return Section(
        "twins",
        f"A cutoff calibrated on unanswerable twins, strategy {r.strategy} (notebook 06)",
        (
            Table(
                "twin-calibrated cutoff",
                twins_suite.held_out_view(r),
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
            Table("destroyed answers", r.destroyed),
            Table("dense recall by strategy", r.recall_view(), headline=True),
            Table(
                "paired tests between strategies",
                r.strategies.paired.view(chapter.paired_reference),
            ),
            Table("Chroma's span metrics", spans.span_view(r.scores)),
            Table(f"dense, BM25 and hybrid on {r.best}", r.systems.recall.view(), headline=True),
            Table("paired tests between systems", r.systems.paired.view(chapter.paired_reference)),
        ),
        {
            "dense_recall_by_strategy": lambda: figures.recall_curve_figure(
                r.strategies.ranks, "dense", hit="questions with every excerpt"
            )
        },
        tuple(
            claims.strategy_entries(r.strategies, "10", benchmark, sections=r.sections)
            + claims.system_entries(r.systems, "10", benchmark)
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
        (Table("deployed configuration", frame, note),),
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
        (Table("the index, asked", frame, note, headline=True),),
    )


@section.register
def _(r: Power, benchmark: str) -> Section:
    note = (
        f"The smallest difference in Recall@k a two-sided question-level test at α = "
        f"{stats.ALPHA:g} detects with {power.POWER:.0%} power on these {r.questions} "
        f"questions, δ(n) = (t(1 − α/2, n+1) + t(power, n+1)) · σ / √(n+2), and the questions "
        f"needed for ±{r.target:.2f}; σ is the per-question spread of the paired differences "
        "observed here between chunkings (median over the chapter's pairs)."
    )
    return Section(
        "power",
        "How many questions you need",
        (Table("detectable difference", r.view(), note, headline=True),),
    )


# --- running the suites --------------------------------------------------------------------


def evaluate(
    docs: Sequence[Document],
    qset: QuestionSet,
    encoder: TextEncoder,
    *,
    title: str = "corpus",
    tokenizer: str = "ascii",
    progress: bool | None = None,
    strategy: str = GATE_STRATEGY,
    cutoff: float = gate.CUTOFF,
    questions_file: str | os.PathLike | None = None,
) -> Evaluation:
    """Chunking, dense retrieval, dense / BM25 / hybrid on E, the gate if there are
    negatives, the twin-calibrated cutoff (:mod:`rag_lab.evaluation.twins`), which needs
    none, the deployed configuration (dense on ``strategy``, the gate at ``cutoff``) per
    query, and the power of the question file. ``tokenizer`` is BM25's (the chapter's
    ``"ascii"``, or ``"unicode"``); ``questions_file`` is hashed into the stamps."""
    lab = Lab.of(docs, qset, encoder, tokenizer=tokenizer)
    with bar(4, "evaluate", "stage", show=progress) as stages:
        stages.update(0, "chunking")
        chunks = chunking_suite.measure(lab.chunks_by, qset.questions)
        stages.update(1, "dense retrieval over six chunkings")
        dense = retrieval_suite.strategies(lab, chunks.destroyed)
        stages.update(1, "dense, BM25 and hybrid")
        systems = retrieval_suite.systems(lab, GATE_STRATEGY)
        stages.update(1, "gate sweep and twins")
        gated = refusal_suite.refusal(lab, GATE_STRATEGY) if qset.negatives else NO_GATE
        calibrated = (
            twins_suite.calibration(lab, strategy)
            if len(qset.questions) >= 2
            else TOO_FEW_FOR_TWINS
        )
        stages.update(1)
    deployed = deploy.measure(lab, strategy, cutoff)
    powered = power.power(dense.ranks, dense.clusters, deployed.ks)
    corpus = _needle_counts(docs, qset, len(lab.queries))
    stamps = deploy.stamps(
        docs,
        deploy.questions_sha256(questions_file, qset),
        strategy,
        encoder,
        cutoff,
        **{"bm25 tokenizer": tokenizer},
    )
    extra = {"queries": [q.id for q in lab.queries], "bm25 tokenizer": tokenizer, "stamps": stamps}
    results = (chunks, dense, systems, gated, calibrated, deployed, powered)
    return Evaluation(title, corpus, _encoder(encoder), results, extra=extra)


def _needle_counts(docs: Sequence[Document], qset: QuestionSet, queries: int) -> dict[str, int]:
    """What a needle evaluation was measured on: documents, characters, questions, queries,
    negatives by kind (:attr:`Evaluation.corpus`)."""
    kinds = {k: sum(n.kind == k for n in qset.negatives) for k in ("uncovered", "offtopic")}
    return {
        "documents": len(docs),
        "characters": sum(len(d.text) for d in docs),
        "questions": len(qset.questions),
        "queries": queries,
        "negatives": len(qset.negatives),
        **{f"{k} negatives": n for k, n in kinds.items()},
    }


def evaluate_index(
    docs: Sequence[Document],
    qset: QuestionSet,
    retriever: Any,
    *,
    index: str,
    failed: Sequence[str],
    strategy: str,
    title: str = "index",
    cutoff: float = gate.CUTOFF,
    questions_file: str | os.PathLike | None = None,
) -> Evaluation:
    """The question file asked of a built index (:mod:`rag_lab.evaluation.served`): its
    Recall@k and MRR, and the deployed configuration per query, stamped with the corpus,
    the question file, the indexer's chunker, the encoder, the cutoff and the search, so
    that ``--baseline`` pairs two deploys. ``docs``, the corpus the index was built from,
    validate the questions and stamp the corpus; nothing of them is chunked or embedded.
    ``strategy``: the chunking the indexer used, for the stamps."""
    served, deployed = served_suite.measure(
        retriever, qset, index=index, failed=failed, strategy=strategy, cutoff=cutoff
    )
    encoder = retriever.encoder
    corpus = _needle_counts(docs, qset, len(served.queries))
    stamps = deploy.stamps(
        docs,
        deploy.questions_sha256(questions_file, qset),
        strategy,
        encoder,
        cutoff,
        search=served.search,
    )
    extra = {"queries": list(served.queries), "stamps": stamps}
    return Evaluation(title, corpus, _encoder(encoder), (served, deployed), extra=extra)


def evaluate_spans(
    docs: Sequence[Document],
    questions: Sequence[SpanQuestion],
    encoder: TextEncoder,
    *,
    title: str = "corpus",
    strategy: str = GATE_STRATEGY,
    cutoff: float = gate.CUTOFF,
    questions_file: str | os.PathLike | None = None,
) -> Evaluation:
    """The span suite on ``docs`` (its six chunkings; BM25 with the chapter's tokenizer),
    the deployed configuration per question and the power of the question file."""
    bench = spans.bench_of(docs, questions, encoder, sweep=False)
    measured = spans.measure(bench)
    deployed = deploy.measure_spans(bench, strategy, cutoff)
    powered = power.power(measured.strategies.ranks, measured.strategies.clusters, deployed.ks)
    corpus = {
        "documents": len(docs),
        "characters": sum(len(d.text) for d in docs),
        "questions": measured.questions,
        "excerpts": measured.excerpts,
    }
    sha = deploy.questions_sha256(questions_file) if questions_file else _sha_of(questions)
    stamps = deploy.stamps(docs, sha, strategy, encoder, cutoff)
    extra = {"questions": [q.id for q in questions], "stamps": stamps}
    results = (measured, deployed, powered)
    return Evaluation(title, corpus, _encoder(encoder), results, kind="spans", extra=extra)


def _sha_of(questions: Sequence[SpanQuestion]) -> str:
    import hashlib

    return hashlib.sha256(repr(list(questions)).encode("utf-8")).hexdigest()


def _encoder(encoder: TextEncoder) -> dict[str, Any]:
    fp = encoder.fingerprint
    return {**fp.fields(), "key": fp.key}


# --- writing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    """The files a report is: its Markdown, its JSON and its figures."""

    markdown: Path
    json: Path
    claims: Path
    """The claims ledger of the corpus (:mod:`rag_lab.evaluation.ledger`)."""
    figures: tuple[Path, ...]


def write(evaluation: Evaluation, out: str | os.PathLike) -> Written:
    """Write ``report.md``, ``report.json`` and ``figures/*.png`` under ``out``."""
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    drawn = []
    for s in evaluation.sections():
        for name, draw in s.figures.items():
            fig = draw()
            drawn.append(plots.save(fig, name, folder=out / "figures"))
            plt.close(fig)
    md = out / "report.md"
    md.write_text(markdown(evaluation), encoding="utf-8")
    js = out / "report.json"
    js.write_text(json.dumps(evaluation.to_json(), indent=1, ensure_ascii=False) + "\n", "utf-8")
    claims_file = Ledger(evaluation.claims()).write(out / "claims.json")
    return Written(md, js, claims_file, tuple(drawn))


RULE_NOTE = (
    "Each claim is declared in `rag_lab/claims/chapter.yaml` and judged by one rule "
    "(`rag_lab/claims/judge.py`): a directional claim reproduces when the question-level sign "
    "test, Holm-adjusted over the chapter's confirmatory claims, is significant its way, is "
    "contradicted when significant the other way, excludes the chapter's effect when the 95 % "
    "interval of the difference by question does, and is inconclusive otherwise; a "
    "no-difference claim reproduces only when the interval lies within its declared margin, "
    "which its verdict names."
)


def markdown(ev: Evaluation) -> str:
    """The report as Markdown: a section per record, then the claims judged on this corpus."""
    lines = [f"# rag_lab evaluation: {ev.title}", "", ev.intro, ""]
    for n, s in enumerate(ev.sections(), 1):
        lines += [f"## {n} · {s.heading}", ""]
        if s.skipped:
            lines += [f"Not measured: {s.skipped}.", ""]
            continue
        for t in s.tables:
            lines += [f"### {t.title[0].upper()}{t.title[1:]}", ""]
            if t.note:
                lines += [t.note, ""]
            lines += [markdown_table(t.frame), ""]
        lines += [f"![{f}](figures/{f}.png)" for f in s.figures] + [""]
    judged = ev.claims()
    if judged:
        lines += [
            "## The chapter's claims on this corpus",
            "",
            RULE_NOTE,
            "",
            ledger.markdown(judged),
            "",
        ]
    return "\n".join(lines)


def run(
    corpus: str | os.PathLike | None,
    questions: str | os.PathLike,
    out: str | os.PathLike,
    *,
    encoder: TextEncoder | None = None,
    progress: bool | None = None,
    strategy: str = GATE_STRATEGY,
    cutoff: float = gate.CUTOFF,
) -> tuple[Evaluation, Written]:
    """Load, evaluate, write. ``corpus=None`` is the lab's own verified corpus; ``strategy``
    and ``cutoff`` are the deployed configuration the regression gate compares.

    A folder is read with :func:`rag_lab.sources.folder.load_folder` (every file must read); the
    question file is validated against it with any counts. A question file in Chroma's CSV
    format (detected by content) gets the span suite, with the files read as plain text.
    Raises :class:`~rag_lab.sources.folder.IngestError`, :class:`~rag_lab.sources.d2l.CorpusError`
    or :class:`~rag_lab.questions.QuestionsError`, each naming the file and the problem.
    """
    from rag_lab.questions import QuestionsError, Violation, load_questions
    from rag_lab.sources.chroma.questions import load_chroma_questions, questions_kind
    from rag_lab.sources.d2l import load_corpus
    from rag_lab.sources.folder import load_folder

    docs = load_corpus() if corpus is None else load_folder(corpus)
    if encoder is None:
        from rag_lab.models.encoder import Encoder

        encoder = Encoder()
    if questions_kind(questions) == "chroma-csv":
        if corpus is None:
            need = "Chroma's question format needs the corpus it points into (--corpus DIR)"
            raise QuestionsError(questions, [Violation(None, None, None, need)])
        # Chroma's offsets count every character: read the files as plain text (no headings).
        docs = [dataclasses.replace(d, format="plain") for d in docs]
        span_questions = load_chroma_questions(questions, docs)
        name = Path(corpus).resolve().name
        evaluation = evaluate_spans(
            docs,
            span_questions,
            encoder,
            title=name,
            strategy=strategy,
            cutoff=cutoff,
            questions_file=questions,
        )
        return evaluation, write(evaluation, out)
    qset = load_questions(questions, docs, expected=None)
    name = Path(corpus).resolve().name if corpus is not None else "the lab's corpus"
    # The chapter's ASCII tokenizer reproduces the chapter; any other corpus gets Unicode words.
    tokenizer = "ascii" if corpus is None else "unicode"
    evaluation = evaluate(
        docs,
        qset,
        encoder,
        title=name,
        tokenizer=tokenizer,
        progress=progress,
        strategy=strategy,
        cutoff=cutoff,
        questions_file=questions,
    )
    return evaluation, write(evaluation, out)
