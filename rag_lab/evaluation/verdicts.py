"""The one vocabulary of verdicts, and the record a claim is stored in.

A claim is a statement (usually the chapter's) judged against numbers measured here. Its
:class:`Verdict` is decided by code from those numbers, never typed, and compared as a value,
never as English: prose and tables render it last (:attr:`Verdict.label`).

>>> c = Claim("blind cuts destroy answers", "4 of 32", "8 of 32", Verdict.REPRODUCES)
>>> c.verdict is Verdict.REPRODUCES, c.verdict_text
(True, 'reproduces')
>>> Claim("x", "–", "2 of 6", Verdict.IN_PART, detail="for 2 of 6 readers").verdict_text
'reproduces for 2 of 6 readers'
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.evaluation.paired import Comparison, Finding


class Verdict(enum.Enum):
    """What the measurements say of a claim. The value is how it reads in a table."""

    REPRODUCES = "reproduces"
    """The numbers support the claim, by the test the design supports."""
    IN_PART = "in part only"
    """Some of the cases the claim covers hold, others do not (the detail says which)."""
    PER_QUERY_ONLY = "per query only"
    """Only the chapter's per-query test supports it; the question-level test does not."""
    NOT_REPRODUCED = "does not reproduce"
    """The support the claim needs is not there."""
    REVERSED = "reversed"
    """The numbers point the other way, significantly."""
    NOT_MEASURED = "not measured"
    """What the claim needs could not be run here (a model or a tool is missing)."""
    NOT_EXERCISED = "not exercised"
    """The run never reached the case the claim is about."""
    FIGURE = "measured"
    """A figure the chapter reports, set beside ours; nothing is claimed of it."""

    @property
    def label(self) -> str:
        return self.value

    @property
    def holds(self) -> bool:
        """True for a verdict that supports the claim (in full)."""
        return self is Verdict.REPRODUCES


_IN_PART_PREFIX = {Verdict.IN_PART: "reproduces", Verdict.NOT_REPRODUCED: "does not reproduce"}


@dataclass(frozen=True)
class Claim:
    """One claim, what the chapter reported, what was measured here, and the verdict.

    ``chapter`` and ``here`` are the evidence as it is shown (computed from records by the
    caller); ``verdict`` is decided from the numbers. ``detail`` qualifies the verdict where
    one label cannot say it all ("for 2 of 6 readers"); ``wording``, when given, replaces
    the rendered verdict entirely (for a verdict whose reason is part of it).
    """

    statement: str
    chapter: str
    here: str
    verdict: Verdict
    detail: str = ""
    wording: str = ""

    @property
    def verdict_text(self) -> str:
        """The verdict as a table shows it."""
        if self.wording:
            return self.wording
        if self.detail:
            return f"{_IN_PART_PREFIX.get(self.verdict, self.verdict.label)} {self.detail}"
        return self.verdict.label


DIRECTIONS = (">", "<", "=")
"""A claim that a is better than b, worse, or no different (the chapter's "no significant
difference")."""


def judge(comparison: Comparison, direction: str) -> Verdict:
    """The verdict on a claim that ``a`` is ``direction`` than ``b``, from one comparison.

    ``>``/``<``: reproduces when the question-level test, adjusted for the family, finds that
    direction; reversed when it finds the other; per query only when only the per-query test
    finds a difference; otherwise does not reproduce. ``=``: reproduces unless the
    question-level test finds a difference either way.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
    finding = comparison.finding
    significant = finding in (Finding.A_BETTER, Finding.B_BETTER)
    if direction == "=":
        return Verdict.NOT_REPRODUCED if significant else Verdict.REPRODUCES
    if finding is (Finding.A_BETTER if direction == ">" else Finding.B_BETTER):
        return Verdict.REPRODUCES
    if significant:
        return Verdict.REVERSED
    if finding is Finding.PER_QUERY_ONLY:
        return Verdict.PER_QUERY_ONLY
    return Verdict.NOT_REPRODUCED


def claims_markdown(claims: Sequence[Claim]) -> str:
    """A Markdown table of claims: the claim, the chapter's result, ours, the verdict."""
    lines = ["| claim | chapter | here | verdict |", "|---|---|---|---|"]
    lines += [f"| {c.statement} | {c.chapter} | {c.here} | {c.verdict_text} |" for c in claims]
    return "\n".join(lines)
