"""Notebook 10: the chapter's advice on a benchmark nobody here wrote (Chroma's).

Smith & Troynikov's general evaluation set (:mod:`rag_lab.sources.chroma`): five corpora
without Markdown headings and their questions, each answered by one or more excerpts given as
character offsets. The chapter's criterion, restated with offsets: a question is answered
within k when every excerpt lies whole inside the document span of some chunk among the top
k (:func:`rag_lab.metrics.span_first_hit_rank`); Chroma's own recall, precision and IoU
(:func:`rag_lab.metrics.span_scores`) are shown beside it. All five corpora share one index
per strategy, as in Chroma's evaluation, so a question can retrieve another corpus's chunks.

The questions are independent (one phrasing each), so the per-query tests are the right
ones here; the family of each paired table is still Holm-corrected.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import OVERLAP, STRATEGIES, sized
from rag_lab.claims import render
from rag_lab.evaluation import chapter, claims, figures, plots, recall_curves
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.retrieval import Retrieval, Strategies, Systems
from rag_lab.evaluation.spans import METRICS, SIZES, Bench, SpanEvaluation, bench_of, span_metrics
from rag_lab.experiments.present import Table
from rag_lab.metrics import hits_at
from rag_lab.search import TextEncoder
from rag_lab.stats import wilson

SWEEP_K = 5
HEADLINE = ("A-destroys", "B=A@R20", "F<E@R20", "BM25>dense@R1", "hybrid>BM25@R4")
"""The claims this notebook opens with, on Chroma's benchmark: what blind cuts destroy, what
overlap buys, and the chapter's two claims about BM25 and fusion at the top of the ranking."""
OVERLAP_PAIRS = (("D", "C"), ("F", "E"))
"""Each strategy with its 64-character overlap against the same one without."""
_LABELS = {"recall": "recall", "precision": "precision", "iou": "IoU"}


def setup(path: str | os.PathLike | None = None, encoder: TextEncoder | None = None) -> Bench:
    """Load and verify Chroma's benchmark, chunk it every way; nothing is embedded yet."""
    from rag_lab.sources import chroma

    docs, questions = chroma.load(path)
    if encoder is None:
        from rag_lab.models.encoder import Encoder

        encoder = Encoder()
    return bench_of(docs, questions, encoder)


def corpus_table(bench: Bench) -> pd.DataFrame:
    """Per corpus: characters, questions, excerpts, excerpts whose text occurs more than once
    in their corpus (so only offsets can say which occurrence is meant), and chunks of C."""
    texts = {d.id: d.text for d in bench.docs}
    spans = [s for q in bench.questions for s in q.spans]
    questions = pd.Series([q.spans[0].doc for q in bench.questions]).value_counts()
    excerpts = pd.Series([s.doc for s in spans]).value_counts()
    repeated = pd.Series(
        [s.doc for s in spans if texts[s.doc].count(texts[s.doc][s.start : s.end]) > 1]
    ).value_counts()
    chunks = pd.Series([c.doc_id for c in bench.chunks_by["C"]]).value_counts()
    rows = [
        {
            "corpus": d.id,
            "characters": len(d.text),
            "questions": int(questions.get(d.id, 0)),
            "excerpts": int(excerpts.get(d.id, 0)),
            "repeated": int(repeated.get(d.id, 0)),
            "chunks of C": int(chunks.get(d.id, 0)),
        }
        for d in bench.docs
    ]
    table = pd.DataFrame(rows).set_index("corpus")
    table.loc["all"] = table.sum()
    return table


def corpus_view(bench: Bench) -> Table:
    """:func:`corpus_table` for reading, its units in the caption."""
    table = corpus_table(bench)
    table["characters"] = table["characters"].map("{:,}".format)
    return Table(
        table,
        caption="Per corpus: characters of text; questions; excerpts (the answers, at "
        "character offsets); excerpts whose text occurs more than once; chunks of C",
    )


def destroyed_view(theirs: SpanEvaluation) -> Table:
    """Excerpts no chunk holds whole, and the questions they leave unanswerable, per strategy."""
    d = theirs.destroyed
    return Table(
        pd.DataFrame(
            {
                "label": d["label"],
                "excerpts destroyed": [
                    f"{a} of {b}"
                    for a, b in zip(d["excerpts destroyed"], d["of excerpts"], strict=True)
                ],
                "questions destroyed": [
                    f"{a} of {b}"
                    for a, b in zip(d["questions destroyed"], d["of questions"], strict=True)
                ],
            },
            index=d.index,
        ),
        caption="Excerpts no chunk holds whole; a question with one such excerpt is destroyed",
    )


