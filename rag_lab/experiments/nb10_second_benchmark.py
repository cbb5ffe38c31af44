"""Notebook 10: the chapter's advice on a benchmark nobody here wrote (Chroma's).

Smith & Troynikov's general evaluation set (:mod:`rag_lab.sources.chroma`): five corpora
without Markdown headings and 472 questions, each answered by one to five excerpts given as
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

from rag_lab.chunking import sized
from rag_lab.evaluation import claims, plots
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.retrieval import Strategies, Systems
from rag_lab.evaluation.spans import METRICS, SIZES, Bench, SpanEvaluation, bench_of, span_metrics
from rag_lab.metrics import hits_at
from rag_lab.search import TextEncoder

SWEEP_K = 5
CHROMA_MODEL = "OpenAI text-embedding-3-large"
"""The embedding model of Chroma's published results: only their directions compare."""


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


def sweep_table(bench: Bench, k: int = SWEEP_K, context_tokens=None) -> pd.DataFrame:
    """Chunk size against what it costs: per size, without and with overlap, Recall@k (all
    excerpts), Chroma's metrics at k, the characters and generator tokens k chunks put in a
    prompt (mean over questions), and the chunks whose embedded text passes the window.

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
            row = {
                "size": size,
                "overlap": base == "D",
                "strategy": name,
                "chunks": len(chunks),
                f"R@{k}": hits_at(bench.ranks(name), k).mean(),
                **{f"{m} @{k}": means[m] for m in METRICS},
                f"chars for {k}": chars.mean(),
                f"past {window} pieces": int((pieces > window).sum()),
            }
            if context_tokens is not None:
                per_chunk = np.array(context_tokens([c.text for c in chunks]))
                row[f"tokens for {k}"] = float(np.mean([per_chunk[t].sum() for t in top]))
            rows.append(row)
    return pd.DataFrame(rows).set_index("strategy")


def sweep_figure(sweep: pd.DataFrame, n_questions: int, k: int = SWEEP_K):
    """Recall@k and Chroma's IoU against the characters k chunks cost, one point per chunking."""
    import matplotlib.pyplot as plt

    cost = f"chars for {k}"
    with plots.style():
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
        for ax, metric in zip(axes, (f"R@{k}", f"iou @{k}"), strict=True):
            for overlap, marker, label in (
                (False, "o", "boundaries"),
                (True, "s", "boundaries + overlap"),
            ):
                part = sweep[sweep["overlap"] == overlap]
                ax.plot(part[cost], part[metric], marker=marker, label=label)
                for _, row in part.iterrows():
                    ax.annotate(
                        f"{int(row['size'])}",
                        (row[cost], row[metric]),
                        fontsize=7,
                        xytext=(3, 3),
                        textcoords="offset points",
                    )
            ax.set_xlabel(f"characters sent for k = {k} chunks (mean per question)")
            ax.set_ylabel(metric.replace("iou", "Chroma IoU"))
            ax.set_ylim(bottom=0)
        axes[0].legend(fontsize=7)
        fig.suptitle(
            f"Chunk size against context cost, {len(sweep)} chunkings, "
            f"{n_questions} questions (labels: characters per chunk)",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


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
    """Each claim on both corpora: the estimate with its interval (or the count) and the
    verdict, one row a claim, in the order of ``d2l``."""
    theirs = {e.claim: e for e in chroma}
    rows = []
    for o in d2l:
        t = theirs.get(o.claim)
        rows.append(
            {
                "claim": f"{o.claim}: {o.statement}",
                "ours": _evidence(o),
                "ours: verdict": o.verdict.label,
                "Chroma's": _evidence(t) if t else "–",
                "Chroma's: verdict": t.verdict.label if t else "–",
            }
        )
    return pd.DataFrame(rows).set_index("claim")


def agreement(d2l: Sequence[Entry], chroma: Sequence[Entry]) -> tuple[list[str], list[str]]:
    """(claims tested on both corpora, those whose verdicts differ): a claim not testable or
    not measured on either corpus is tested on neither, so it is never counted as agreement."""
    theirs = {e.claim: e for e in chroma}
    both = [
        o for o in d2l if o.claim in theirs and o.verdict.tested and theirs[o.claim].verdict.tested
    ]
    return [o.claim for o in both], [
        o.claim for o in both if o.verdict is not theirs[o.claim].verdict
    ]


def _evidence(e: Entry) -> str:
    return e.interval if e.interval != "–" else e.here


def chroma_directions(sweep: pd.DataFrame, means5: pd.DataFrame, k: int = SWEEP_K) -> list[str]:
    """Two of Chroma's published findings, compared by direction only (their numbers come
    from :data:`CHROMA_MODEL`): overlap lowers precision; small chunks without overlap are
    among the best on IoU."""
    lines = []
    lower = [
        (a, b)
        for a, b in (("D", "C"), ("F", "E"))
        if means5.loc[a, "precision"] < means5.loc[b, "precision"]
    ]
    lines.append(
        f"- *Overlap lowers precision* (Chroma): here at k = {k}, "
        + ", ".join(
            f"{a} {means5.loc[a, 'precision']:.4f} vs {b} {means5.loc[b, 'precision']:.4f}"
            for a, b in (("D", "C"), ("F", "E"))
        )
        + (
            ": **same direction**."
            if len(lower) == 2
            else ": **not the same direction** in every pair."
        )
    )
    iou = sweep[f"iou @{k}"]
    best = iou.idxmax()
    small = sized("C", min(SIZES)).name
    rank = int((iou > iou[small]).sum()) + 1
    lines.append(
        f"- *Small chunks without overlap score among the best on IoU* (Chroma, 200 tokens): "
        f"here {small} ranks {rank} of {len(iou)} on IoU@{k} ({iou[small]:.4f}; best {best}, "
        f"{iou[best]:.4f}): **{'same direction' if rank <= 2 else 'not the same direction'}**."
    )
    return lines


def reading(
    theirs: SpanEvaluation,
    d2l: Sequence[Entry],
    chroma: Sequence[Entry],
    sweep: pd.DataFrame,
    k: int = SWEEP_K,
) -> str:
    """The notebook's reading, computed from its records."""
    tested, differ = agreement(d2l, chroma)
    untested = [e.claim for e in chroma if not e.verdict.tested]
    a, c = theirs.destroyed.loc["A"], theirs.destroyed.loc["C"]
    recall = theirs.strategies.recall
    by_r = sweep[f"R@{k}"]
    lines = [
        f"- **Blind cuts** destroy {a['excerpts destroyed']} of {a['of excerpts']} excerpts "
        f"({a['questions destroyed']} of {a['of questions']} questions can never be answered); "
        f"boundaries destroy {c['excerpts destroyed']} ({c['questions destroyed']} questions).",
        "- **R@20** (every excerpt of the question in the top 20): "
        + ", ".join(f"{n} {recall[n].at(20):.3f}" for n in recall.names)
        + f". The best boundary strategy is {theirs.best}.",
        f"- **Chunk size**: R@{k} is highest at {by_r.idxmax()} ({by_r.max():.3f}) and lowest at "
        f"{by_r.idxmin()} ({by_r.min():.3f}); {sweep.loc[by_r.idxmax(), f'chars for {k}']:.0f} "
        f"against {sweep.loc[by_r.idxmin(), f'chars for {k}']:.0f} characters of context "
        f"for {k} chunks.",
        f"- **Side by side**: of the {len(tested)} claims tested on both corpora, the verdicts "
        f"agree on {len(tested) - len(differ)}"
        + (f" and differ on {', '.join(differ)}" if differ else "")
        + (
            f"; {', '.join(untested)} cannot be tested on Chroma's corpora (no sections) and "
            "are not counted."
            if untested
            else "."
        ),
    ]
    return "\n".join(lines)
