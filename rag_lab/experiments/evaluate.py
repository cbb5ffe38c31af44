"""The headline tables of notebooks 02–06 for any corpus and question file (``rag-lab evaluate``).

Everything is computed by the functions the notebooks call, with the same encoder calls in
the same order, so on the lab's corpus and ``data/questions.yaml`` the numbers are the
notebooks' own. What it covers:

- chunking (02): sizes, destroyed answers, word-pieces and the header's share;
- dense retrieval over the six chunkings (03): Recall@k with Wilson intervals, MRR,
  paired sign tests, course against ticket wording;
- dense, BM25 and hybrid on strategy E (04): the same, plus where they disagree;
- the refusal gate on E (06): bluffs, refusals and answers without the needle at no
  cutoff, at 0.525 and 0.675, and the cheapest cutoff when a bluff costs three refusals.

Reranking (05) is left out: it needs a second model.

A question file in Chroma's CSV format (excerpts by offsets, as in notebook 10) is detected by
content and gets notebook 10's headline tables instead (:func:`evaluate_spans`): destroyed
excerpts, span Recall@k of the six chunkings, their paired tests, Chroma's recall, precision
and IoU, and dense, BM25 and hybrid on the best boundary strategy.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rag_lab import __version__, gate
from rag_lab.chunking import chunk_all
from rag_lab.documents import Document
from rag_lab.experiments import nb02_chunking as nb02
from rag_lab.experiments import nb03_dense_retrieval as nb03
from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
from rag_lab.experiments import nb06_distances_and_refusal as nb06
from rag_lab.experiments import nb10_second_benchmark as nb10
from rag_lab.experiments import plots
from rag_lab.experiments.lab import Lab
from rag_lab.experiments.tables import interval_table, question_ids, recall_curve_figure
from rag_lab.metrics import paired_table, summary_table
from rag_lab.progress import bar
from rag_lab.questions import (
    QuestionsError,
    QuestionSet,
    SpanQuestion,
    Violation,
    load_chroma_questions,
    load_questions,
    questions_kind,
)
from rag_lab.search import TextEncoder
from rag_lab.sources.d2l import load_corpus
from rag_lab.sources.folder import load_folder

GATE_STRATEGY = "E"


@dataclass(frozen=True)
class Evaluation:
    """Tables (as shown), figures, computed readings and the numbers behind them."""

    title: str
    intro: str
    tables: dict[str, pd.DataFrame]
    readings: dict[str, str]
    figures: dict[str, Any]
    """Figure name → matplotlib figure (saved as ``figures/<name>.png``)."""
    data: dict[str, Any]
    """Everything as plain JSON values: summaries, per-query ranks, the full gate sweep."""


NO_GATE = (
    "no negatives in the question file, so the refusal gate (notebook 06) was not measured: "
    "add questions the corpus cannot answer under negatives to measure it"
)


def evaluate(
    docs: Sequence[Document],
    qset: QuestionSet,
    encoder: TextEncoder,
    *,
    title: str = "corpus",
    tokenizer: str = "ascii",
    progress: bool | None = None,
) -> Evaluation:
    """Run notebooks 02–04 and the gate sweep of 06 on ``docs`` and ``qset``.

    Every table, figure and reading comes from the function the notebook calls for it.
    ``tokenizer`` is BM25's (the chapter's ``"ascii"``, or ``"unicode"`` for any other
    corpus). ``progress``: a bar over the stages (None: only on a terminal); the encoder
    shows its own bar when it has many texts to embed.
    """
    stages = bar(5, "evaluate", "stage", show=progress)
    lab = Lab(list(docs), qset, encoder, chunk_all(docs), tokenizer=tokenizer)
    queries = lab.queries
    tables: dict[str, pd.DataFrame] = {}
    figures: dict[str, Any] = {}

    stages.note = "chunking"
    chunks_by = lab.chunks_by
    sizes = nb02.size_table(chunks_by)
    destroyed_by = nb02.destroyed_table(chunks_by, qset.questions)
    tokens = nb02.token_table(chunks_by)
    tables |= {
        "chunk sizes": sizes,
        "destroyed answers": destroyed_by,
        "word-pieces": nb02.token_view(tokens),
    }
    figures["chunk_sizes"] = nb02.size_figure(chunks_by)
    figures["chunk_word_pieces"] = nb02.window_figure(chunks_by)
    stages.update()

    stages.note = "embedding six chunkings"
    nb03.index_all(lab)
    stages.update()

    stages.note = "dense retrieval"
    ranks_by = nb03.rank_strategies(lab)
    tables |= {
        "dense recall by strategy": nb03.recall_table(ranks_by, destroyed_by, queries),
        "paired tests between strategies": nb03.paired_view(ranks_by, queries),
        "recall by phrasing": nb03.phrasing_table(ranks_by, queries),
    }
    figures["dense_recall_by_strategy"] = nb03.recall_figure(ranks_by)
    stages.update()

    stages.note = "dense, BM25 and hybrid"
    _, ranks = nb04.rank_systems(lab, GATE_STRATEGY)
    tables |= {
        "dense, BM25 and hybrid": interval_table(ranks, clusters=question_ids(queries)),
        **{f"dense and BM25 at R@{k}": nb04.dense_vs_bm25(ranks, k) for k in nb04.TWO_BY_TWO_KS},
        "paired tests between systems": nb04.paired_view(ranks, queries),
    }
    figures["dense_bm25_hybrid_recall"] = nb04.recall_figure(ranks, GATE_STRATEGY)
    stages.update()

    readings: dict[str, str] = {}
    gate_data = None
    if qset.negatives:  # the gate is measured on questions the corpus cannot answer
        stages.note = "gate sweep"
        gate_data = _gate(lab, queries, qset, tables, figures, readings)
    stages.update()
    stages.close()
    readings = {
        **readings,
        "chunking": nb02.reading(destroyed_by, tokens, sizes, len(qset.questions)),
        "dense retrieval": nb03.reading(ranks_by, queries, GATE_STRATEGY),
        "dense, BM25 and hybrid": nb04.reading(ranks, queries),
    }
    kinds = {k: sum(n.kind == k for n in qset.negatives) for k in ("uncovered", "offtopic")}
    corpus = {
        "documents": len(docs),
        "characters": sum(len(d.text) for d in docs),
        "questions": len(qset.questions),
        "queries": len(queries),
        "negatives": len(qset.negatives),
        **{f"{k} negatives": n for k, n in kinds.items()},
    }
    fp = encoder.fingerprint
    intro = (
        f"{corpus['documents']} documents ({corpus['characters']:,} characters); "
        f"{corpus['questions']} questions asked in two phrasings ({corpus['queries']} queries) "
        f"and {corpus['negatives']} negatives ({kinds['uncovered']} uncovered, "
        f"{kinds['offtopic']} off-topic). Encoder {fp.name}, fingerprint {fp.key}; "
        f"rag_lab {__version__}."
    )
    data = {
        "rag_lab": __version__,
        "encoder": {**fp.fields(), "key": fp.key},
        "corpus": corpus,
        "queries": [q.id for q in queries],
        "bm25 tokenizer": tokenizer,
        "chunking": {
            "sizes": _records(sizes),
            "destroyed": _records(destroyed_by),
            "word-pieces": _records(tokens),
        },
        "dense by strategy": {
            "summary": _records(summary_table(ranks_by)),
            "ranks": ranks_by,
            "paired": _records(paired_table(ranks_by, nb03.PAIRS, nb03.PAIRED_KS)),
            "by phrasing": _records(
                summary_table(nb03.by_phrasing(ranks_by, queries), ks=nb03.PHRASING_KS)
            ),
        },
        "systems on E": {
            "summary": _records(summary_table(ranks)),
            "ranks": ranks,
            "paired": _records(paired_table(ranks, nb04.PAIRS, nb04.PAIRED_KS)),
        },
        "gate": gate_data,
        "readings": readings,
    }
    if gate_data is None:
        data["gate skipped"] = NO_GATE
    return Evaluation(title, intro, tables, readings, figures, data)


def evaluate_spans(
    docs: Sequence[Document],
    questions: Sequence[SpanQuestion],
    encoder: TextEncoder,
    *,
    title: str = "corpus",
) -> Evaluation:
    """Notebook 10's headline tables on ``docs`` and questions answered by excerpts.

    The six chunkings only (the notebook's size sweep is left out); BM25 with the chapter's
    tokenizer, as in the notebook, so on Chroma's corpora the numbers are the notebook's.
    """
    bench = nb10.bench_of(docs, questions, encoder, sweep=False)
    nb10.embed_all(bench)
    destroyed = nb10.destroyed_table(bench)
    ranks_by = nb10.rank_strategies(bench)
    recall = nb10.recall_table(ranks_by, destroyed)
    best = nb10.best_boundary(ranks_by)
    system_ranks = nb10.rank_systems(bench, best)
    tables = {
        "destroyed answers": destroyed,
        "dense recall by strategy": recall,
        "paired tests between strategies": nb10.paired_view(ranks_by, bench.ids),
        "Chroma's span metrics": nb10.span_table(bench, list(ranks_by)),
        "dense, BM25 and hybrid": interval_table(system_ranks),
        "paired tests between systems": nb10.systems_view(system_ranks, bench.ids),
    }
    figures = {
        "dense_recall_by_strategy": recall_curve_figure(
            ranks_by, "dense", hit="questions with every excerpt"
        )
    }
    a, c = destroyed.loc["A"], destroyed.loc["C"]
    readings = {
        "spans": (
            f"Blind cuts destroy {a['excerpts destroyed']} of {a['of excerpts']} excerpts "
            f"({a['questions destroyed']} questions); boundaries {c['excerpts destroyed']}. "
            f"The best boundary strategy by dense R@20 is {best}: "
            f"{recall.loc[best, 'R@20']}; dense, BM25 and hybrid are compared on it."
        )
    }
    fp = encoder.fingerprint
    n_spans = sum(len(q.spans) for q in questions)
    intro = (
        f"{len(docs)} documents ({sum(len(d.text) for d in docs):,} characters); "
        f"{len(questions)} questions answered by {n_spans} excerpts (Chroma's format). "
        f"Encoder {fp.name}, fingerprint {fp.key}; rag_lab {__version__}."
    )
    data = {
        "rag_lab": __version__,
        "kind": "spans",
        "encoder": {**fp.fields(), "key": fp.key},
        "questions": [q.id for q in questions],
        "destroyed": _records(destroyed),
        "dense by strategy": {"summary": _records(summary_table(ranks_by)), "ranks": ranks_by},
        "systems": {"strategy": best, "summary": _records(summary_table(system_ranks))},
        "span metrics": _records(tables["Chroma's span metrics"]),
        "gate": None,
        "readings": readings,
    }
    return Evaluation(title, intro, tables, readings, figures, data)


def _gate(lab, queries, qset, tables, figures, readings) -> dict:
    """Notebook 06's distances and gate sweep: adds their tables, figures and reading."""
    m = nb06.distance_matrices(lab, GATE_STRATEGY)
    dists = nb06.distances(m.answerable, m.relevant, m.negative)
    sweep = gate.sweep(m.answerable, m.relevant, m.negative, nb06.cutoffs())
    cheapest = gate.cheapest_cutoff(sweep, nb06.BLUFF_COST)
    tables |= {
        "distances": nb06.overlap_table(dists, queries, qset.negatives),
        "gate": nb06.bluff_table(m.answerable, m.relevant, m.negative),
    }
    figures["distance_histograms"] = nb06.histogram_figure(dists, qset.negatives, GATE_STRATEGY)
    figures["bluff_curve"] = nb06.bluff_figure(
        sweep, len(queries), len(qset.negatives), chosen=float(cheapest["cutoff"])
    )
    readings["gate"] = (
        f"- **The {nb06.cheapest_line(cheapest, nb06.BLUFF_COST)}**, swept from "
        f"{nb06.SWEEP[0]:.3f} to {nb06.SWEEP[1]:.3f} in steps of {nb06.CUTOFF_STEP}."
    )
    return {
        "strategy": GATE_STRATEGY,
        "kept at most": gate.MAX_KEPT,
        "distances": _records(tables["distances"]),
        "bluff cost": nb06.BLUFF_COST,
        "cheapest": {
            "cutoff": float(cheapest["cutoff"]),
            **{k: int(cheapest[k]) for k in ("bluffs", "refused", "answered without needle")},
            "cost": float(cheapest["cost"]),
        },
        "sweep": _records(sweep),
    }


def write(evaluation: Evaluation, out: str | os.PathLike) -> list[Path]:
    """Write ``report.md``, ``report.json`` and ``figures/*.png`` under ``out``; return paths."""
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in evaluation.figures.items():
        written.append(plots.save(fig, name, folder=out / "figures"))
        plt.close(fig)
    md = out / "report.md"
    md.write_text(_markdown(evaluation), encoding="utf-8")
    js = out / "report.json"
    js.write_text(json.dumps(evaluation.data, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return [md, js, *written]


def run(
    corpus: str | os.PathLike | None,
    questions: str | os.PathLike,
    out: str | os.PathLike,
    *,
    encoder: TextEncoder | None = None,
    progress: bool | None = None,
) -> tuple[Evaluation, list[Path]]:
    """Load, evaluate, write. ``corpus=None`` is the lab's own verified corpus.

    A folder is read with :func:`rag_lab.sources.folder.load_folder` (every file must read); the
    question file is validated against it with any counts. Raises
    :class:`~rag_lab.sources.folder.IngestError`, :class:`~rag_lab.sources.d2l.CorpusError` or
    :class:`~rag_lab.questions.QuestionsError`, each naming the file and the problem.
    """
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
        spans = load_chroma_questions(questions, docs)
        evaluation = evaluate_spans(docs, spans, encoder, title=Path(corpus).resolve().name)
        return evaluation, write(evaluation, out)
    qset = load_questions(questions, docs, expected=None)
    name = Path(corpus).resolve().name if corpus is not None else "the lab's corpus"
    # The chapter's ASCII tokenizer reproduces the chapter; any other corpus gets Unicode words.
    tokenizer = "ascii" if corpus is None else "unicode"
    evaluation = evaluate(docs, qset, encoder, title=name, tokenizer=tokenizer, progress=progress)
    return evaluation, write(evaluation, out)


# --- rendering --------------------------------------------------------------------

_SECTIONS = (
    (
        "Chunking (notebook 02)",
        ["chunk sizes", "destroyed answers", "word-pieces"],
        ["chunk_sizes", "chunk_word_pieces"],
        "chunking",
    ),
    (
        "Dense retrieval over six chunkings (notebook 03)",
        ["dense recall by strategy", "paired tests between strategies", "recall by phrasing"],
        ["dense_recall_by_strategy"],
        "dense retrieval",
    ),
    (
        "Dense, BM25 and hybrid on strategy E (notebook 04)",
        [
            "dense, BM25 and hybrid",
            "dense and BM25 at R@1",
            "dense and BM25 at R@8",
            "paired tests between systems",
        ],
        ["dense_bm25_hybrid_recall"],
        "dense, BM25 and hybrid",
    ),
    (
        "Distances and the refusal gate on strategy E (notebook 06)",
        ["distances", "gate"],
        ["distance_histograms", "bluff_curve"],
        "gate",
    ),
)

_NOTES = {
    "destroyed answers": "Needles that lie whole in no chunk: no retriever can find them.",
    "dense recall by strategy": (
        "Recall@k with Wilson 95 % intervals per query, and 95 % cluster-bootstrap intervals "
        "per question (10,000 resamples, seed 0); MRR; queries never hit."
    ),
    "paired tests between strategies": (
        "Wins and losses of a over b, exact sign test: per query (`here`, the chapter's test) "
        "and per question (both phrasings scored together), the latter Holm-adjusted over "
        "the table; the verdict reads the adjusted question-level test; the chapter's result "
        "where it has one."
    ),
    "dense and BM25 at R@1": "Rows: dense; columns: BM25.",
    "distances": (
        "The worst distance of an answerable query to its needle's chunk against the best "
        "distance of a negative to any chunk: where a cutoff can and cannot separate them."
    ),
    "gate": (
        f"At most {gate.MAX_KEPT} chunks strictly under the cutoff are kept. Bluffs: negatives "
        "answered; refused: answerable queries refused."
    ),
}


_SPAN_SECTIONS = (
    (
        "Dense retrieval over six chunkings, excerpts by offsets (notebook 10)",
        [
            "destroyed answers",
            "dense recall by strategy",
            "paired tests between strategies",
            "Chroma's span metrics",
        ],
        ["dense_recall_by_strategy"],
        "spans",
    ),
    (
        "Dense, BM25 and hybrid on the best boundary strategy (notebook 10)",
        ["dense, BM25 and hybrid", "paired tests between systems"],
        [],
        None,
    ),
)


def _markdown(ev: Evaluation) -> str:
    lines = [f"# rag_lab evaluation: {ev.title}", "", ev.intro, ""]
    sections = _SPAN_SECTIONS if ev.data.get("kind") == "spans" else _SECTIONS
    for n, (heading, tables, figures, reading) in enumerate(sections, 1):
        lines += [f"## {n} · {heading}", ""]
        if any(name not in ev.tables for name in tables):
            lines += [f"Not measured: {NO_GATE}.", ""]
            continue
        for name in tables:
            lines += [f"### {name[0].upper()}{name[1:]}", ""]
            if name in _NOTES:
                lines += [_NOTES[name], ""]
            lines += [_markdown_table(ev.tables[name]), ""]
        lines += [f"![{f}](figures/{f}.png)" for f in figures] + [""]
        if reading:
            lines += ["### Reading", "", ev.readings[reading], ""]
    return "\n".join(lines)


def _markdown_table(table: pd.DataFrame) -> str:
    """A padded pipe table (numbers right-aligned); a plain 0..n-1 index is left out."""
    plain = isinstance(table.index, pd.RangeIndex)
    if plain:
        frame = table
    elif isinstance(table.index, pd.MultiIndex):
        frame = table.reset_index()
    else:
        frame = table.rename_axis(table.index.name or "").reset_index()
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    rows = [[str(c) for c in frame.columns]]
    rows += [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max(3, *(len(r[i]) for r in rows)) for i in range(len(numeric))]

    def line(cells: list[str]) -> str:
        padded = [
            c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = ["-" * (w - 1) + ":" if n else "-" * w for w, n in zip(widths, numeric, strict=True)]
    return "\n".join([line(rows[0]), line(rule), *map(line, rows[1:])])


def _cell(value: object) -> str:
    """A table cell as text: empty for a missing value, ``|`` escaped."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value).replace("|", "\\|")


def _records(table: pd.DataFrame) -> Any:
    """A table as JSON values: records when its index is a plain range, else keyed by index."""
    orient = "records" if isinstance(table.index, pd.RangeIndex) else "index"
    return json.loads(table.to_json(orient=orient))