def recall_tables(theirs: SpanEvaluation) -> tuple[Table, Table]:
    """Recall@k of the six strategies with Wilson's interval (each question is one query),
    and beside it the MRR and the questions never answered against those destroyed."""
    view = theirs.strategies.recall.view(intervals="per query")
    ks = theirs.strategies.recall.ks
    n = int(view["n"].iloc[0])
    recall = Table(
        view[[f"R@{k}" for k in ks]].rename_axis("strategy"),
        caption=f"Recall@k: the share of the {n} questions with every excerpt in the top k "
        "chunks, Wilson 95 %",
    )
    rest = pd.DataFrame(
        {
            "MRR": view["MRR"],
            "questions never answered": view["no hit"],
            "questions destroyed": theirs.destroyed.loc[view.index, "questions destroyed"],
        },
        index=view.index,
    ).rename_axis("strategy")
    return recall, Table(
        rest,
        caption="MRR over the top 20; questions with no hit in the ranking, beside those no "
        "chunk can answer",
    )


PAIRED_COLUMNS = ("pair", "k", "a − b by question", "questions", "p", "chapter")
"""The paired view without the per-query test: each of Chroma's questions is asked once, so
the per-query test is the question-level one."""


def paired_view(r: Retrieval, caption: str) -> Table:
    """Each comparison of a family: the difference in Recall@k with its interval, the
    questions won and lost, their sign test (unadjusted), the chapter's result."""
    return Table(r.paired.view(chapter.paired_reference, columns=PAIRED_COLUMNS), caption=caption)


def systems_tables(theirs: SpanEvaluation) -> tuple[Table, Table, Table]:
    """Dense, BM25 and hybrid on the best boundary strategy: Recall@k with Wilson's interval,
    the MRR and questions never answered, and the chapter's comparisons of them."""
    r = theirs.systems
    view = r.recall.view(intervals="per query").rename_axis("system")
    n = int(view["n"].iloc[0])
    return (
        Table(
            view[[f"R@{k}" for k in r.recall.ks]],
            caption=f"Strategy {theirs.best}: Recall@k over the {n} questions, Wilson 95 %",
        ),
        Table(
            view[["MRR", "no hit"]].rename(columns={"no hit": "questions never answered"}),
            caption=f"Strategy {theirs.best}: MRR over the top 20; questions with no hit",
        ),
        paired_view(
            r, f"Strategy {theirs.best}: system a − b in Recall@k; questions: won/lost by a"
        ),
    )


def strategies_figure(theirs: SpanEvaluation):
    """Recall@k curves of the six strategies, in the strategies' colours and names."""
    ranks = theirs.strategies.ranks
    labels = {name: f"{name}: {STRATEGIES[name].label}" for name in ranks}
    return recall_curves.recall_curve_figure(
        ranks,
        "Chroma's benchmark, dense retrieval",
        plots.STRATEGY_COLORS,
        labels=labels,
        hit="questions with every excerpt",
    )


def span_view(theirs: SpanEvaluation) -> Table:
    """Chroma's metrics of the six strategies at each k, mean and bootstrap interval."""
    from rag_lab.evaluation.spans import span_view as formatted

    view = formatted(theirs.scores).reset_index(level="k").rename(columns=_LABELS)
    return Table(
        view,
        caption=f"Chroma's metrics, mean over the {theirs.questions} questions, 95 % bootstrap "
        "interval",
    )


# --- per corpus ------------------------------------------------------------------------


