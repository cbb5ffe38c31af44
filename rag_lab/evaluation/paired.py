"""Paired comparisons of systems on the same queries: per query, per question, with Holm.

Each :class:`Comparison` holds the chapter's test (the exact sign test over queries, as if
they were independent) and, when queries are clustered by question, the sign test over
questions (:func:`rag_lab.stats.cluster_paired`) with its p adjusted by Holm over the whole
table, which is the family. What a comparison supports is a :class:`Finding`, read from the
adjusted question-level test alone.

>>> t = paired_table({"a": [1, 1, 1, None], "b": [None, None, 1, 1]}, [("a", "b")], [1])
>>> c = t.get("a", "b", 1)
>>> (c.per_query.wins, c.per_query.losses), c.finding.label("a", "b")
((2, 1), 'no difference shown')
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rag_lab.metrics import Ranks, hits_at
from rag_lab.stats import ALPHA, Difference, Paired, cluster_paired, holm, paired, paired_difference


class Finding(enum.Enum):
    """What one paired comparison of ``a`` and ``b`` supports."""

    A_BETTER = "a > b"
    """The question-level test, adjusted for the family, says a wins."""
    B_BETTER = "a < b"
    """The question-level test, adjusted for the family, says b wins."""
    PER_QUERY_ONLY = "per query only"
    """Only the chapter's per-query test finds a difference."""
    NONE = "no difference shown"
    """Neither test finds one (which is not evidence that there is none)."""

    def label(self, a: str, b: str) -> str:
        """How the finding reads in a table: ``E > A``, ``no difference shown``…"""
        if self is Finding.A_BETTER:
            return f"{a} > {b}"
        if self is Finding.B_BETTER:
            return f"{a} < {b}"
        return self.value


@dataclass(frozen=True)
class Comparison:
    """System ``a`` against ``b`` at Recall@``k``."""

    a: str
    b: str
    k: int
    per_query: Paired
    per_question: Paired | None
    """Over questions (None when the queries are not clustered)."""
    p_holm: float | None
    """The question-level p, Holm-adjusted over the table's family."""
    difference: Difference | None = None
    """Recall@k of ``a`` minus ``b`` by question, with its 95 % interval (when clustered)."""

    @property
    def finding(self) -> Finding:
        q = self.per_question
        if q is not None and self.p_holm is not None and self.p_holm < ALPHA:
            if q.wins != q.losses:
                return Finding.A_BETTER if q.wins > q.losses else Finding.B_BETTER
        if self.per_query.p < ALPHA and self.per_query.wins != self.per_query.losses:
            return Finding.PER_QUERY_ONLY
        return Finding.NONE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "a": self.a,
            "b": self.b,
            "k": self.k,
            "per query": _paired_json(self.per_query),
        }
        if self.per_question is not None:
            out |= {"per question": _paired_json(self.per_question), "p Holm": self.p_holm}
            out["finding"] = self.finding.label(self.a, self.b)
        if self.difference is not None:
            d = self.difference
            out["difference by question"] = {"estimate": d.estimate, "ci": [d.lo, d.hi]}
        return out


SHOWN = ["pair", "k", "a − b by question", "questions", "p", "per query", "chapter"]
"""The columns :meth:`PairedTable.view` shows by default: the effect and its interval, the
question-level test, the chapter's per-query test and the chapter's result. Verdicts are the
ledger's (:mod:`rag_lab.evaluation.ledger`), not this table's."""


