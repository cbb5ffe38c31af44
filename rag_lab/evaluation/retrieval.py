"""First-stage retrieval measured: dense over every chunking, and dense, BM25 and hybrid on one.

Each suite returns a :class:`Retrieval`: the first-hit ranks of every system (one per
query, in the query set's order), their :class:`~rag_lab.evaluation.recall.RecallTable`
and the :class:`~rag_lab.evaluation.paired.PairedTable` of the comparisons asked (the
family Holm corrects over). Queries are clustered by the question they ask.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rag_lab.evaluation.chapter import STRATEGY_PAIRS, SYSTEM_PAIRS
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.paired import PairedTable, paired_table
from rag_lab.evaluation.recall import KS, RecallTable, recall_table
from rag_lab.evaluation.runs import Rankings, dense_ranks, rank_all, split_by_phrasing
from rag_lab.metrics import Ranks, hits_at
from rag_lab.questions import Query

STRATEGY_KS = (8, 20)
"""The cutoffs at which strategies are compared (the chapter's)."""
SYSTEM_KS = (1, 4, 8, 20)
"""The cutoffs at which dense, BM25 and hybrid are compared."""
PHRASING_KS = (1, 8, 20)
TWO_BY_TWO_KS = (1, 8)


@dataclass(frozen=True)
class Retrieval:
    """Several systems on the same queries: ranks, recall with intervals, paired tests."""

    ranks: dict[str, list[int | None]]
    recall: RecallTable
    paired: PairedTable
    clusters: tuple[Hashable, ...]
    """The question each query asks (every query its own, for independent questions)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "recall": self.recall.to_json(),
            "ranks": self.ranks,
            "paired": self.paired.to_json(),
        }


def compare(
    ranks: Mapping[str, Ranks],
    pairs: Sequence[tuple[str, str]],
    paired_ks: Sequence[int],
    clusters: Sequence[Hashable] | None = None,
    ks: Sequence[int] = KS,
    *,
    recall_by_cluster: bool = True,
) -> Retrieval:
    """Recall@``ks`` of every system and the paired family ``pairs`` × ``paired_ks``.

    ``clusters`` name the question of each query: the paired tests count wins over them,
    and (``recall_by_cluster``) Recall@k gets Wilson intervals over questions too. Independent
    questions (one query each) need nothing beside Wilson's interval: pass False.
    """
    units = (
        tuple(clusters) if clusters is not None else tuple(range(len(next(iter(ranks.values())))))
    )
    return Retrieval(
        {name: list(r) for name, r in ranks.items()},
        recall_table(ranks, ks, clusters if recall_by_cluster else None),
        paired_table(ranks, pairs, paired_ks, clusters),
        units,
    )


# --- dense retrieval over every chunking ---------------------------------------------------


@dataclass(frozen=True)
class Strategies(Retrieval):
    """Dense retrieval over each chunking, and the same per phrasing of the questions."""

    by_phrasing: RecallTable
    destroyed: Destroyed | None = None
    sections: bool = True
    """Whether the documents have sections: without them a header is the document's name
    on every chunk, and the header claims cannot be tested."""

    def recall_view(self) -> pd.DataFrame:
        """The recall table as shown, with each strategy's destroyed answers beside it."""
        view = self.recall.view()
        if self.destroyed is not None:
            view["destroyed"] = [self.destroyed.count(s) for s in view.index]
        return view

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "by phrasing": self.by_phrasing.to_json()}


def rank_strategies(lab: Lab) -> dict[str, list[int | None]]:
    """First-hit ranks of every query under dense retrieval, for each chunking."""
    return {name: dense_ranks(lab.index(name), lab.queries, lab.encoder) for name in lab.chunks_by}


def by_phrasing(ranks_by: Mapping[str, Ranks], queries: Sequence[Query]) -> dict[str, Ranks]:
    """Ranks per strategy and phrasing, keyed ``"A course"``, ``"A ticket"``, …"""
    return {
        f"{name} {phrasing}": r
        for name in ranks_by
        for phrasing, r in split_by_phrasing(ranks_by[name], queries).items()
    }


def strategies(
    lab: Lab,
    destroyed: Destroyed | None = None,
    pairs: Sequence[tuple[str, str]] = STRATEGY_PAIRS,
) -> Strategies:
    """Dense retrieval over the lab's chunkings, compared pairwise at :data:`STRATEGY_KS`."""
    sections = any(c.section for chunks in lab.chunks_by.values() for c in chunks)
    return strategies_of(rank_strategies(lab), lab.queries, destroyed, pairs, sections=sections)


def strategies_of(
    ranks_by: Mapping[str, Ranks],
    queries: Sequence[Query],
    destroyed: Destroyed | None = None,
    pairs: Sequence[tuple[str, str]] = STRATEGY_PAIRS,
    *,
    sections: bool = True,
) -> Strategies:
    """:func:`strategies` from ranks already computed."""
    clusters = [q.question.id for q in queries]
    base = compare(ranks_by, pairs, STRATEGY_KS, clusters)
    phrasing = recall_table(by_phrasing(ranks_by, queries), PHRASING_KS)
    return Strategies(
        base.ranks, base.recall, base.paired, base.clusters, phrasing, destroyed, sections
    )


# --- dense, BM25 and hybrid on one chunking ------------------------------------------------


@dataclass(frozen=True)
class Systems(Retrieval):
    """Dense, BM25 and their reciprocal rank fusion on one chunking."""

    strategy: str = "E"

    def two_by_two(self, k: int, a: str = "dense", b: str = "BM25") -> pd.DataFrame:
        """Queries hit or missed at ``k`` by ``a`` (rows) and ``b`` (columns)."""
        return two_by_two(self.ranks[a], self.ranks[b], k, (a, b))

    def to_json(self) -> dict[str, Any]:
        return {"strategy": self.strategy, **super().to_json()}


def rank_systems(lab: Lab, strategy: str = "E") -> tuple[Rankings, dict[str, list[int | None]]]:
    """Dense, BM25 and hybrid rankings of every query on one chunking, and their first hits."""
    index = lab.index(strategy)
    rankings = rank_all(index, lab.queries, lab.encoder)
    return rankings, rankings.ranks(index)


def systems(
    lab: Lab, strategy: str = "E", pairs: Sequence[tuple[str, str]] = SYSTEM_PAIRS
) -> Systems:
    """Dense, BM25 and hybrid on ``strategy``, compared pairwise at :data:`SYSTEM_KS`."""
    _, ranks = rank_systems(lab, strategy)
    return systems_of(ranks, lab.clusters, strategy, pairs)


def systems_of(
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable] | None,
    strategy: str = "E",
    pairs: Sequence[tuple[str, str]] = SYSTEM_PAIRS,
) -> Systems:
    """:func:`systems` from ranks already computed."""
    base = compare(ranks, pairs, SYSTEM_KS, clusters)
    return Systems(base.ranks, base.recall, base.paired, base.clusters, strategy)


def two_by_two(a: Ranks, b: Ranks, k: int, names: tuple[str, str]) -> pd.DataFrame:
    """Queries hit or missed at k by each of two systems: where they agree and where not."""
    ha, hb = hits_at(a, k), hits_at(b, k)
    rows = {
        f"{names[0]} hit": [int((ha & hb).sum()), int((ha & ~hb).sum())],
        f"{names[0]} miss": [int((~ha & hb).sum()), int((~ha & ~hb).sum())],
    }
    return pd.DataFrame(rows, index=[f"{names[1]} hit", f"{names[1]} miss"]).T
