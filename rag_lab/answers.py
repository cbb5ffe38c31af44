"""A generated answer's ``[n]`` markers, mapped to the citations the server built.

The model writes numbers; only the server knows what they stand for. :func:`map_citations`
resolves each number against the citations of :func:`rag_lab.citations.build_context`,
flags numbers that name no source and answers that cite nothing, and :func:`render` shows
the result with the server's own links, section labels and distances.

What counts as a marker (:func:`parse_markers`):

- ``[1]``; a list inside one pair of brackets, ``[1, 2]`` or ``[1; 2]``; adjacent markers
  ``[1][2]``; a range ``[1-3]`` (or with an en dash), read as 1, 2, 3;
- nothing inside Markdown code (fenced blocks or inline backticks), where ``x[0]`` is an
  index, not a citation;
- no other spelling: ``(1)``, ``Source 1`` or ``[Source 1]`` are not what the model was
  asked to write, so an answer that uses only those cites nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.citations import Citation

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
"""Fenced blocks (an unclosed fence runs to the end, as a truncated answer leaves it) and spans."""
_MARKER = re.compile(r"\[\s*(\d+(?:\s*(?:[,;]|-|–)\s*\d+)*)\s*\]")
_ITEM = re.compile(r"(\d+)\s*(?:-|–)\s*(\d+)|(\d+)")
_MAX_RANGE = 20
"""A range longer than this (``[1-999]``) is read as its two ends, not expanded."""

DECLINE_PHRASES = (
    "do not contain",
    "does not contain",
    "don't contain",
    "doesn't contain",
    "do not mention",
    "does not mention",
    "do not provide",
    "does not provide",
    "no information",
    "not mentioned",
    "cannot answer",
    "can't answer",
    "unable to answer",
)
"""Phrases that mark an answer as the model declining; the instructions ask it to say the
sources "do not contain" the answer, and these are that sentence's common variants."""


@dataclass(frozen=True)
class CitedAnswer:
    """A generated answer with its markers resolved against the server's citations."""

    text: str
    markers: tuple[int, ...]
    """Every number the model wrote, in order, repeats kept."""
    cited: tuple[Citation, ...]
    """The citations those numbers name, each once, in order of first mention."""
    invalid: tuple[int, ...]
    """Numbers that name no source, each once, in order of first mention."""
    sources: tuple[Citation, ...]
    """Every citation the model was shown, cited or not."""

    @property
    def cites_nothing(self) -> bool:
        """No marker at all: the answer cannot be traced to any source."""
        return not self.markers

    @property
    def has_invalid(self) -> bool:
        return bool(self.invalid)

    @property
    def only_markers(self) -> bool:
        """Markers and punctuation, no words: a citation with no claim attached (``[1]``)."""
        return bool(self.markers) and not re.search(r"\w", _MARKER.sub("", self.text))


def parse_markers(text: str) -> list[int]:
    """The citation numbers in ``text``, in order, repeats kept (rules in the module doc).

    >>> parse_markers("Mean [1], not sum [2][1]; see [1-3]. Code: `x[0]`.")
    [1, 2, 1, 1, 2, 3]
    """
    numbers: list[int] = []
    for match in _MARKER.finditer(_CODE.sub(_blank, text)):
        numbers.extend(_expand(match.group(1)))
    return numbers


def map_citations(text: str, citations: Sequence[Citation]) -> CitedAnswer:
    """Resolve each ``[n]`` in ``text`` to the citation numbered ``n``, flagging the rest."""
    by_index = {c.index: c for c in citations}
    markers = parse_markers(text)
    first = list(dict.fromkeys(markers))
    return CitedAnswer(
        text=text,
        markers=tuple(markers),
        cited=tuple(by_index[n] for n in first if n in by_index),
        invalid=tuple(n for n in first if n not in by_index),
        sources=tuple(citations),
    )


def declines(text: str) -> bool:
    """True when the answer says the sources do not answer (any of :data:`DECLINE_PHRASES`).

    A deliberately simple rule, case-insensitive and with curly apostrophes straightened;
    it misses paraphrases such as "the sources are silent on", so it undercounts declines.
    """
    lowered = text.lower().replace("\u2019", "'")
    return any(phrase in lowered for phrase in DECLINE_PHRASES)


def render(answer: CitedAnswer) -> str:
    """Markdown: the answer with each valid ``[n]`` linked to the server's locator, then
    the cited sources (document, section, ``#char`` link, distance) and any flags.

    A number that names no source is kept as written and marked *(no such source)*; the
    text inside code is left untouched.
    """
    by_index = {c.index: c for c in answer.sources}
    body = _rewrite_markers(answer.text, by_index)
    lines = [body.strip(), ""]
    if answer.cited:
        lines.append("**Sources**")
        lines.append("")
        lines.extend(
            f"{c.index}. [{_text(c.document_name)} — {_text(c.locator_label)}]({c.href}) "
            f"· distance {c.distance:.3f}"
            for c in answer.cited
        )
    else:
        lines.append("**No source cited**: nothing in this answer can be traced to a source.")
    if answer.invalid:
        shown = ", ".join(f"[{n}]" for n in answer.invalid)
        lines.append("")
        lines.append(
            f"**Invalid markers**: {shown} name no source (the model was shown "
            f"{len(answer.sources)})."
        )
    return "\n".join(lines)


def _blank(match: re.Match[str]) -> str:
    # Same length, so offsets in the blanked text still point into the original.
    return " " * len(match.group(0))


def _expand(inside: str) -> list[int]:
    numbers: list[int] = []
    for lo, hi, single in _ITEM.findall(inside):
        if single:
            numbers.append(int(single))
            continue
        a, b = int(lo), int(hi)
        numbers.extend(range(a, b + 1) if 0 <= b - a <= _MAX_RANGE else (a, b))
    return numbers


def _rewrite_markers(text: str, by_index: dict[int, Citation]) -> str:
    code = _CODE.sub(_blank, text)
    out, last = [], 0
    for match in _MARKER.finditer(code):
        out.append(text[last : match.start()])
        parts = []
        for n in _expand(match.group(1)):
            c = by_index.get(n)
            parts.append(f"[[{n}]]({c.href})" if c else f"[{n}] *(no such source)*")
        out.append(" ".join(parts))
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _text(title: str) -> str:
    """A title as a Markdown link's words: brackets escaped and ``<`` written as an entity,
    so that a title cannot end the link or open an HTML tag."""
    for raw, escaped in (("\\", "\\\\"), ("[", "\\["), ("]", "\\]"), ("<", "&lt;")):
        title = title.replace(raw, escaped)
    return title
