"""The records of a question file (:mod:`rag_lab.questions` reads and validates them).

A :class:`Question` is answered by one or more :class:`Passage` (a verbatim needle in a
document) and asked in one or more phrasings: the chapter's named pair ``course`` and
``ticket``, or a list (``phrasings:``, named ``"1"``, ``"2"``, … by position). Each phrasing
is one :class:`Query`; a chunk is relevant to it when it holds any of the question's
passages (:func:`rag_lab.metrics.relevant_chunks`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.errors import BadInput
from rag_lab.needles import Found
from rag_lab.text import flat

PHRASINGS = ("course", "ticket")
"""The chapter's two named phrasings; a question may list its own instead."""
NEGATIVE_KINDS = ("uncovered", "offtopic")


def _fold(found: Found | None) -> Callable[[str], str] | None:
    return flat if found is not None and not found.exact else None


@dataclass(frozen=True)
class Passage:
    """One verbatim needle in one document that answers a question."""

    doc: str
    needle: str
    found: Found | None = field(default=None, compare=False, repr=False)
    """Where :func:`rag_lab.questions.load_questions` found it; ``None`` when built by hand."""

    @property
    def fold(self) -> Callable[[str], str] | None:
        """How a chunk's text is read to hold the needle (:func:`rag_lab.chunking.containing`):
        as it is (``None``), or whitespace normalised (:func:`rag_lab.text.flat`) when the
        needle was found in its document only up to whitespace."""
        return _fold(self.found)


@dataclass(frozen=True)
class Question:
    """A question: its first passage (``doc``, ``needle``, ``found``) and ``others``; its
    phrasings ``course`` and ``ticket``, or ``asked`` (a list, then both are ``None``)."""

    id: str
    doc: str
    needle: str
    course: str | None = None
    ticket: str | None = None
    found: Found | None = field(default=None, compare=False, repr=False)
    """Where :func:`rag_lab.questions.load_questions` found the needle; ``None`` for a
    question built by hand."""
    others: tuple[Passage, ...] = ()
    """The passages after the first: a chunk that holds any one of them is relevant too."""
    asked: tuple[str, ...] = ()
    """The phrasings when listed (``phrasings:``), instead of ``course`` and ``ticket``."""

    def __post_init__(self) -> None:
        named = (self.course, self.ticket)
        if self.asked and named != (None, None):
            raise ValueError(f"{self.id}: phrasings listed and named (course, ticket) at once")
        if not self.asked and None in named:
            raise ValueError(f"{self.id}: needs course and ticket, or a list of phrasings")

    @property
    def passages(self) -> tuple[Passage, ...]:
        """Every passage that answers the question, the first one first."""
        return (Passage(self.doc, self.needle, self.found), *self.others)

    @property
    def phrasings(self) -> tuple[str, ...]:
        """The names of its phrasings, in order: ``course``, ``ticket``, or ``1``, ``2``, …"""
        return tuple(str(i) for i in range(1, len(self.asked) + 1)) if self.asked else PHRASINGS

    def text(self, phrasing: str) -> str:
        """The words of phrasing ``phrasing`` (a name of :attr:`phrasings`)."""
        if phrasing not in self.phrasings:
            raise KeyError(f"{self.id} has no phrasing {phrasing!r} (it has {self.phrasings})")
        return self.asked[int(phrasing) - 1] if self.asked else getattr(self, phrasing)

    @property
    def fold(self) -> Callable[[str], str] | None:
        """The first passage's rule (:attr:`Passage.fold`)."""
        return _fold(self.found)


@dataclass(frozen=True)
class Negative:
    id: str
    kind: str
    query: str


@dataclass(frozen=True)
class Query:
    """One phrasing of one question: what a retriever is actually asked."""

    question: Question
    phrasing: str
    """A name of :attr:`Question.phrasings`: ``"course"``, ``"ticket"``, or ``"1"``, ``"2"``, …"""

    @property
    def id(self) -> str:
        return f"{self.question.id}/{self.phrasing}"

    @property
    def text(self) -> str:
        return self.question.text(self.phrasing)

    @property
    def needle(self) -> str:
        """The first passage's needle."""
        return self.question.needle

    @property
    def passages(self) -> tuple[Passage, ...]:
        return self.question.passages

    @property
    def fold(self) -> Callable[[str], str] | None:
        return self.question.fold


@dataclass(frozen=True)
class Expected:
    """Counts a particular question file promises (the chapter's design, or yours)."""

    questions: int
    negatives: dict[str, int]
    min_documents: int = 1


CHAPTER_DESIGN = Expected(
    questions=32, negatives={"uncovered": 21, "offtopic": 9}, min_documents=15
)
"""The chapter's ground truth: 32 questions (64 queries), 21 + 9 negatives, ≥ 15 documents."""


@dataclass(frozen=True)
class QuestionSet:
    questions: tuple[Question, ...]
    negatives: tuple[Negative, ...]
    path: Path | None = None
    notes: tuple[Violation, ...] = ()
    """What the validator noticed that is not a violation: a needle found only up to
    whitespace."""

    def queries(self, phrasings: Sequence[str] | None = None) -> list[Query]:
        """Every question in every phrasing: every question's first phrasing (the course
        one), then every second (the ticket), and so on; a question with fewer phrasings
        is left out of the later rounds. With ``phrasings``, those names in that order."""
        if phrasings is not None:
            return [Query(q, p) for p in phrasings for q in self.questions if p in q.phrasings]
        rounds = max((len(q.phrasings) for q in self.questions), default=0)
        return [
            Query(q, q.phrasings[i])
            for i in range(rounds)
            for q in self.questions
            if i < len(q.phrasings)
        ]


@dataclass(frozen=True)
class Violation:
    line: int | None
    id: str | None
    field: str | None
    message: str

    def render(self, path: Path | str) -> str:
        where = f"{path}:{self.line}" if self.line else str(path)
        what = " ".join(x for x in (self.id, self.field) if x)
        return f"{where}: {what + ': ' if what else ''}{self.message}"


class QuestionsError(BadInput, ValueError):
    """The question file breaks one or more rules; ``violations`` lists them all, ``notes``
    what else the validator noticed (:attr:`QuestionSet.notes`)."""

    def __init__(
        self, path: Path | str, violations: Sequence[Violation], notes: Sequence[Violation] = ()
    ) -> None:
        self.path = path
        self.violations = list(violations)
        self.notes = list(notes)
        lines = "\n  ".join(v.render(path) for v in self.violations)
        super().__init__(f"{len(self.violations)} problem(s) in {path}:\n  {lines}")
