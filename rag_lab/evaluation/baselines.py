"""The chapter's dense baseline beside the lab's, and what separates them.

The chapter's dense retrieval (all-MiniLM-L6-v2 over its boundary + header chunks) finds the
needle first for 0.094 of its 64 queries, with an MRR of 0.280; the lab's strategy E does much
better on its own corpus. A claim built on the chapter's baseline ("BM25 doubles dense's
top-1") depends on how weak that baseline is, so the two are set side by side, with the
lab's split by what could explain the gap: the phrasing (course-style or ticket-style
questions), the needle's length (a longer needle gives a chunk more to match), and how many
chunks compete.

Intervals are by question (32 questions, two phrasings each): Wilson's over questions for a
rate (:func:`rag_lab.stats.clustered_wilson`), a percentile bootstrap of the per-question
mean for MRR (:func:`rag_lab.stats.bootstrap_mean`). Each is a value claim declared in
``rag_lab/claims/chapter.yaml`` (the chapter's number and its margin), judged by
:func:`rag_lab.claims.judge.judge`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_lab.evaluation import chapter
from rag_lab.evaluation.ledger import Entry, value_entry
from rag_lab.metrics import Ranks, hits_at
from rag_lab.questions import Query
from rag_lab.stats import bootstrap_mean, clustered_wilson, per_question


def reciprocal(ranks: Ranks) -> np.ndarray:
    return np.array([1.0 / r if r is not None else 0.0 for r in ranks])


def r1_and_mrr(ranks: Ranks, clusters: Sequence[str]) -> dict[str, tuple[float, float, float]]:
    """R@1 and MRR with their intervals by question: ``{"R@1": (value, lo, hi), "MRR": …}``."""
    hits = hits_at(ranks, 1)
    lo, hi = clustered_wilson(hits, clusters)
    rr = reciprocal(ranks)
    mlo, mhi = bootstrap_mean(per_question(rr, clusters))
    return {"R@1": (float(hits.mean()), lo, hi), "MRR": (float(rr.mean()), mlo, mhi)}


def _cell(v: tuple[float, float, float]) -> str:
    return f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"


def side_by_side(
    ranks: Ranks, queries: Sequence[Query], chunks: int, strategy: str = "E"
) -> pd.DataFrame:
    """The chapter's dense R@1 and MRR, ours overall, by phrasing and by needle length (the
    shorter and longer half of the needles, split at the median), with intervals."""
    clusters = [q.question.id for q in queries]
    lengths = np.array([len(q.needle) for q in queries])
    median = float(np.median(lengths))
    groups = {
        f"ours, dense {strategy}, all": np.ones(len(queries), dtype=bool),
        **{
            f"ours, {p} phrasing": np.array([q.phrasing == p for q in queries])
            for p in dict.fromkeys(q.phrasing for q in queries)
        },
        f"ours, needles ≤ {median:.0f} chars": lengths <= median,
        f"ours, needles > {median:.0f} chars": lengths > median,
    }
    rows = [
        {
            "": "the chapter, dense",
            "queries": chapter.CORPUS["queries"],
            "chunks": chapter.CHUNKS_PER_BOUNDARY_STRATEGY,
            "R@1": f"{chapter.RERANK_R1['dense']:.3f}",
            "MRR": f"{chapter.RERANK_MRR['dense']:.3f}",
        }
    ]
    for name, mask in groups.items():
        keep = np.flatnonzero(mask)
        m = r1_and_mrr([ranks[i] for i in keep], [clusters[i] for i in keep])
        rows.append(
            {
                "": name,
                "queries": len(keep),
                "chunks": chunks,
                "R@1": _cell(m["R@1"]),
                "MRR": _cell(m["MRR"]),
            }
        )
    return pd.DataFrame(rows).set_index("")


def entries(ranks: Ranks, queries: Sequence[Query], notebook: str = "03") -> list[Entry]:
    """The chapter's dense R@1 and MRR as values, against ours with their intervals."""
    clusters = [q.question.id for q in queries]
    m = r1_and_mrr(ranks, clusters)
    methods = {"R@1": "clustered_wilson", "MRR": "bootstrap_percentile"}
    out = []
    for metric, method in methods.items():
        value, lo, hi = m[metric]
        out.append(
            value_entry(
                f"dense-baseline-{metric}",
                notebook=notebook,
                benchmark="d2l",
                estimate=value,
                interval=(lo, hi),
                method=method,
                here="",  # the estimate and its interval are the whole result
            )
        )
    return out
