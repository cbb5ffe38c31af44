"""Notebook 04: dense, BM25 and their fusion on one chunking, worded against the chapter.

The measures are :func:`rag_lab.evaluation.retrieval.systems`'s (a
:class:`~rag_lab.evaluation.retrieval.Systems` record); this module lists the queries only one
retriever finds and reads the record.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_lab.evaluation import claims, ledger
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.recall import KS
from rag_lab.evaluation.retrieval import Systems
from rag_lab.experiments import wording
from rag_lab.metrics import hits_at, paired_at
from rag_lab.questions import Query


def found_by_one(systems: Systems, queries: Sequence[Query], k: int = 8) -> pd.DataFrame:
    """The queries that exactly one of dense and BM25 finds within ``k``, with all three ranks."""
    ranks = systems.ranks
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


def entries(systems: Systems) -> list[Entry]:
    """The chapter's claims about dense, BM25 and hybrid: this notebook's part of the ledger."""
    return claims.system_entries(systems, "04", "d2l")


def reading(systems: Systems) -> str:
    """The chapter's dense / BM25 / hybrid claims on one chunking, judged on the record."""
    judged = entries(systems)
    lines = [_top1(systems), _different_failures(systems), _hybrid_points(systems)]
    lines += [wording.entry_line(e) for e in judged]
    return "\n".join(lines) + "\n\n" + ledger.markdown(judged)


def _top1(s: Systems) -> str:
    r1 = {name: s.recall[name].at(1) for name in s.ranks}
    r8 = {name: s.recall[name].at(8) for name in s.ranks}
    top1 = paired_at(s.ranks["BM25"], s.ranks["dense"], 1)
    ratio = r1["BM25"] / r1["dense"] if r1["dense"] else float("inf")
    return (
        f"- **Top-1.** BM25 R@1 = {r1['BM25']:.3f}, dense {r1['dense']:.3f} ({ratio:.2f}×; "
        f"BM25 vs dense {top1}). The chapter's 'BM25 more than doubles dense top-1' "
        + ("reproduces." if ratio > 2 else "does not reproduce here.")
        + f"\n- **Rank 8.** dense {r8['dense']:.3f}, BM25 {r8['BM25']:.3f}."
    )


def _different_failures(s: Systems) -> str:
    d8, b8 = hits_at(s.ranks["dense"], 8), hits_at(s.ranks["BM25"], 8)
    only_d, only_b = int((d8 & ~b8).sum()), int((~d8 & b8).sum())
    return (
        f"- **Different failures.** At R@8, {only_d} queries are found only by dense and "
        f"{only_b} only by BM25: "
        + ("they fail on different queries." if only_d and only_b else "one dominates the other.")
    )


def _hybrid_points(s: Systems) -> str:
    hybrid, dense = s.recall["hybrid"], s.recall["dense"]
    below = [
        f"R@{k} ({hybrid.at(k):.3f} vs {dense.at(k):.3f})" for k in KS if hybrid.at(k) < dense.at(k)
    ]
    return "- **Hybrid against dense, point estimates.** " + (
        f"Fusion is below dense at {', '.join(below)}: adding BM25's ranking pushes down "
        "some chunks dense had found."
        if below
        else "Fusion is at least as good as dense at every k."
    )
