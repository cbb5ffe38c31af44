"""Where a needle lies in a document: verbatim, else up to whitespace; and, when it is in
neither way, how near it comes (the validator's hint).

Documentation is often hard-wrapped: a sentence the question file writes on one line breaks
across two in the document. :func:`verbatim` finds a needle as it is; only where it is not
found so does :func:`spaced` match it with each run of whitespace in it standing for any run
of whitespace (line breaks, repeated spaces, tabs) and for nothing else. Either way the
offsets are into the document's own text, so ``text[start:end]`` is the passage as the
document has it, line breaks included.

>>> text = "A tensor is an\\narray of numbers."
>>> verbatim("tensor is an array", text)
[]
>>> (span,) = matches(spaced("tensor is an array"), text)
>>> span, text[span[0] : span[1]]
((2, 20), 'tensor is an\\narray')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_lab.text import shorten

HINT_PREFIX = 30
"""A needle not found is hinted at when at least its first this many characters are found."""

Span = tuple[int, int]


@dataclass(frozen=True)
class Found:
    """Where a needle lies: ``text[start:end]`` of document ``doc``. ``exact`` when that
    slice is the needle itself; otherwise it equals the needle up to whitespace."""

    doc: str
    start: int
    end: int
    exact: bool


def verbatim(needle: str, text: str) -> list[Span]:
    """The non-overlapping occurrences of ``needle`` in ``text``, left to right (as
    :meth:`str.count` counts them; the first starts at ``text.index(needle)``)."""
    spans, i = [], text.find(needle)
    while i >= 0 and needle:
        spans.append((i, i + len(needle)))
        i = text.find(needle, i + len(needle))
    return spans


def spaced(needle: str, flags: int = 0) -> re.Pattern[str]:
    """``needle`` as a pattern in which each run of whitespace matches any run of whitespace.

    >>> spaced("a  b\\tc").pattern
    'a\\\\s+b\\\\s+c'
    """
    return re.compile(r"\s+".join(re.escape(word) for word in needle.split()), flags)


def matches(pattern: re.Pattern[str], text: str) -> list[Span]:
    """The non-overlapping matches of ``pattern`` (from :func:`spaced`) in ``text``."""
    return [m.span() for m in pattern.finditer(text)] if pattern.pattern else []


def line_of(text: str, offset: int) -> int:
    """The 1-based line of ``text`` that character ``offset`` is on."""
    return text.count("\n", 0, offset) + 1


def near_miss(needle: str, text: str) -> str | None:
    """How near ``needle``, found in ``text`` neither verbatim nor up to whitespace, comes:
    found when case is ignored, or the longest start of it (at least :data:`HINT_PREFIX`
    characters) that is found, and where each differs; ``None`` when neither.

    >>> near_miss("A tensor.", "x\\nthe a Tensor.")
    "at line 2 if case is ignored: 'a Tensor.'"
    >>> doc = "A tensor holds numbers of one\\ntype; always."
    >>> print(near_miss("A tensor holds numbers of one type, always.", doc))
    ... # doctest: +NORMALIZE_WHITESPACE
    its first 34 characters are at line 1, then it differs: the needle goes on ', always.',
    the document '; always.'
    """
    if found := spaced(needle, re.IGNORECASE).search(text):
        return (
            f"at line {line_of(text, found.start())} if case is ignored: {shorten(found[0], 80)!r}"
        )
    if len(needle) <= HINT_PREFIX or not spaced(needle[:HINT_PREFIX]).search(text):
        return None
    known, unknown = HINT_PREFIX, len(needle)  # the start found, and one that is not
    while unknown - known > 1:  # a longer start is found only where a shorter one is
        mid = (known + unknown) // 2
        known, unknown = (mid, unknown) if spaced(needle[:mid]).search(text) else (known, mid)
    known = len(needle[:known].rstrip())  # a space it ends on was not compared: whitespace
    found = spaced(needle[:known]).search(text)  # matches whitespace only between words
    assert found is not None
    return (
        f"its first {known} characters are at line {line_of(text, found.start())}, then it "
        f"differs: the needle goes on {needle[known : known + 20]!r}, "
        f"the document {text[found.end() : found.end() + 20]!r}"
    )
