"""Questions answered by excerpts at character offsets (Chroma's format), measured.

A question is answered within k when every excerpt lies whole inside the document span of
some chunk among the top k (:func:`rag_lab.metrics.span_first_hit_rank`), so Recall@k and
MRR apply as for needles; Chroma's own character-level recall, precision and IoU
(:func:`rag_lab.metrics.span_scores`) are measured beside them. All documents share one
index per strategy, as in Chroma's evaluation. The questions are independent (one phrasing
each), so every question is its own cluster.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rag_lab import dense
from rag_lab.chunking import STRATEGIES, Strategy, chunk_corpus, sized
from rag_lab.documents import Document
from rag_lab.evaluation import fusion, hypotheses
from rag_lab.evaluation.chapter import STRATEGY_PAIRS, SYSTEM_PAIRS
from rag_lab.evaluation.jsonable import frame_json
from rag_lab.evaluation.lab import Chunked
from rag_lab.evaluation.ledger import Entry, mean_entry
from rag_lab.evaluation.retrieval import STRATEGY_KS, SYSTEM_KS, Retrieval, compare
from rag_lab.evaluation.runs import rank_all
from rag_lab.metrics import (
    Ranks,
    chunk_spans,
    destroyed_spans,
    hits_at,
    span_first_hit_ranks,
    span_scores,
)
from rag_lab.models.encoder import Encoder
from rag_lab.models.minilm import count_word_pieces, minilm_fingerprint
from rag_lab.ranking import order
from rag_lab.search import TextEncoder
from rag_lab.sources.chroma import load as load_chroma
from rag_lab.spans import Span, SpanQuestion
from rag_lab.stats import bootstrap_mean, wilson

SIZES = (256, 512, 1024)
"""Chunk sizes in characters of the size sweep; 512 is the chapter's."""
SPAN_KS = (5, 10)
"""Chroma's metrics are reported at these k."""
SWEEP_K = SPAN_KS[0]
"""The k of the chunk-size sweep, and of the overlap's precision claims."""
OVERLAP_PAIRS = (("D", "C"), ("F", "E"))
"""Each chunking with the overlap against the same without (the precision claims)."""
METRICS = ("recall", "precision", "iou")


@dataclass
class Bench(Chunked):
    """Chroma's corpora and questions, chunked every way the notebook measures; a question is
    answered by a chunk that covers its excerpts (:meth:`ranks`)."""

    questions: list[SpanQuestion] = field(kw_only=True)
    strategies: dict[str, Strategy] = field(kw_only=True)
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
    return Bench(list(docs), encoder, chunks_by, questions=list(questions), strategies=named)


def chroma(
    path: str | os.PathLike | None = None, encoder: TextEncoder | None = None, *, sweep: bool = True
) -> Bench:
    """Chroma's benchmark loaded and verified (:func:`rag_lab.sources.chroma.load`), chunked
    every way (:func:`bench_of`; ``encoder`` None: the packaged one); nothing embedded yet."""
    return bench_of(*load_chroma(path), encoder or Encoder(), sweep=sweep)


def embed_all(bench: Bench) -> list[str]:
    """Embed every chunking (from the cache where it has them); one line per strategy."""
    lines = []
    for name, chunks in bench.chunks_by.items():
        bench.index(name)
        fresh = getattr(bench.encoder, "last", None)
        computed = fresh.computed if fresh is not None else len(chunks)
        lines.append(f"{name}: {len(chunks)} chunks, {computed} embedded now")
    return lines


def destroyed_ids(bench: Bench, names: Sequence[str] = tuple(STRATEGIES)) -> dict[str, tuple]:
    """Per strategy, the ids of the questions one of whose excerpts no chunk holds whole."""
    every = [s for r in bench.references for s in r]
    out = {}
    for name in names:
        gone = set(destroyed_spans(bench.spans(name), every))
        out[name] = tuple(
            i for i, q in zip(bench.ids, bench.questions, strict=True) if set(q.spans) & gone
        )
    return out


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


def span_table(
    bench: Bench, names: Sequence[str] = tuple(STRATEGIES), by_corpus: bool = False
) -> pd.DataFrame:
    """Mean recall, precision and IoU at each k of :data:`SPAN_KS` with 95 % bootstrap
    intervals over questions (10,000 resamples, seed 0); per strategy, or per corpus too.
    Numbers: for each metric ``m``, columns ``m``, ``m lo`` and ``m hi``."""
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
                    row |= {m: float(part[m].mean()), f"{m} lo": lo, f"{m} hi": hi}
                rows.append(row)
    keys = ["corpus", "strategy", "k"] if by_corpus else ["strategy", "k"]
    return (
        pd.DataFrame(rows)
        .set_index(keys)
        .sort_index(level=keys[: len(keys) - 1], sort_remaining=False)
    )


