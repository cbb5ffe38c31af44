"""Notebook 04: dense, BM25 and their fusion on one chunking, and where they disagree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.experiments import tables
from rag_lab.experiments.lab import Lab
from rag_lab.experiments.runs import Rankings, rank_all
from rag_lab.experiments.tables import KS, chapter_paired
from rag_lab.metrics import Ranks, hits_at, mrr, paired_at
from rag_lab.questions import Query

PAIRS = (("BM25", "dense"), ("hybrid", "BM25"), ("hybrid", "dense"))
"""The chapter's paired comparisons between systems."""
PAIRED_KS = (1, 4, 8)
COLORS = {"dense": "#1565c0", "BM25": "#2e7d32", "hybrid": "#e65100"}
TWO_BY_TWO_KS = (1, 8)


def rank_systems(lab: Lab, strategy: str = "E") -> tuple[Rankings, dict[str, list[int | None]]]:
    """Dense, BM25 and hybrid rankings of every query on one chunking, and their first hits."""
    index = lab.index(strategy)
    rankings = rank_all(index, lab.queries, lab.encoder)
    return rankings, rankings.ranks(index)


def paired_view(ranks: Mapping[str, Ranks]) -> pd.DataFrame:
    """The chapter's paired comparisons between systems, here and in the chapter."""
    view = tables.paired_view(ranks, PAIRS, ks=PAIRED_KS)
    return view[["a", "b", "k", "here", "chapter"]].reset_index(drop=True)


def recall_figure(ranks: Mapping[str, Ranks], strategy: str = "E"):
    return tables.recall_curve_figure(ranks, f"Strategy {strategy}: dense, BM25 and RRF", COLORS)


def dense_vs_bm25(ranks: Mapping[str, Ranks], k: int) -> pd.DataFrame:
    """Queries hit or missed at ``k`` by dense (rows) and BM25 (columns)."""
    return two_by_two(ranks["dense"], ranks["BM25"], k, ("dense", "BM25"))


def found_by_one(ranks: Mapping[str, Ranks], queries: Sequence[Query], k: int = 8) -> pd.DataFrame:
    """The queries that exactly one of dense and BM25 finds within ``k``, with all three ranks."""
    found = pd.DataFrame(
        {
            "query": [q.id for q in queries],
            "text": [q.text for q in queries],
            "dense rank": ranks["dense"],
            "BM25 rank": ranks["BM25"],
            "hybrid rank": ranks["hybrid"],
        }
    )
    dense_hit, bm25_hit = hits_at(ranks["dense"], k), hits_at(ranks["BM25"], k)
    return found[dense_hit != bm25_hit].sort_values("query").set_index("query")


def two_by_two(a: Ranks, b: Ranks, k: int, names: tuple[str, str]) -> pd.DataFrame:
    """Queries hit or missed at k by each of two systems: where they agree and where not."""
    ha, hb = hits_at(a, k), hits_at(b, k)
    rows = {
        f"{names[0]} hit": [int((ha & hb).sum()), int((ha & ~hb).sum())],
        f"{names[0]} miss": [int((~ha & hb).sum()), int((~ha & ~hb).sum())],
    }
    return pd.DataFrame(rows, index=[f"{names[1]} hit", f"{names[1]} miss"]).T


def reading(ranks: Mapping[str, Ranks]) -> str:
    """The chapter's dense / BM25 / hybrid claims on strategy E, judged on our numbers."""
    r1 = {name: float(hits_at(r, 1).mean()) for name, r in ranks.items()}
    r8 = {name: float(hits_at(r, 8).mean()) for name, r in ranks.items()}
    top1 = paired_at(ranks["BM25"], ranks["dense"], 1)
    at8 = paired_at(ranks["dense"], ranks["BM25"], 8)
    ratio = r1["BM25"] / r1["dense"] if r1["dense"] else float("inf")
    lines = [
        f"- **Top-1.** BM25 R@1 = {r1['BM25']:.3f}, dense {r1['dense']:.3f} ({ratio:.2f}×; "
        f"BM25 vs dense {top1}). The chapter's 'BM25 more than doubles dense top-1' "
        + ("reproduces." if ratio > 2 else "does not reproduce here."),
        f"- **Rank 8.** dense {r8['dense']:.3f}, BM25 {r8['BM25']:.3f} (dense vs BM25 {at8}). "
        + (
            "BM25 loses by rank 8, as in the chapter."
            if r8["dense"] > r8["BM25"]
            else "BM25 does not lose by rank 8 here."
        ),
    ]
    d1, b1 = hits_at(ranks["dense"], 8), hits_at(ranks["BM25"], 8)
    only_d, only_b = int((d1 & ~b1).sum()), int((~d1 & b1).sum())
    lines.append(
        f"- **Different failures.** At R@8, {only_d} queries are found only by dense and "
        f"{only_b} only by BM25: "
        + ("they fail on different queries." if only_d and only_b else "one dominates the other.")
    )
    metrics = {
        name: [float(hits_at(r, k).mean()) for k in KS] + [mrr(r)] for name, r in ranks.items()
    }
    best_everywhere = all(
        h >= max(d, b)
        for h, d, b in zip(metrics["hybrid"], metrics["dense"], metrics["BM25"], strict=True)
    )
    vs_dense, vs_bm25 = (
        paired_at(ranks["hybrid"], ranks["dense"], 4),
        paired_at(ranks["hybrid"], ranks["BM25"], 4),
    )
    lines.append(
        "- **Hybrid.** "
        + (
            "It is at least as good as both on every point estimate (R@1/4/8/20, MRR). "
            if best_everywhere
            else "It is not the best on every point estimate. "
        )
        + f"At R@4: vs dense {vs_dense} (the chapter: {chapter_paired('hybrid', 'dense', 4)}), "
        f"vs BM25 {vs_bm25} (the chapter: {chapter_paired('hybrid', 'BM25', 4)}). "
        + (
            "Hybrid is not significantly better than dense, as in the chapter."
            if not (vs_dense.significant_win)
            else "Here hybrid is significantly better than dense, unlike in the chapter."
        )
    )
    return "\n".join(lines)
