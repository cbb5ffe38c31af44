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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rag_lab import dense
from rag_lab.chunking import STRATEGIES, Chunk, Strategy, chunk_corpus, sized
from rag_lab.documents import Document
from rag_lab.experiments import nb03_dense_retrieval as nb03
from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
from rag_lab.experiments import plots, tables
from rag_lab.experiments.lab import Lab
from rag_lab.experiments.runs import rank_all
from rag_lab.metrics import (
    Ranks,
    chunk_spans,
    destroyed_spans,
    hits_at,
    span_first_hit_ranks,
    span_scores,
)
from rag_lab.questions import Span, SpanQuestion
from rag_lab.ranking import order
from rag_lab.search import ChunkIndex, TextEncoder
from rag_lab.stats import bootstrap_mean

SIZES = (256, 512, 1024)
"""The sweep's chunk sizes in characters; 512 is the chapter's."""
SPAN_KS = (5, 10)
"""Chroma's metrics are reported at these k."""
SWEEP_K = 5
WINDOW = 256
"""The encoder's window in word-pieces: text past it is never embedded."""
METRICS = ("recall", "precision", "iou")
CHROMA_MODEL = "OpenAI text-embedding-3-large"
"""The embedding model of Chroma's published results: only their directions compare."""


@dataclass
class Bench:
    """Chroma's corpora and questions, chunked every way the notebook measures."""

    docs: list[Document]
    questions: list[SpanQuestion]
    encoder: TextEncoder
    strategies: dict[str, Strategy]
    chunks_by: dict[str, list[Chunk]]
    _indexes: dict[str, ChunkIndex] = field(default_factory=dict, repr=False)
    _dense: dict[str, list[np.ndarray]] = field(default_factory=dict, repr=False)
    _ranks: dict[str, list[int | None]] = field(default_factory=dict, repr=False)

    @property
    def ids(self) -> list[str]:
        return [q.id for q in self.questions]

    @property
    def references(self) -> list[tuple[Span, ...]]:
        return [q.spans for q in self.questions]

    def spans(self, name: str) -> list[Span]:
        return chunk_spans(self.chunks_by[name], self.strategies[name])

    def index(self, name: str) -> ChunkIndex:
        if name not in self._indexes:
            self._indexes[name] = ChunkIndex.build(self.chunks_by[name], self.encoder)
        return self._indexes[name]

    def dense_rankings(self, name: str) -> list[np.ndarray]:
        """Every question's full dense ranking over the strategy's chunks."""
        if name not in self._dense:
            vectors = self.encoder.encode([q.text for q in self.questions])
            distances = dense.cosine_distance_matrix(vectors, self.index(name).vectors)
            self._dense[name] = [order(row, descending=False) for row in distances]
        return self._dense[name]

    def ranks(self, name: str) -> list[int | None]:
        """First rank by which all of a question's excerpts are covered, per question."""
        if name not in self._ranks:
            self._ranks[name] = span_first_hit_ranks(
                self.dense_rankings(name), self.spans(name), self.references
            )
        return self._ranks[name]


def strategies(sweep: bool = True) -> dict[str, Strategy]:
    """The six, then (``sweep``) boundaries without and with overlap at each of :data:`SIZES`."""
    out = dict(STRATEGIES)
    for size in SIZES if sweep else ():
        for base in ("C", "D"):
            s = sized(base, size)
            out.setdefault(s.name, s)
    return out


def bench_of(
    docs: Sequence[Document],
    questions: Sequence[SpanQuestion],
    encoder: TextEncoder,
    *,
    sweep: bool = True,
) -> Bench:
    """Any corpus with span questions, chunked every way measured here (nothing embedded)."""
    named = strategies(sweep)
    chunks_by = {n: chunk_corpus(docs, s) for n, s in named.items()}
    return Bench(list(docs), list(questions), encoder, named, chunks_by)


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


def embed_all(bench: Bench) -> list[str]:
    """Embed every chunking (from the cache where it has them); one line per strategy."""
    lines = []
    for name, chunks in bench.chunks_by.items():
        bench.index(name)
        fresh = getattr(bench.encoder, "last", None)
        computed = fresh.computed if fresh is not None else len(chunks)
        lines.append(f"{name}: {len(chunks)} chunks, {computed} embedded now")
    return lines


