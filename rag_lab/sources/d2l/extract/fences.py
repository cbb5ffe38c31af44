"""Split a d2l Markdown source into fenced code blocks and the Markdown between them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPENING = re.compile(r"^(`{3,})(.*)$")


@dataclass(frozen=True)
class Fence:
    """One fenced block: its opening line (```` ```info ````) and the lines inside."""

    opening: str
    body: tuple[str, ...]

    @property
    def info(self) -> str:
        """The info string after the backticks, e.g. ``{.python .input}`` or ``bash``."""
        return self.opening.lstrip("`").strip()

    def lines(self) -> list[str]:
        """The block as lines, fences included."""
        ticks = self.opening[: len(self.opening) - len(self.opening.lstrip("`"))]
        return [self.opening, *self.body, ticks]


@dataclass(frozen=True)
class Text:
    """A run of Markdown lines outside any fence."""

    lines: tuple[str, ...]


Segment = Fence | Text


def split_fences(source: str) -> list[Segment]:
    """Cut ``source`` into alternating :class:`Text` and :class:`Fence` segments.

    A fence opens with a line of three or more backticks and closes with a line
    holding the same backticks and nothing else; a fence left open runs to the
    end of the file, as in CommonMark.
    """
    segments: list[Segment] = []
    text: list[str] = []
    lines = source.split("\n")
    i = 0
    while i < len(lines):
        opening = _OPENING.match(lines[i])
        if opening is None:
            text.append(lines[i])
            i += 1
            continue
        if text:
            segments.append(Text(tuple(text)))
            text = []
        ticks = opening.group(1)
        end = i + 1
        while end < len(lines) and lines[end].strip() != ticks:
            end += 1
        segments.append(Fence(lines[i], tuple(lines[i + 1 : end])))
        i = end + 1
    if text:
        segments.append(Text(tuple(text)))
    return segments
