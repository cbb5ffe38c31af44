"""Notebook 04: dense, BM25 and their fusion on one chunking, and where they disagree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.experiments import tables
from rag_lab.experiments.lab import Lab
from rag_lab.experiments.runs import Rankings, rank_all
from rag_lab.experiments.tables import KS
from rag_lab.metrics import Ranks, hits_at, paired_at
from rag_lab.questions import Query

PAIRS = (("BM25", "dense"), ("hybrid", "BM25"), ("hybrid", "dense"))
"""The chapter's paired comparisons between systems."""
PAIRED_KS = (1, 4, 8, 20)
COLORS = {"dense": "#1565c0", "BM25": "#2e7d32", "hybrid": "#e65100"}
TWO_BY_TWO_KS = (1, 8)


def rank_systems(lab: Lab, strategy: str = "E") -> tuple[Rankings, dict[str, list[int | None]]]:
    """Dense, BM25 and hybrid rankings of every query on one chunking, and their first hits."""
    index = lab.index(strategy)
    rankings = rank_all(index, lab.queries, lab.encoder)
    return rankings, rankings.ranks(index)


CLAIMS = (
    ("BM25", "dense", 8, "<", "BM25 loses to dense by rank 8"),
    ("hybrid", "dense", 4, "=", "fusion is not significantly better than dense"),
    ("hybrid", "BM25", 4, "=", "fusion is not significantly better than BM25"),
)
"""(a, b, k, the direction the chapter reports, what it means), judged on the paired view;
``"="`` is the chapter's "no significant difference"."""
SHOWN = ["a", "b", "k", "here", "by question", "p Holm", "verdict", "chapter"]


def paired_view(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> pd.DataFrame:
    """The paired comparisons between systems: per query (the chapter's test), per question
    with Holm over this family, the verdict, and the chapter's result."""
    return _view(ranks, queries)[SHOWN].reset_index(drop=True)


def _view(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> pd.DataFrame:
    return tables.paired_view(ranks, PAIRS, PAIRED_KS, tables.question_ids(queries))


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


def reading(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> str:
    """The chapter's dense / BM25 / hybrid claims on strategy E, judged on our numbers."""
    r1 = {name: float(hits_at(r, 1).mean()) for name, r in ranks.items()}
    r8 = {name: float(hits_at(r, 8).mean()) for name, r in ranks.items()}
    top1 = paired_at(ranks["BM25"], ranks["dense"], 1)
    ratio = r1["BM25"] / r1["dense"] if r1["dense"] else float("inf")
    lines = [
        f"- **Top-1.** BM25 R@1 = {r1['BM25']:.3f}, dense {r1['dense']:.3f} ({ratio:.2f}×; "
        f"BM25 vs dense {top1}). The chapter's 'BM25 more than doubles dense top-1' "
        + ("reproduces." if ratio > 2 else "does not reproduce here."),
        f"- **Rank 8.** dense {r8['dense']:.3f}, BM25 {r8['BM25']:.3f}.",
    ]
    d1, b1 = hits_at(ranks["dense"], 8), hits_at(ranks["BM25"], 8)
    only_d, only_b = int((d1 & ~b1).sum()), int((~d1 & b1).sum())
    lines.append(
        f"- **Different failures.** At R@8, {only_d} queries are found only by dense and "
        f"{only_b} only by BM25: "
        + ("they fail on different queries." if only_d and only_b else "one dominates the other.")
    )
    metrics = {name: [float(hits_at(r, k).mean()) for k in KS] for name, r in ranks.items()}
    below = [
        f"R@{k} ({h:.3f} vs {d:.3f})"
        for k, h, d in zip(KS, metrics["hybrid"], metrics["dense"], strict=True)
        if h < d
    ]
    lines.append(
        "- **Hybrid against dense, point estimates.** "
        + (
            f"Fusion is below dense at {', '.join(below)}: adding BM25's ranking pushes down "
            "some chunks dense had found."
            if below
            else "Fusion is at least as good as dense at every k."
        )
    )
    view = _view(ranks, queries).set_index(["a", "b", "k"])
    for a, b, k, direction, claim in CLAIMS:
        lines.append(tables.claim_line(view.loc[(a, b, k)], a, b, direction, claim, k=k))
    return "\n".join(lines) + "\n\n" + tables.claim_table(view, CLAIMS)
