""" "Dense is weak on identifiers", read as the chapter means it: an interaction.

The claim is relative: BM25's advantage over dense is larger on questions that name an
identifier than on ordinary ones. Measured as a difference of differences by question: on
each identifier question (``data/probes.yaml``) BM25's hits minus dense's at Recall@k,
averaged; the same on the lab's ordinary questions; their difference, with a percentile
bootstrap interval that resamples each group of questions on its own
(:func:`rag_lab.stats.bootstrap_interaction`).

The claim is declared in ``rag_lab/claims/chapter.yaml`` (``identifier-interaction@R4``)
and judged on its interval alone (there is no sign test of a difference between two
independent groups of questions): :class:`rag_lab.claims.judge.IntervalRecord`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import pandas as pd

from rag_lab.claims.judge import IntervalRecord
from rag_lab.evaluation.ledger import Entry, entry
from rag_lab.metrics import Ranks, hits_at
from rag_lab.stats import bootstrap_interaction, per_question

KS = (1, 4, 8)
CLAIM_K = 4
"""The one k that carries the claim, fixed before looking: Recall@4, where the chapter compares
its hybrids. The table shows every k of :data:`KS`; judging all three would need a family
correction that a bootstrap interval per k does not carry."""
A, B = "BM25", "dense"
METHOD = "bootstrap_percentile_by_group"
"""The interval's method: :func:`rag_lab.stats.bootstrap_interaction`, each group of
questions resampled on its own."""


def gaps(ranks: Mapping[str, Ranks], clusters: Sequence[Hashable], k: int):
    """Per question: BM25's hits minus dense's at Recall@``k``, over its phrasings."""
    diff = hits_at(ranks[A], k).astype(float) - hits_at(ranks[B], k).astype(float)
    return per_question(diff, clusters)


def interaction_table(
    probe_ranks: Mapping[str, Ranks],
    probe_clusters: Sequence[Hashable],
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
    ks: Sequence[int] = KS,
) -> pd.DataFrame:
    """Per k: the BM25 − dense gap on identifier and on ordinary questions, and their
    difference with its bootstrap interval."""
    rows = []
    for k in ks:
        ident, ordinary = gaps(probe_ranks, probe_clusters, k), gaps(ranks, clusters, k)
        m, lo, hi = bootstrap_interaction(ident, ordinary)
        rows.append(
            {
                "k": k,
                "identifier gap": ident.mean(),
                "ordinary gap": ordinary.mean(),
                "interaction [95 % CI]": f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]",
                "questions": f"{len(ident)} + {len(ordinary)}",
            }
        )
    return pd.DataFrame(rows).set_index("k")


def entries(
    probe_ranks: Mapping[str, Ranks],
    probe_clusters: Sequence[Hashable],
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
    notebook: str = "04",
) -> list[Entry]:
    """The claim at :data:`CLAIM_K`: BM25's advantage over dense is larger on identifiers."""
    out = []
    for k in (CLAIM_K,):
        ident, ordinary = gaps(probe_ranks, probe_clusters, k), gaps(ranks, clusters, k)
        m, lo, hi = bootstrap_interaction(ident, ordinary)
        out.append(
            entry(
                f"identifier-interaction@R{k}",
                notebook=notebook,
                benchmark="d2l probes",
                record=IntervalRecord(m, (lo, hi), METHOD),
                here=f"{ident.mean():+.3f} vs {ordinary.mean():+.3f} by question "
                f"({len(ident)} and {len(ordinary)})",
                estimate=m,
                ci=(lo, hi),
                method=METHOD,
            )
        )
    return out