def per_corpus_figure(table: pd.DataFrame, k: int = SWEEP_K):
    """Small multiples of :func:`rag_lab.evaluation.spans.span_table` ``by_corpus``: one
    column per corpus, one row per Chroma metric at ``k``; a dot per strategy (its mean over
    the corpus's questions) and its 95 % bootstrap interval."""
    import matplotlib.pyplot as plt

    at = table.xs(k, level="k")
    corpora = list(dict.fromkeys(at.index.get_level_values("corpus")))
    names = list(dict.fromkeys(at.index.get_level_values("strategy")))
    x = np.arange(len(names))
    with plots.style():
        fig, axes = plt.subplots(
            len(METRICS),
            len(corpora),
            figsize=(2.1 * len(corpora), 1.9 * len(METRICS) + 0.9),
            sharex=True,
            sharey="row",
            squeeze=False,
        )
        for col, corpus in enumerate(corpora):
            part = at.loc[corpus].loc[names]
            for row, metric in enumerate(METRICS):
                ax = axes[row, col]
                for xi, name in zip(x, names, strict=True):
                    r = part.loc[name]
                    color = plots.STRATEGY_COLORS.get(name, plots.NEUTRAL["ink"])
                    ax.plot([xi, xi], [r[f"{metric} lo"], r[f"{metric} hi"]], color=color, lw=2)
                    ax.plot(xi, r[metric], "o", color=color, ms=4)
                ax.set_xticks(x, names)
                ax.set_xlim(-0.6, len(names) - 0.4)
                if col == 0:
                    ax.set_ylabel(f"{_LABELS[metric]} @{k}")
            n = int(part["n"].iloc[0])
            axes[0, col].set_title(f"{corpus}\n(n = {n} questions)", fontsize=8)
        for ax in axes[-1]:
            ax.set_xlabel("strategy")
        fig.suptitle(
            f"Chroma's metrics per corpus at k = {k} (shares of characters): dot, the mean "
            "over the corpus's questions; bar, its 95 % bootstrap interval",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def per_corpus_view(table: pd.DataFrame, overall: pd.DataFrame, k: int = SWEEP_K) -> Table:
    """The per-corpus headline at ``k``: questions, the range of the six strategies' mean
    recall and IoU, and in how many of :data:`OVERLAP_PAIRS` overlap lowers precision (Chroma's
    finding). ``overall`` is the same over every question (:func:`span_table` unsplit)."""
    at = table.xs(k, level="k")
    corpora = [(c, at.loc[c]) for c in dict.fromkeys(at.index.get_level_values("corpus"))]
    questions = [int(part["n"].iloc[0]) for _, part in corpora]
    rows = {}
    for (corpus, part), n in zip(
        [*corpora, ("all", overall.xs(k, level="k"))], [*questions, sum(questions)], strict=True
    ):
        lower = sum(part.loc[a, "precision"] < part.loc[b, "precision"] for a, b in OVERLAP_PAIRS)
        rows[corpus] = {
            "questions": n,
            f"recall @{k}, A–F": _span(part["recall"]),
            f"IoU @{k}, A–F": _span(part["iou"]),
            f"overlap lowers precision @{k}": f"{lower} of {len(OVERLAP_PAIRS)} pairs",
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("corpus"),
        caption=f"Per corpus at k = {k}: the lowest and highest mean of the six strategies; "
        "pairs D vs C and F vs E",
    )


def _span(values: pd.Series) -> str:
    return f"{values.min():.3f}–{values.max():.3f}"


def sweep_table(bench: Bench, k: int = SWEEP_K, context_tokens=None) -> pd.DataFrame:
    """Chunk size against what it costs: per size, without and with overlap, Recall@k (all
    excerpts; Wilson 95 %: ``R@k lo``, ``R@k hi``), Chroma's metrics at k, the characters
    and generator tokens k chunks put in a prompt (mean over questions), and the chunks whose
    embedded text passes the window.

    ``context_tokens(texts) -> counts`` counts generator tokens (None: not counted).
    """
    from rag_lab.models.minilm import count_word_pieces, minilm_fingerprint

    window = minilm_fingerprint().max_seq_length  # past it, text is never embedded
    rows = []
    for size in SIZES:
        for base in ("C", "D"):
            name = sized(base, size).name
            chunks = bench.chunks_by[name]
            rankings = bench.dense_rankings(name)
            top = [r[:k] for r in rankings]
            chars = np.array([sum(len(chunks[i].text) for i in t) for t in top])
            pieces = count_word_pieces([c.text for c in chunks])
            means = span_metrics(bench, name, k)[list(METRICS)].mean()
            hits = hits_at(bench.ranks(name), k)
            lo, hi = wilson(int(hits.sum()), len(hits))
            row = {
                "size": size,
                "overlap": base == "D",
                "strategy": name,
                "chunks": len(chunks),
                f"R@{k}": hits.mean(),
                f"R@{k} lo": lo,
                f"R@{k} hi": hi,
                **{f"{m} @{k}": means[m] for m in METRICS},
                f"chars for {k}": chars.mean(),
                f"past {window} pieces": int((pieces > window).sum()),
            }
            if context_tokens is not None:
                per_chunk = np.array(context_tokens([c.text for c in chunks]))
                row[f"tokens for {k}"] = float(np.mean([per_chunk[t].sum() for t in top]))
            rows.append(row)
    return pd.DataFrame(rows).set_index("strategy")


def sweep_views(sweep: pd.DataFrame, k: int = SWEEP_K) -> tuple[Table, Table]:
    """:func:`sweep_table` for reading: what each chunking retrieves (with its rank on
    Chroma's IoU among the chunkings, 1 the best), then what it costs: its chunks, and the
    characters and generator tokens ``k`` of them put in a prompt, and its chunks past the
    encoder's window."""
    retrieved = pd.DataFrame(
        {
            "size": sweep["size"],
            "overlap": [f"{OVERLAP} chars" if o else "none" for o in sweep["overlap"]],
            f"R@{k}": [
                f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
                for v, lo, hi in zip(
                    sweep[f"R@{k}"], sweep[f"R@{k} lo"], sweep[f"R@{k} hi"], strict=True
                )
            ],
            **{f"{_LABELS[m]} @{k}": sweep[f"{m} @{k}"] for m in METRICS},
            f"IoU @{k} rank": sweep[f"iou @{k}"].rank(ascending=False, method="min").astype(int),
        },
        index=sweep.index,
    )
    past = next(c for c in sweep.columns if c.startswith("past "))
    window = past.split()[1]
    cost = pd.DataFrame(
        {
            "chunks": sweep["chunks"].map("{:,}".format),
            f"characters for {k} chunks": sweep[f"chars for {k}"].map("{:,.0f}".format),
            **(
                {f"generator tokens for {k}": sweep[f"tokens for {k}"].map("{:,.0f}".format)}
                if f"tokens for {k}" in sweep
                else {}
            ),
            f"chunks past {window} word-pieces": sweep[past],
        },
        index=sweep.index,
    )
    return (
        Table(
            retrieved,
            caption=f"Size: characters per chunk. R@{k}: share of the questions with every "
            f"excerpt in the top {k} (Wilson 95 %); Chroma's metrics, means; IoU rank among "
            "these chunkings, 1 the highest",
        ),
        Table(
            cost,
            caption=f"Chunks in the index; what {k} of them put in a prompt, mean per "
            "question; chunks whose text the encoder truncates",
        ),
    )


def sweep_figure(sweep: pd.DataFrame, n_questions: int, k: int = SWEEP_K):
    """Recall@k and Chroma's IoU against the characters k chunks cost, one point per chunking."""
    import matplotlib.pyplot as plt

    cost = f"chars for {k}"
    with plots.style():
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
        for ax, metric in zip(axes, (f"R@{k}", f"iou @{k}"), strict=True):
            for overlap, marker, base in ((False, "o", "C"), (True, "s", "D")):
                part = sweep[sweep["overlap"] == overlap]
                band = None
                if metric == f"R@{k}":  # Wilson 95 %; Chroma's IoU is a mean of shares
                    band = [
                        part[metric] - part[f"{metric} lo"],
                        part[f"{metric} hi"] - part[metric],
                    ]
                ax.errorbar(
                    part[cost],
                    part[metric],
                    yerr=band,
                    marker=marker,
                    capsize=2,
                    color=plots.STRATEGY_COLORS[base],
                    label=f"{STRATEGIES[base].label} ({base} at each size)",
                )
                for _, row in part.iterrows():
                    ax.annotate(
                        f"{int(row['size'])}",
                        (row[cost], row[metric]),
                        fontsize=7,
                        xytext=(3, 3),
                        textcoords="offset points",
                    )
            ax.set_xlabel(f"characters sent for k = {k} chunks (mean per question)")
            ax.set_ylim(bottom=0)
        axes[0].set_ylabel(f"R@{k}, share of questions (bar: Wilson 95 %)")
        axes[1].set_ylabel(f"Chroma IoU @{k}, mean over questions")
        axes[0].legend(fontsize=7, loc="lower right")
        fig.suptitle(
            f"Chunk size against context cost: {len(sweep)} chunkings, n = {n_questions} "
            "questions; a point is a chunking, labelled by its characters per chunk",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


# --- issue 25: Chroma's own table, score fusion, the geometry ---------------------------

FUSION_KS = (1, 4, 5, 10, 20)
"""The cutoffs of the fusion table; the claims are judged at R@4 (:data:`fusion.CLAIM_K`)."""


def published_view(rows: Sequence) -> Table:
    """Chroma's published rows beside ours (:func:`rag_lab.evaluation.chroma_table.run`): the
    chunks each chunker cuts, their recall, ours with its 95 % interval, and our precision
    and IoU (means in percent, the same interval)."""
    from rag_lab.evaluation.chroma_table import K

    def cell(row, metric: str) -> str:
        m, lo, hi = row.mean(metric)
        return f"{m:.1f} [{lo:.1f}, {hi:.1f}]"

    frame = pd.DataFrame(
        {
            "chunks": [f"{r.chunks:,}" for r in rows],
            "published": [f"{r.published.recall:.1f}" for r in rows],
            "ours [95 % CI]": [cell(r, "recall") for r in rows],
            "precision": [cell(r, "precision") for r in rows],
            "IoU": [cell(r, "iou") for r in rows],
        },
        index=pd.Index([r.name for r in rows], name="chunker"),
    )
    n = len(rows[0].recall) if rows else 0
    return Table(
        frame,
        caption=f"Chroma's recall @{K} in % (published: quoted via issue 25), ours over the {n} "
        "questions, Student's t 95 %; precision and IoU ours, in %",
    )


def fusion_runs(bench: Bench, name: str):
    """RRF at each k and the cross-validated convex combinations on strategy ``name``, a hit
    being Chroma's (every excerpt whole in some chunk ranked so far), each question its own
    cluster (:func:`rag_lab.evaluation.fusion.fuse`)."""
    from rag_lab.evaluation import fusion
    from rag_lab.metrics import span_first_hit_ranks

    s = fusion.scores(bench.index(name), [q.text for q in bench.questions], bench.encoder)
    spans, references = bench.spans(name), bench.references
    return fusion.fuse(s, lambda r: span_first_hit_ranks(r, spans, references), bench.ids)


def fusion_view(runs, name: str, hybrid: Sequence, ks: Sequence[int] = FUSION_KS) -> Table:
    """Recall@k of every fusion run (shares of the questions), one row a run, and whether
    its first-hit ranks are those of ``hybrid`` (the systems table's fusion: RRF at the
    chapter's k must give the same ranks)."""
    hybrid = list(hybrid)
    frame = pd.DataFrame(
        {f"R@{k}": [hits_at(r, k).mean() for r in runs.ranks.values()] for k in ks},
        index=pd.Index(list(runs.ranks), name="fusion"),
    ).round(3)
    frame["ranks = hybrid"] = ["yes" if list(r) == hybrid else "no" for r in runs.ranks.values()]
    n = len(next(iter(runs.ranks.values())))
    return Table(
        frame,
        caption=f"Strategy {name}: Recall@k of each fusion over the {n} questions; min-max "
        "and z-score: convex, weight cross-validated; ranks = hybrid: the same first-hit "
        "ranks as the hybrid of the systems table",
    )


def weights_view(runs) -> Table:
    """The weight of dense each fold's cross-validation chose, one column a normalisation."""
    frame = pd.DataFrame(runs.weights)
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="fold")
    return Table(
        frame,
        caption=f"Weight of dense in the convex combination, chosen on the other "
        f"{runs.folds - 1} folds for each of the {runs.folds}",
    )


def geometry_inputs(bench: Bench, theirs: SpanEvaluation) -> tuple[list[int], dict[str, int]]:
    """One needle per excerpt: every listed excerpt's length in characters, and the excerpts
    A and B destroy (each listed excerpt counted, as :func:`destroyed_table` does)."""
    lengths = [s.end - s.start for r in bench.references for s in r]
    destroyed = {s: int(theirs.destroyed.loc[s, "excerpts destroyed"]) for s in ("A", "B")}
    return lengths, destroyed


def geometry_view(lengths: Sequence[int], destroyed: dict[str, int]) -> Table:
    """Excerpts A and B destroy against what the geometry predicts from their lengths."""
    from rag_lab.evaluation.geometry import expected_destroyed

    rows = {}
    for name, overlap in (("A", 0), ("B", OVERLAP)):
        e = expected_destroyed(lengths, destroyed[name], overlap=overlap)
        rows[name] = {
            "overlap": f"{overlap} chars",
            "observed": e.observed,
            "expected": f"{e.expected:.1f}",
            "95 % range": f"{e.low}–{e.high}",
            "agrees": "yes" if e.agrees else "no",
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("strategy"),
        caption=f"Excerpts destroyed of {len(lengths)} (one needle per excerpt): observed, "
        "expected Σ P(destroyed), Poisson-binomial 95 % range",
    )


# --- the closing comparison -------------------------------------------------------


def entries(theirs: SpanEvaluation) -> list[Entry]:
    """The chapter's claims on Chroma's benchmark: this notebook's part of the ledger. Its
    documents have no sections, so the header claims are not testable there."""
    destroyed = {s: int(theirs.destroyed.loc[s, "questions destroyed"]) for s in ("A", "B")}
    return [
        *claims.destroyed_entries(destroyed, theirs.questions, "10", "chroma"),
        *claims.strategy_entries(theirs.strategies, "10", "chroma", sections=theirs.sections),
        *claims.system_entries(theirs.systems, "10", "chroma"),
    ]


def ours(dense: Strategies, systems: Systems) -> list[Entry]:
    """The same claims on the lab's corpus (as notebooks 02–04 judge them), to set beside."""
    destroyed = {s: dense.destroyed.count(s) for s in ("A", "B")}
    return [
        *claims.destroyed_entries(destroyed, dense.destroyed.of, "10", "d2l"),
        *claims.strategy_entries(dense, "10", "d2l", sections=dense.sections),
        *claims.system_entries(systems, "10", "d2l"),
    ]


def side_by_side(d2l: Sequence[Entry], chroma: Sequence[Entry]) -> pd.DataFrame:
    """Each claim on both corpora, one row a claim in the order of ``d2l``: its statement,
    on each corpus the evidence (the estimate with its interval, or the count) and the
    :class:`~rag_lab.claims.verdicts.Verdict` (None where Chroma's part lacks the claim),
    and whether the verdicts are the same (None unless the claim is tested on both)."""
    theirs = {e.claim: e for e in chroma}
    rows = []
    for o in d2l:
        t = theirs.get(o.claim)
        both = t is not None and o.verdict.tested and t.verdict.tested
        rows.append(
            {
                "claim": o.claim,
                "statement": o.statement,
                "d2l": render.evidence(o),
                "d2l verdict": o.verdict,
                "Chroma": render.evidence(t) if t else "–",
                "Chroma verdict": t.verdict if t else None,
                "same verdict": (o.verdict is t.verdict) if both else None,
            }
        )
    return pd.DataFrame(rows).set_index("claim")


_CLAIM_WIDTH = 22
"""Characters of a claim's id and statement shown in the side-by-side tables (hover: all)."""


def side_by_side_views(
    table: pd.DataFrame, d2l_questions: int, d2l_queries: int, chroma_questions: int
) -> tuple[Table, Table]:
    """:func:`side_by_side` for reading, in two tables that fit a page: the verdicts, then
    the evidence, with the questions and queries each corpus's numbers count."""
    index = pd.Index([f"{c}: {s}" for c, s in zip(table.index, table["statement"], strict=True)])
    index.name = "claim"
    verdicts = pd.DataFrame(
        {
            "d2l": [v.label for v in table["d2l verdict"]],
            "Chroma": [v.label if v is not None else "–" for v in table["Chroma verdict"]],
            "same verdict": [
                "–" if same is None else ("yes" if same else "no") for same in table["same verdict"]
            ],
        },
        index=index,
    )
    evidence = pd.DataFrame({"d2l": table["d2l"], "Chroma": table["Chroma"]}).set_axis(index)
    shorten = {"index": _CLAIM_WIDTH}
    return (
        Table(
            verdicts,
            caption="The ledger's verdict on each corpus; same verdict: – unless tested on both",
            shorten=shorten,
        ),
        Table(
            evidence,
            caption=f"a − b by question with its 95 % interval, or the count (d2l: "
            f"{d2l_questions} questions, {d2l_queries} queries; Chroma: {chroma_questions} "
            "questions, one query each)",
            shorten=shorten,
        ),
    )


def both_forest(d2l: Sequence[Entry], chroma: Sequence[Entry], d2l_n: int, chroma_n: int):
    """The paired claims on both corpora, each claim's d2l row above its Chroma row."""
    theirs = {e.claim: e for e in chroma}
    rows = [e for o in d2l for e in (o, theirs.get(o.claim)) if e is not None]
    return figures.forest_figure(
        rows,
        f"The chapter's claims on both corpora (d2l: n = {d2l_n} questions; Chroma: "
        f"n = {chroma_n})",
        label_benchmark=True,
    )