def span_view(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`span_table` as shown: each metric as ``mean [lo, hi]``."""
    view = table.drop(columns=[f"{m} {end}" for m in METRICS for end in ("lo", "hi")])
    for m in METRICS:
        view[m] = [
            f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
            for v, lo, hi in zip(table[m], table[f"{m} lo"], table[f"{m} hi"], strict=True)
        ]
    return view


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


# --- the headline measures on span questions, as one record ---------------------------------


@dataclass(frozen=True)
class SpanEvaluation:
    """Destroyed excerpts, dense retrieval over the six chunkings, Chroma's metrics, and
    dense, BM25 and hybrid on the best boundary strategy."""

    destroyed: pd.DataFrame
    """:func:`destroyed_table`."""
    strategies: Retrieval
    scores: pd.DataFrame
    """:func:`span_table` of the six chunkings (numbers)."""
    best: str
    """The boundary strategy with the highest dense R@20 (:func:`best_boundary`)."""
    systems: Retrieval
    questions: int
    excerpts: int
    sections: bool = False
    """Whether the documents have sections (Chroma's corpora have none)."""
    lost: Mapping[str, tuple] = field(default_factory=dict)
    """Per strategy, the ids of the questions it destroys (:func:`destroyed_ids`)."""
    precision: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Per strategy, each question's Chroma precision of its top ``SPAN_KS[0]``."""

    def recall_view(self) -> pd.DataFrame:
        """The dense recall table as shown, with each strategy's destroyed questions."""
        view = self.strategies.recall.view()
        view["destroyed"] = self.destroyed.loc[view.index, "questions destroyed"].to_numpy()
        return view

    def to_json(self) -> dict[str, Any]:
        return {
            "destroyed": frame_json(self.destroyed),
            "dense by strategy": self.strategies.to_json(),
            "span metrics": frame_json(self.scores.reset_index()),
            "systems": {"strategy": self.best, **self.systems.to_json()},
        }


def measure(bench: Bench) -> SpanEvaluation:
    """The headline measures of ``bench`` (its six chunkings; any sweep is left out)."""
    six = list(STRATEGIES)
    embed_all(bench)
    ranks_by = rank_strategies(bench, six)
    best = best_boundary(ranks_by)
    ids = bench.ids
    return SpanEvaluation(
        destroyed_table(bench, six),
        compare(ranks_by, STRATEGY_PAIRS, STRATEGY_KS, ids, recall_by_cluster=False),
        span_table(bench, six),
        best,
        compare(rank_systems(bench, best), SYSTEM_PAIRS, SYSTEM_KS, ids, recall_by_cluster=False),
        len(bench.questions),
        sum(len(r) for r in bench.references),
        any(c.section for c in bench.chunks_by["C"]),
        destroyed_ids(bench, six),
        {n: span_metrics(bench, n, SPAN_KS[0])["precision"].to_numpy() for n in six},
    )


def entries(theirs: SpanEvaluation, notebook: str = "10") -> list[Entry]:
    """The chapter's claims on Chroma's benchmark; without sections, no header claim is testable."""
    destroyed = {s: int(theirs.destroyed.loc[s, "questions destroyed"]) for s in ("A", "B")}
    p, at = theirs.precision, {"notebook": notebook, "benchmark": "chroma"}
    return [
        *hypotheses.destroyed_entries(destroyed, theirs.questions, notebook, "chroma"),
        *hypotheses.strategy_entries(
            theirs.strategies, notebook, "chroma", sections=theirs.sections, destroyed=theirs.lost
        ),
        *hypotheses.system_entries(theirs.systems, notebook, "chroma"),
        *(
            mean_entry(
                f"{a}<{b}@P{SWEEP_K}", **at, a=p[a], b=p[b], clusters=range(theirs.questions)
            )
            for a, b in OVERLAP_PAIRS
        ),
    ]


# --- beyond the headline: the size sweep, the fusions, the geometry's inputs ---------------


def sweep_table(bench: Bench, context_tokens, k: int = SWEEP_K) -> pd.DataFrame:
    """Per size, without and with overlap: what k chunks retrieve and cost in a prompt."""
    window = minilm_fingerprint().max_seq_length
    rows = []
    for size, base in itertools.product(SIZES, "CD"):
        name = sized(base, size).name
        texts = [c.text for c in bench.chunks_by[name]]
        tokens = np.array(context_tokens(texts))
        top = [r[:k] for r in bench.dense_rankings(name)]
        hits = hits_at(bench.ranks(name), k)
        lo, hi = wilson(int(hits.sum()), len(hits))
        means = span_metrics(bench, name, k)[list(METRICS)].mean().rename({"iou": "IoU"})
        row = {"strategy": name, "size": size, "overlap": base == "D"}
        row |= {f"R@{k}": hits.mean(), f"R@{k} lo": lo, f"R@{k} hi": hi}
        row |= {f"{m} @{k}": v for m, v in means.items()}
        row |= {"chunks": len(texts)}
        row[f"characters for {k} chunks"] = np.mean([sum(len(texts[i]) for i in t) for t in top])
        row[f"generator tokens for {k}"] = float(np.mean([tokens[t].sum() for t in top]))
        row[f"chunks past {window} word-pieces"] = int((count_word_pieces(texts) > window).sum())
        rows.append(row)
    return pd.DataFrame(rows).set_index("strategy")


def fusion_runs(bench: Bench, name: str) -> fusion.FusionRuns:
    """:func:`rag_lab.evaluation.fusion.fuse` on strategy ``name``, a hit being Chroma's."""
    s = fusion.scores(bench.index(name), [q.text for q in bench.questions], bench.encoder)
    spans, references = bench.spans(name), bench.references
    return fusion.fuse(s, lambda r: span_first_hit_ranks(r, spans, references), bench.ids)


def geometry_inputs(bench: Bench, theirs: SpanEvaluation) -> tuple[list[int], dict[str, int]]:
    """One needle per excerpt: each excerpt's length, and the excerpts A and B destroy."""
    lengths = [s.end - s.start for r in bench.references for s in r]
    destroyed = {s: int(theirs.destroyed.loc[s, "excerpts destroyed"]) for s in ("A", "B")}
    return lengths, destroyed
