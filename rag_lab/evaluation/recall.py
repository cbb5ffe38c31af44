"""Recall@k and MRR of several systems on one query set, with intervals, as one record.

Per query, Wilson 95 % intervals (the chapter's); with ``clusters`` (the question each query
asks), also the interval that respects the design: Wilson's with the questions as the sample
(:func:`rag_lab.stats.clustered_wilson`). The record holds numbers; :meth:`view`
formats them for a table.

>>> t = recall_table({"a": [1, None, 3, 2]}, ks=(1, 4))
>>> t["a"].recall[4].hits, round(t["a"].mrr, 3), t["a"].no_hit
(3, 0.458, 1)
>>> t.view().loc["a", "R@4"]
'0.750 [0.301, 0.954]'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rag_lab.metrics import Ranks, Summary, hits_at, summary
from rag_lab.stats import clustered_wilson

KS = (1, 4, 8, 20)
"""The chapter's cutoffs."""


@dataclass(frozen=True)
class SystemRecall:
    """One system: :class:`~rag_lab.metrics.Summary` and, when clustered, per-k intervals."""

    name: str
    summary: Summary
    by_question: dict[int, tuple[float, float]] | None
    """k → 95 % interval of Recall@k with the questions as the sample (None: unclustered)."""

    @property
    def n(self) -> int:
        return self.summary.n

    @property
    def recall(self):
        return self.summary.recall

    @property
    def mrr(self) -> float:
        return self.summary.mrr

    @property
    def no_hit(self) -> int:
        return self.summary.no_hit

    def at(self, k: int) -> float:
        """Recall@k as a share."""
        return self.summary.recall[k].value


@dataclass(frozen=True)
class RecallTable:
    """Recall@k for each k of ``ks``, MRR and queries never hit, one row per system."""

    ks: tuple[int, ...]
    rows: tuple[SystemRecall, ...]

    def __getitem__(self, name: str) -> SystemRecall:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rows]

    def view(self, intervals: str = "both") -> pd.DataFrame:
        """As shown, one row per system: ``n``, then ``R@k`` as ``value [lo, hi]``, MRR to
        three decimals, ``no hit`` (queries whose needle no chunk holds).

        ``intervals`` says which interval ``R@k`` carries: ``"per query"`` Wilson's over the
        queries (the chapter's), ``"by question"`` Wilson's with the questions as the sample
        (the design's; clustered tables only), ``"both"`` the first in ``R@k`` and the second
        in ``R@k by question`` as ``[lo, hi]``.
        """
        if intervals not in ("both", "per query", "by question"):
            raise ValueError(
                f"intervals is 'both', 'per query' or 'by question', not {intervals!r}"
            )
        clustered = all(r.by_question is not None for r in self.rows)
        if intervals == "by question" and not clustered:
            raise ValueError("no interval by question: the table was made without clusters")
        out = pd.DataFrame(index=pd.Index(self.names))
        out["n"] = [r.n for r in self.rows]
        for k in self.ks:
            if intervals == "by question":
                out[f"R@{k}"] = [
                    f"{r.recall[k].value:.3f} {fmt_interval(r.by_question[k])}" for r in self.rows
                ]
                continue
            out[f"R@{k}"] = [
                f"{r.recall[k].value:.3f} [{r.recall[k].lo:.3f}, {r.recall[k].hi:.3f}]"
                for r in self.rows
            ]
            if intervals == "both" and clustered:
                out[f"R@{k} by question"] = [fmt_interval(r.by_question[k]) for r in self.rows]
        out["MRR"] = [f"{r.mrr:.3f}" for r in self.rows]
        out["no hit"] = [r.no_hit for r in self.rows]
        return out

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values: per system, n, hits, share and intervals per k, MRR, no hit."""
        return {
            r.name: {
                "n": r.n,
                "recall": {
                    str(k): {
                        "hits": rec.hits,
                        "value": rec.value,
                        "wilson": [rec.lo, rec.hi],
                        **({"by question": list(r.by_question[k])} if r.by_question else {}),
                    }
                    for k, rec in r.recall.items()
                },
                "MRR": r.mrr,
                "no hit": r.no_hit,
            }
            for r in self.rows
        }


def recall_table(
    systems: Mapping[str, Ranks],
    ks: Sequence[int] = KS,
    clusters: Sequence[Hashable] | None = None,
) -> RecallTable:
    """Each system's first-hit ranks summarised at ``ks`` (same query order for all)."""
    rows = []
    for name, ranks in systems.items():
        intervals = None
        if clusters is not None:
            intervals = {k: clustered_wilson(hits_at(ranks, k), clusters) for k in ks}
        rows.append(SystemRecall(name, summary(ranks, ks), intervals))
    return RecallTable(tuple(ks), tuple(rows))


def fmt_interval(interval: tuple[float, float]) -> str:
    """``[0.135, 0.334]``."""
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]"