@dataclass(frozen=True)
class PairedTable:
    """Every (pair, k) comparison of a family, in the order asked."""

    comparisons: tuple[Comparison, ...]

    def get(self, a: str, b: str, k: int) -> Comparison:
        for c in self.comparisons:
            if (c.a, c.b, c.k) == (a, b, k):
                return c
        raise KeyError((a, b, k))

    def frame(self) -> pd.DataFrame:
        """Numbers, one row per comparison: ``a``, ``b``, ``k``; the per-query ``wins``,
        ``losses``, ``p``; when clustered, ``q wins``, ``q losses``, ``q p``, the numeric
        ``p Holm`` and the ``finding`` (a :class:`Finding`)."""
        rows = []
        for c in self.comparisons:
            row: dict[str, Any] = {
                "a": c.a,
                "b": c.b,
                "k": c.k,
                "wins": c.per_query.wins,
                "losses": c.per_query.losses,
                "p": c.per_query.p,
            }
            if c.per_question is not None:
                row |= {
                    "q wins": c.per_question.wins,
                    "q losses": c.per_question.losses,
                    "q p": c.per_question.p,
                    "p Holm": c.p_holm,
                    "finding": c.finding,
                }
            rows.append(row)
        return pd.DataFrame(rows)

    def view(
        self,
        reference: Callable[[str, str, int], str] | None = None,
        columns: Sequence[str] | None = SHOWN,
    ) -> pd.DataFrame:
        """As shown, one row per comparison: ``pair`` (``E vs A``), ``k``, ``a − b by
        question`` (the difference in Recall@k with its 95 % interval), ``questions`` (the
        questions a wins and loses), ``p`` (their sign test, unadjusted), ``per query`` (the
        chapter's test) and ``chapter``: what ``reference(a, b, k)`` says for the same
        comparison (empty without one). ``columns=None`` keeps every column, :meth:`frame`'s
        counts, ``p Holm`` and the table's ``finding`` too."""
        table = self.frame()
        table.insert(0, "pair", [f"{c.a} vs {c.b}" for c in self.comparisons])
        table["per query"] = [str(c.per_query) for c in self.comparisons]
        if "finding" in table:
            table["a − b by question"] = [
                str(c.difference) if c.difference is not None else "–" for c in self.comparisons
            ]
            table["questions"] = [
                f"+{c.per_question.wins}/\N{MINUS SIGN}{c.per_question.losses}"
                for c in self.comparisons
            ]
            table["p"] = [f"{c.per_question.p:#.2g}" for c in self.comparisons]
            table["p Holm"] = [f"{p:#.2g}" for p in table["p Holm"]]
            table["finding"] = [c.finding.label(c.a, c.b) for c in self.comparisons]
        table["chapter"] = [reference(c.a, c.b, c.k) if reference else "" for c in self.comparisons]
        if columns is None:
            return table
        return table[[col for col in columns if col in table.columns]]

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.comparisons]


def paired_table(
    systems: Mapping[str, Ranks],
    pairs: Sequence[tuple[str, str]],
    ks: Sequence[int],
    clusters: Sequence[Hashable] | None = None,
) -> PairedTable:
    """``a`` against ``b`` for each pair and each k; Holm over all of them when clustered."""
    keys = [(a, b, k) for a, b in pairs for k in ks]
    per_query = [paired(hits_at(systems[a], k), hits_at(systems[b], k)) for a, b, k in keys]
    if clusters is None:
        comparisons = [
            Comparison(a, b, k, r, None, None) for (a, b, k), r in zip(keys, per_query, strict=True)
        ]
        return PairedTable(tuple(comparisons))
    by_q = [
        cluster_paired(hits_at(systems[a], k), hits_at(systems[b], k), clusters) for a, b, k in keys
    ]
    adjusted = holm([r.p for r in by_q])
    differences = [
        paired_difference(hits_at(systems[a], k), hits_at(systems[b], k), clusters)
        for a, b, k in keys
    ]
    comparisons = [
        Comparison(a, b, k, r, q, p, d)
        for (a, b, k), r, q, p, d in zip(keys, per_query, by_q, adjusted, differences, strict=True)
    ]
    return PairedTable(tuple(comparisons))


def _paired_json(p: Paired) -> dict[str, Any]:
    return {"wins": p.wins, "losses": p.losses, "ties": p.ties, "p": p.p}
