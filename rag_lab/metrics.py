"""Retrieval metrics from first-hit ranks: Recall@k, MRR and their summaries.

Everything here is a function of one number per query: the 1-based rank of the
first relevant chunk in the full ranking, or ``None`` when no relevant chunk is
ranked at all. "Recall@k" is the chapter's name for the fraction of queries
with at least one relevant chunk in the top k (success@k, or hit rate, in TREC
terms); it is what the user of a RAG answer experiences, since one relevant
chunk in the context suffices.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_lab.chunking import Chunk
from rag_lab.questions import Query
from rag_lab.stats import Paired, paired, wilson

Ranks = Sequence[int | None]
"""Per query, the 1-based rank of the first hit, or ``None`` if there is none."""


def first_hit_rank(ranking: Sequence[int], relevant: Collection[int]) -> int | None:
    """1-based position of the first id of ``ranking`` that is in ``relevant``, else ``None``."""
    return next((r for r, doc in enumerate(ranking, start=1) if doc in relevant), None)


def first_hit_ranks(
    rankings: Sequence[Sequence[int]], relevant_sets: Sequence[Collection[int]]
) -> list[int | None]:
    """:func:`first_hit_rank` for each query; both arguments are indexed by query."""
    if len(rankings) != len(relevant_sets):
        raise ValueError(f"{len(rankings)} rankings but {len(relevant_sets)} relevant sets")
    return [first_hit_rank(r, rel) for r, rel in zip(rankings, relevant_sets, strict=True)]


def relevant_chunks(chunks: Sequence[Chunk], queries: Sequence[Query]) -> list[set[int]]:
    """For each query, the positions of the chunks whose ``text`` contains its needle whole."""
    by_needle: dict[str, set[int]] = {}
    for q in queries:
        if q.needle not in by_needle:
            by_needle[q.needle] = {i for i, c in enumerate(chunks) if q.needle in c.text}
    return [by_needle[q.needle] for q in queries]


def hits_at(ranks: Ranks, k: int) -> np.ndarray:
    """Boolean per query: is the first hit within the top ``k`` (k >= 1)?"""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return np.array([r is not None and r <= k for r in ranks], dtype=bool)


def recall_at(ranks: Ranks, k: int) -> float:
    """Fraction of queries whose first hit is within the top ``k``, in [0, 1]."""
    _check_ranks(ranks)
    return float(hits_at(ranks, k).mean())


def mrr(ranks: Ranks) -> float:
    """Mean reciprocal rank over the full ranking: mean of ``1 / rank``, 0 for ``None``."""
    _check_ranks(ranks)
    return float(np.mean([0.0 if r is None else 1.0 / r for r in ranks]))


@dataclass(frozen=True)
class RecallAt:
    """Recall@k of ``n`` queries with its Wilson interval ``[lo, hi]``."""

    k: int
    hits: int
    n: int
    lo: float
    hi: float

    @property
    def value(self) -> float:
        return self.hits / self.n


@dataclass(frozen=True)
class Summary:
    """One system on one query set: Recall@k with intervals, MRR, queries without a hit."""

    n: int
    recall: dict[int, RecallAt]
    mrr: float
    no_hit: int
    level: float


def summary(ranks: Ranks, ks: Sequence[int] = (1, 4, 8, 20), level: float = 0.95) -> Summary:
    """Recall@k for each ``k`` in ``ks`` with Wilson intervals at ``level``, MRR, and misses."""
    _check_ranks(ranks)
    n = len(ranks)
    recall = {}
    for k in ks:
        hits = int(hits_at(ranks, k).sum())
        recall[k] = RecallAt(k, hits, n, *wilson(hits, n, level))
    no_hit = sum(r is None for r in ranks)
    return Summary(n=n, recall=recall, mrr=mrr(ranks), no_hit=no_hit, level=level)


def summary_table(
    systems: Mapping[str, Ranks], ks: Sequence[int] = (1, 4, 8, 20), level: float = 0.95
) -> pd.DataFrame:
    """One row per system, indexed by name.

    Columns: ``n``; ``R@k``, ``R@k lo``, ``R@k hi`` for each k; ``MRR``; ``no hit``.
    """
    rows = {}
    for name, ranks in systems.items():
        s = summary(ranks, ks, level)
        row: dict[str, float] = {"n": s.n}
        for k, rec in s.recall.items():
            row |= {f"R@{k}": rec.value, f"R@{k} lo": rec.lo, f"R@{k} hi": rec.hi}
        rows[name] = row | {"MRR": s.mrr, "no hit": s.no_hit}
    return pd.DataFrame.from_dict(rows, orient="index")


def paired_at(a: Ranks, b: Ranks, k: int) -> Paired:
    """System ``a`` against ``b`` on the same queries: wins, losses and ties at ``k``."""
    return paired(hits_at(a, k), hits_at(b, k))


def paired_table(
    systems: Mapping[str, Ranks], pairs: Sequence[tuple[str, str]], ks: Sequence[int]
) -> pd.DataFrame:
    """One row per (pair, k): ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``.

    ``systems`` maps a name to its first-hit ranks (one per query, same query order for
    every system); a query is a hit at k when its rank is <= k.
    """
    rows = []
    for a, b in pairs:
        for k in ks:
            r = paired_at(systems[a], systems[b], k)
            rows.append({"a": a, "b": b, "k": k, "wins": r.wins, "losses": r.losses, "p": r.p})
    return pd.DataFrame(rows, columns=["a", "b", "k", "wins", "losses", "p"])


def _check_ranks(ranks: Ranks) -> None:
    if len(ranks) == 0:
        raise ValueError("no queries")
    if any(r is not None and r < 1 for r in ranks):
        raise ValueError("ranks are 1-based: every rank must be >= 1 or None")
