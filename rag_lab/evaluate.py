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
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from rag_lab import __version__, chunk_report, dense, distance_report, gate, plots, retrieval
from rag_lab import retrieval_report as report
from rag_lab.corpus import Document, load_corpus
from rag_lab.embed import Encoder
from rag_lab.index import TextEncoder
from rag_lab.ingest import chunk_all, load_folder
from rag_lab.metrics import summary_table
from rag_lab.questions import QuestionSet, load_questions

STRATEGY_PAIRS = (("B", "A"), ("E", "A"), ("E", "C"), ("F", "E"))
"""Notebook 03's paired tests, at k = 8 and 20."""
SYSTEM_PAIRS = (("BM25", "dense"), ("hybrid", "BM25"), ("hybrid", "dense"))
"""Notebook 04's paired tests, at k = 1, 4 and 8."""
SYSTEM_COLORS = {"dense": "#1565c0", "BM25": "#2e7d32", "hybrid": "#e65100"}
GATE_STRATEGY = "E"
CUTOFF_STEP = 0.005
"""Resolution of the gate sweep, as in notebook 06."""
CUTOFFS: tuple[float | None, ...] = (
    None,
    *(float(c) for c in np.round(np.arange(0.30, 0.9001, CUTOFF_STEP), 3)),
)
"""Cosine-distance cutoffs swept for the gate; None is no threshold."""
BLUFF_COST = 3.0
"""One bluff (a negative answered) costs as much as this many answerable questions refused."""


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