def destroyed_table(bench: Bench, names: Sequence[str] = tuple(STRATEGIES)) -> pd.DataFrame:
    """Excerpts no chunk of the strategy holds whole, and the questions they make
    unanswerable: no ranking can find them."""
    n_excerpts = sum(len(r) for r in bench.references)
    rows = []
    for name in names:
        every = [s for r in bench.references for s in r]
        lost = destroyed_spans(bench.spans(name), every)  # each reference, as listed
        gone = set(lost)
        hit = [q for q in bench.questions if any(s in gone for s in q.spans)]
        rows.append(
            {
                "strategy": name,
                "label": bench.strategies[name].label,
                "excerpts destroyed": len(lost),
                "of excerpts": n_excerpts,
                "questions destroyed": len(hit),
                "of questions": len(bench.questions),
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


def rank_strategies(bench: Bench, names: Sequence[str] = tuple(STRATEGIES)) -> dict[str, Ranks]:
    return {name: bench.ranks(name) for name in names}


def recall_table(ranks_by: Mapping[str, Ranks], destroyed: pd.DataFrame) -> pd.DataFrame:
    """Recall@k (all excerpts in the top k) with Wilson intervals, MRR, destroyed questions."""
    table = tables.interval_table(ranks_by)
    table["destroyed"] = destroyed.loc[list(ranks_by), "questions destroyed"].to_numpy()
    return table


def paired_view(ranks_by: Mapping[str, Ranks], ids: Sequence[str]) -> pd.DataFrame:
    """The chapter's paired comparisons between strategies on every question, Holm over them.
    Each question is its own cluster, so the question-level test is the per-query one."""
    view = tables.paired_view(ranks_by, nb03.PAIRS, nb03.PAIRED_KS, ids)
    return view[nb03.SHOWN].reset_index(drop=True)


def span_metrics(bench: Bench, name: str, k: int, rankings=None) -> pd.DataFrame:
    """Chroma's recall, precision and IoU of each question's top k, one row per question."""
    rankings = bench.dense_rankings(name) if rankings is None else rankings
    spans = bench.spans(name)
    rows = []
    for q, ranking in zip(bench.questions, rankings, strict=True):
        got = [spans[i] for i in ranking[:k]]
        s = span_scores(
            [(r.doc, r.start, r.end) for r in q.spans], [(g.doc, g.start, g.end) for g in got]
        )
        rows.append({"question": q.id, "corpus": q.spans[0].doc, **s._asdict()})
    return pd.DataFrame(rows)


def span_table(bench: Bench, names: Sequence[str] = tuple(STRATEGIES), by_corpus: bool = False):
    """Mean recall, precision and IoU at each k of :data:`SPAN_KS` with 95 % bootstrap
    intervals over questions (10,000 resamples, seed 0); per strategy, or per corpus too."""
    rows = []
    for name in names:
        for k in SPAN_KS:
            per_q = span_metrics(bench, name, k)
            groups = per_q.groupby("corpus", sort=False) if by_corpus else [("all", per_q)]
            for corpus, part in groups:
                row = {"strategy": name, "k": k}
                if by_corpus:
                    row["corpus"] = corpus
                    row["n"] = len(part)
                for m in METRICS:
                    lo, hi = bootstrap_mean(part[m].to_numpy())
                    row[m] = f"{part[m].mean():.3f} [{lo:.3f}, {hi:.3f}]"
                rows.append(row)
    keys = ["corpus", "strategy", "k"] if by_corpus else ["strategy", "k"]
    return (
        pd.DataFrame(rows)
        .set_index(keys)
        .sort_index(level=keys[: len(keys) - 1], sort_remaining=False)
    )


def span_means(bench: Bench, names: Sequence[str], k: int) -> pd.DataFrame:
    """Mean recall, precision and IoU at k per strategy, as floats (for readings and plots)."""
    return pd.DataFrame(
        {name: span_metrics(bench, name, k)[list(METRICS)].mean() for name in names}
    ).T


def best_boundary(ranks_by: Mapping[str, Ranks], k: int = 20) -> str:
    """The boundary strategy (C–F) with the highest Recall@k; ties go to the simpler one."""
    scores = {n: hits_at(ranks_by[n], k).mean() for n in ("C", "D", "E", "F")}
    return max(scores, key=lambda n: (scores[n], -ord(n)))


def rank_systems(bench: Bench, name: str) -> dict[str, Ranks]:
    """Dense, BM25 (the chapter's tokenizer) and hybrid (RRF) on one strategy."""
    runs = rank_all(bench.index(name), bench.questions, bench.encoder)
    spans = bench.spans(name)
    return {
        system: span_first_hit_ranks(r, spans, bench.references)
        for system, r in runs.by_system.items()
    }


def systems_view(ranks: Mapping[str, Ranks], ids: Sequence[str]) -> pd.DataFrame:
    view = tables.paired_view(ranks, nb04.PAIRS, nb04.PAIRED_KS, ids)
    return view[nb04.SHOWN].reset_index(drop=True)


def sweep_table(bench: Bench, k: int = SWEEP_K, context_tokens=None) -> pd.DataFrame:
    """Chunk size against what it costs: per size, without and with overlap, Recall@k (all
    excerpts), Chroma's metrics at k, the characters and generator tokens k chunks put in a
    prompt (mean over questions), and the chunks whose embedded text passes the window.

    ``context_tokens(texts) -> counts`` counts generator tokens (None: not counted).
    """
    from rag_lab.models.minilm import count_word_pieces

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
                f"past {WINDOW} pieces": int((pieces > WINDOW).sum()),
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


def claim_rows(
    lab: Lab,
    ours: Mapping[str, Ranks],
    theirs: Mapping[str, Ranks],
    our_systems: Mapping[str, Ranks],
    their_systems: Mapping[str, Ranks],
    our_destroyed: Mapping[str, int],
    their_destroyed: Mapping[str, int],
    ids: Sequence[str],
) -> pd.DataFrame:
    """Each of the chapter's claims, its verdict on our corpus and on Chroma's, side by side."""
    our_ids = tables.question_ids(lab.queries)
    our_view = tables.paired_view(ours, nb03.PAIRS, nb03.PAIRED_KS, our_ids).set_index(
        ["a", "b", "k"]
    )
    their_view = tables.paired_view(theirs, nb03.PAIRS, nb03.PAIRED_KS, ids).set_index(
        ["a", "b", "k"]
    )
    our_sys = tables.paired_view(our_systems, nb04.PAIRS, nb04.PAIRED_KS, our_ids).set_index(
        ["a", "b", "k"]
    )
    their_sys = tables.paired_view(their_systems, nb04.PAIRS, nb04.PAIRED_KS, ids).set_index(
        ["a", "b", "k"]
    )
    rows = []
    for strategy, claim, holds in COUNT_CLAIMS:
        o, t = our_destroyed[strategy], their_destroyed[strategy]
        rows.append(
            {
                "claim": f"{claim} ({strategy})",
                "ours": f"{o} of {len(lab.qset.questions)} questions",
                "ours: verdict": "reproduces" if holds(o) else "does not reproduce",
                "Chroma's": f"{t} of {len(ids)} questions",
                "Chroma's: verdict": "reproduces" if holds(t) else "does not reproduce",
            }
        )
    judged = [(our_view, their_view, a, b, 20, d, c) for a, b, d, c in nb03.CLAIMS]
    judged.append((our_view, their_view, "B", "A", 8, ">", "overlap beats blind cuts"))
    judged += [(our_sys, their_sys, a, b, k, d, c) for a, b, k, d, c in nb04.CLAIMS]
    for o_view, t_view, a, b, k, direction, claim in judged:
        o, t = o_view.loc[(a, b, k)], t_view.loc[(a, b, k)]
        sign = "≈" if direction == "=" else direction
        rows.append(
            {
                "claim": f"{a} {sign} {b} at R@{k}: {claim}",
                "ours": f"{o['by question']} (Holm {o['p Holm']})",
                "ours: verdict": tables.claim_verdict(o, a, b, direction),
                "Chroma's": f"{t['here']} (Holm {t['p Holm']})",
                "Chroma's: verdict": tables.claim_verdict(t, a, b, direction),
            }
        )
    return pd.DataFrame(rows).set_index("claim")


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
    recall: pd.DataFrame,
    destroyed: pd.DataFrame,
    claims: pd.DataFrame,
    sweep: pd.DataFrame,
    best: str,
    k: int = SWEEP_K,
) -> str:
    """The notebook's reading, computed from its tables."""
    agree = (claims["ours: verdict"] == claims["Chroma's: verdict"]).sum()
    differ = claims.index[claims["ours: verdict"] != claims["Chroma's: verdict"]]
    a, c = destroyed.loc["A"], destroyed.loc["C"]
    r20 = {n: recall.loc[n, "R@20"].split()[0] for n in recall.index}
    by_r = sweep[f"R@{k}"]
    lines = [
        f"- **Blind cuts** destroy {a['excerpts destroyed']} of {a['of excerpts']} excerpts "
        f"({a['questions destroyed']} of {a['of questions']} questions can never be answered); "
        f"boundaries destroy {c['excerpts destroyed']} ({c['questions destroyed']} questions).",
        "- **R@20** (every excerpt of the question in the top 20): "
        + ", ".join(f"{n} {v}" for n, v in r20.items())
        + f". The best boundary strategy is {best}.",
        f"- **Chunk size**: R@{k} is highest at {by_r.idxmax()} ({by_r.max():.3f}) and lowest at "
        f"{by_r.idxmin()} ({by_r.min():.3f}); {sweep.loc[by_r.idxmax(), f'chars for {k}']:.0f} "
        f"against {sweep.loc[by_r.idxmin(), f'chars for {k}']:.0f} characters of context "
        f"for {k} chunks.",
        f"- **Side by side**: the two corpora agree on {agree} of {len(claims)} claims"
        + (f"; they differ on: {'; '.join(differ)}." if len(differ) else "."),
    ]
    return "\n".join(lines)
