"""Lost answers and missing questions: the gate's first rule, question by question.

A query *flips* when its first hit crosses one of the ks between two runs (:class:`Flip`).
A question is **lost** when one of its queries was found within some k by the baseline and
is not found within that k by the new run (:class:`Lost`: the unit is the question, however
many of its queries or ks were lost); it is **missing** when the baseline asked one of its
queries and the new run did not (:class:`Missing`: the question dropped from the file, or
one of its phrasings). Both are read from the deployment records of two reports
(:mod:`rag_lab.evaluation.deploy`), with no statistics: a loss the test over a few
questions cannot see still fails the gate (:mod:`rag_lab.evaluation.regression`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Flip:
    """A query whose first hit crossed one of the ks between the runs."""

    query: str
    question: str
    baseline_rank: int | None
    new_rank: int | None
    lost: tuple[int, ...]
    """The ks at which it was found and is now lost."""
    found: tuple[int, ...]
    top_chunk: str
    """The chunk it now gets first."""
    was_top_chunk: str

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "question": self.question,
            "baseline rank": self.baseline_rank,
            "new rank": self.new_rank,
            "lost at k": list(self.lost),
            "found at k": list(self.found),
            "top chunk now": self.top_chunk,
            "top chunk before": self.was_top_chunk,
        }


@dataclass(frozen=True)
class Lost:
    """A question the baseline found within k and the new run does not: its lost queries."""

    question: str
    queries: tuple[Flip, ...]

    @property
    def ks(self) -> tuple[int, ...]:
        """Every k at which one of its queries was lost, smallest first."""
        return tuple(sorted({k for f in self.queries for k in f.lost}))

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "lost at k": list(self.ks),
            "queries": [f.to_json() for f in self.queries],
        }


@dataclass(frozen=True)
class Missing:
    """A question the baseline asked and the new run did not (all or some of its queries)."""

    question: str
    queries: tuple[str, ...]
    """The baseline's queries of it that the new run lacks."""
    whole: bool
    """The whole question is gone (else only these phrasings of it)."""
    changed: bool = False
    """Its queries keep their ids but ask something else (a new phrasing or answer)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "queries": list(self.queries),
            "whole": self.whole,
            "changed": self.changed,
        }


def flips(pairs: Sequence[tuple[Mapping, Mapping]], ks: Sequence[int]) -> list[Flip]:
    """The queries of ``pairs`` (baseline row, new row) whose first hit crossed a k."""
    out = []
    for old, new in pairs:
        lost = tuple(k for k in ks if hit(old["rank"], k) and not hit(new["rank"], k))
        found = tuple(k for k in ks if not hit(old["rank"], k) and hit(new["rank"], k))
        if lost or found:
            top = new.get("top chunk", "?"), old.get("top chunk", "?")
            out.append(
                Flip(new["id"], new["question"], old["rank"], new["rank"], lost, found, *top)
            )
    return out


def lost_questions(flipped: Sequence[Flip]) -> tuple[Lost, ...]:
    """The questions with a query lost at some k, in the order their first one flipped."""
    by_question: dict[str, list[Flip]] = {}
    for f in flipped:
        if f.lost:
            by_question.setdefault(f.question, []).append(f)
    return tuple(Lost(q, tuple(fs)) for q, fs in by_question.items())


def asked_anew(old_d: Mapping[str, Any], new_d: Mapping[str, Any]) -> set[str]:
    """The query ids both runs hold whose digests of what they ask differ (a question that kept
    its id while its phrasing or answer changed); reports without digests hold none."""
    old = {q["id"]: q.get("asks") for q in old_d["queries"]}
    return {
        q["id"]
        for q in new_d["queries"]
        if None not in (q.get("asks"), old.get(q["id"])) and q["asks"] != old[q["id"]]
    }


def missing_questions(old_d: Mapping[str, Any], new_d: Mapping[str, Any]) -> tuple[Missing, ...]:
    """The baseline's questions the new run did not ask, whole or in part (its queries by
    id), in the baseline's order: a query asked anew (:func:`asked_anew`) is not the
    baseline's, so its question is missing too, marked ``changed``."""
    anew = asked_anew(old_d, new_d)
    asked = {q["id"] for q in new_d["queries"]} - anew
    new_questions = set(new_d["questions"])
    unasked: dict[str, list[str]] = {}
    for q in old_d["queries"]:
        if q["id"] not in asked:
            unasked.setdefault(q["question"], []).append(q["id"])
    out = []
    for q in old_d["questions"]:
        ids = tuple(unasked.get(q, ()))
        if q not in new_questions or ids:
            out.append(Missing(q, ids, q not in new_questions, bool(anew.intersection(ids))))
    return tuple(out)


def hit(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k
