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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_lab.chunking import sized
from rag_lab.evaluation import plots
from rag_lab.evaluation.chapter import STRATEGY_CLAIMS, SYSTEM_CLAIMS
from rag_lab.evaluation.retrieval import Strategies, Systems
from rag_lab.evaluation.spans import METRICS, SIZES, Bench, SpanEvaluation, bench_of, span_metrics
from rag_lab.evaluation.verdicts import Verdict, judge
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

COUNT_CLAIMS = (
    ("A", "blind cuts destroy answers", lambda n: n > 0),
    ("B", "a 64-character overlap prevents it", lambda n: n == 0),
)


@dataclass(frozen=True)
class SideBySide:
    """One claim judged on both corpora: the evidence as shown, and each verdict."""

    claim: str
    ours: str
    our_verdict: Verdict
    theirs: str
    their_verdict: Verdict

    @property
    def agree(self) -> bool:
        return self.our_verdict is self.their_verdict


def claim_rows(ours: Strategies, our_systems: Systems, theirs: SpanEvaluation) -> list[SideBySide]:
    """Each of the chapter's claims, its verdict on our corpus and on Chroma's, side by side."""
    rows = []
    for strategy, claim, holds in COUNT_CLAIMS:
        o = ours.destroyed.count(strategy)
        t = int(theirs.destroyed.loc[strategy, "questions destroyed"])
        rows.append(
            SideBySide(
                f"{claim} ({strategy})",
                f"{o} of {ours.destroyed.of} questions",
                _holds(holds(o)),
                f"{t} of {theirs.questions} questions",
                _holds(holds(t)),
            )
        )
    judged = [(ours, theirs.strategies, *claim) for claim in STRATEGY_CLAIMS]
    judged.append((ours, theirs.strategies, "B", "A", 8, ">", "overlap beats blind cuts"))
    judged += [(our_systems, theirs.systems, *claim) for claim in SYSTEM_CLAIMS]
    for here, there, a, b, k, direction, claim in judged:
        o, t = here.paired.get(a, b, k), there.paired.get(a, b, k)
        sign = "≈" if direction == "=" else direction
        rows.append(
            SideBySide(
                f"{a} {sign} {b} at R@{k}: {claim}",
                f"{o.per_question} (Holm {o.p_holm:#.2g})",
                judge(o, direction),
                f"{t.per_query} (Holm {t.p_holm:#.2g})",
                judge(t, direction),
            )
        )
    return rows


def claims_view(rows: Sequence[SideBySide]) -> pd.DataFrame:
    """:func:`claim_rows` as a table, one row per claim."""
    return pd.DataFrame(
        {
            "claim": [r.claim for r in rows],
            "ours": [r.ours for r in rows],
            "ours: verdict": [r.our_verdict.label for r in rows],
            "Chroma's": [r.theirs for r in rows],
            "Chroma's: verdict": [r.their_verdict.label for r in rows],
        }
    ).set_index("claim")


def _holds(condition: bool) -> Verdict:
    return Verdict.REPRODUCES if condition else Verdict.NOT_REPRODUCED


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
    theirs: SpanEvaluation, claims: Sequence[SideBySide], sweep: pd.DataFrame, k: int = SWEEP_K
) -> str:
    """The notebook's reading, computed from its records."""
    differ = [r.claim for r in claims if not r.agree]
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
        f"- **Side by side**: the two corpora agree on {len(claims) - len(differ)} of "
        f"{len(claims)} claims" + (f"; they differ on: {'; '.join(differ)}." if differ else "."),
    ]
    return "\n".join(lines)