def evaluate(
    docs: Sequence[Document],
    qset: QuestionSet,
    encoder: TextEncoder,
    *,
    title: str = "corpus",
    progress: bool | None = None,
) -> Evaluation:
    """Run notebooks 02–04 and the gate sweep of 06 on ``docs`` and ``qset``.

    ``progress``: a bar over the stages (None: only on a terminal); the encoder shows its
    own bar when it has many texts to embed.
    """
    hide = None if progress is None else not progress  # None: tqdm shows it on a terminal
    stages = tqdm(total=5, desc="evaluate", unit="stage", disable=hide)
    queries = qset.queries()
    tables: dict[str, pd.DataFrame] = {}
    figures: dict[str, Any] = {}

    stages.set_postfix_str("chunking")
    chunks_by = chunk_all(docs)
    sizes = chunk_report.size_table(chunks_by)
    destroyed_by = chunk_report.destroyed_table(chunks_by, qset.questions)
    tokens = chunk_report.token_table(chunks_by)
    shown = tokens.copy()
    shown["header share"] = shown["header share"].map("{:.1%}".format)
    tables |= {"chunk sizes": sizes, "destroyed answers": destroyed_by, "word-pieces": shown}
    figures["chunk_sizes"] = chunk_report.size_figure(chunks_by)
    figures["chunk_word_pieces"] = chunk_report.window_figure(chunks_by)
    stages.update()

    stages.set_postfix_str("embedding six chunkings")
    indexes = {name: retrieval.Index.build(chunks, encoder) for name, chunks in chunks_by.items()}
    stages.update()

    stages.set_postfix_str("dense retrieval")
    ranks_by = {name: retrieval.dense_ranks(idx, queries, encoder) for name, idx in indexes.items()}
    by_strategy = report.interval_table(ranks_by)
    by_strategy["destroyed"] = destroyed_by["destroyed"]
    paired_strategies = report.paired_view(ranks_by, STRATEGY_PAIRS, ks=(8, 20))
    by_phrasing = {
        f"{name} {phrasing}": r
        for name in ranks_by
        for phrasing, r in retrieval.split_by_phrasing(ranks_by[name], queries).items()
    }
    tables |= {
        "dense recall by strategy": by_strategy,
        "paired tests between strategies": _paired_shown(paired_strategies),
        "recall by phrasing": report.interval_table(by_phrasing, ks=(1, 8, 20)),
    }
    figures["dense_recall_by_strategy"] = report.recall_curve_figure(
        ranks_by, "Dense retrieval, six chunkings", plots.COLORS
    )
    stages.update()

    stages.set_postfix_str("dense, BM25 and hybrid")
    index = indexes[GATE_STRATEGY]
    rankings = retrieval.rank_all(index, queries, encoder)
    ranks = rankings.ranks(index)
    paired_systems = report.paired_view(ranks, SYSTEM_PAIRS, ks=(1, 4, 8))
    tables |= {
        "dense, BM25 and hybrid": report.interval_table(ranks),
        "dense and BM25 at R@1": report.two_by_two(ranks["dense"], ranks["BM25"], 1, _DENSE_BM25),
        "dense and BM25 at R@8": report.two_by_two(ranks["dense"], ranks["BM25"], 8, _DENSE_BM25),
        "paired tests between systems": _paired_shown(paired_systems),
    }
    figures["dense_bm25_hybrid_recall"] = report.recall_curve_figure(
        ranks, f"Strategy {GATE_STRATEGY}: dense, BM25 and RRF", SYSTEM_COLORS
    )
    stages.update()

    stages.set_postfix_str("gate sweep")
    negatives = dense.cosine_distance_matrix(
        encoder.encode([n.query for n in qset.negatives]), index.vectors
    )
    relevant = retrieval.relevant_chunks(index.chunks, queries)
    dists = distance_report.distances(rankings.distances, relevant, negatives)
    sweep = gate.sweep(rankings.distances, relevant, negatives, CUTOFFS)
    cheapest = gate.cheapest_cutoff(sweep, BLUFF_COST)
    tables |= {
        "distances": distance_report.overlap_table(dists, queries, qset.negatives),
        "gate": distance_report.bluff_table(rankings.distances, relevant, negatives),
    }
    figures["distance_histograms"] = distance_report.histogram_figure(
        dists, qset.negatives, GATE_STRATEGY
    )
    figures["bluff_curve"] = distance_report.bluff_figure(sweep, len(queries), len(qset.negatives))
    stages.update()
    stages.close()

    readings = {
        "gate": (
            f"- **The cheapest cutoff** when one bluff costs {BLUFF_COST:g} refusals is "
            f"{cheapest['cutoff']:.3f}: {int(cheapest['bluffs'])} bluffs, "
            f"{int(cheapest['refused'])} refused, cost {cheapest['cost']:g} (swept from 0.300 "
            f"to 0.900 in steps of {CUTOFF_STEP})."
        ),
        "chunking": chunk_report.reading(destroyed_by, tokens, sizes, len(qset.questions)),
        "dense retrieval": report.reading_dense(
            ranks_by, retrieval.split_by_phrasing(ranks_by[GATE_STRATEGY], queries)
        ),
        "dense, BM25 and hybrid": report.reading_hybrid(ranks),
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
        "encoder": {**fp.__dict__, "key": fp.key},
        "corpus": corpus,
        "queries": [q.id for q in queries],
        "chunking": {
            "sizes": _records(sizes),
            "destroyed": _records(destroyed_by),
            "word-pieces": _records(tokens),
        },
        "dense by strategy": {
            "summary": _records(summary_table(ranks_by)),
            "ranks": ranks_by,
            "paired": _records(paired_strategies),
            "by phrasing": _records(summary_table(by_phrasing, ks=(1, 8, 20))),
        },
        "systems on E": {
            "summary": _records(summary_table(ranks)),
            "ranks": ranks,
            "paired": _records(paired_systems),
        },
        "gate": {
            "strategy": GATE_STRATEGY,
            "kept at most": gate.MAX_KEPT,
            "distances": _records(tables["distances"]),
            "bluff cost": BLUFF_COST,
            "cheapest": {
                "cutoff": float(cheapest["cutoff"]),
                **{k: int(cheapest[k]) for k in ("bluffs", "refused", "answered without needle")},
                "cost": float(cheapest["cost"]),
            },
            "sweep": _records(sweep),
        },
        "readings": readings,
    }
    return Evaluation(title, intro, tables, readings, figures, data)


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

    A folder is read with :func:`rag_lab.ingest.load_folder` (every file must read); the
    question file is validated against it with any counts. Raises
    :class:`~rag_lab.ingest.IngestError`, :class:`~rag_lab.corpus.CorpusError` or
    :class:`~rag_lab.questions.QuestionsError`, each naming the file and the problem.
    """
    docs = load_corpus() if corpus is None else load_folder(corpus)
    qset = load_questions(questions, docs, expected=None)
    name = Path(corpus).resolve().name if corpus is not None else "the lab's corpus"
    evaluation = evaluate(docs, qset, encoder or Encoder(), title=name, progress=progress)
    return evaluation, write(evaluation, out)


# --- rendering --------------------------------------------------------------------

_DENSE_BM25 = ("dense", "BM25")

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
    "dense recall by strategy": "Recall@k with Wilson 95 % intervals; MRR; queries never hit.",
    "paired tests between strategies": (
        "Wins and losses of a over b on the same queries, exact sign test; the chapter's "
        "result where it has one."
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


def _markdown(ev: Evaluation) -> str:
    lines = [f"# rag_lab evaluation: {ev.title}", "", ev.intro, ""]
    for n, (heading, tables, figures, reading) in enumerate(_SECTIONS, 1):
        lines += [f"## {n} · {heading}", ""]
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
    frame = table if plain else table.rename_axis(table.index.name or "").reset_index()
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


def _paired_shown(table: pd.DataFrame) -> pd.DataFrame:
    return table[["a", "b", "k", "here", "chapter"]].reset_index(drop=True)


def _records(table: pd.DataFrame) -> Any:
    """A table as JSON values: records when its index is a plain range, else keyed by index."""
    orient = "records" if isinstance(table.index, pd.RangeIndex) else "index"
    return json.loads(table.to_json(orient=orient))
