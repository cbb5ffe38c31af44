"""Just enough Markdown structure to chunk, validate and count: fences, headings, tables, math.

Everything here works on character offsets into the original text, so callers can
ask "does this span touch a heading line?" without re-parsing. Fenced code is
opaque: a ``# comment`` inside a fence is code, not a heading. A fence may open a list
item's line (``- ```bash``); a MyST directive whose body is Markdown (```` ```{note} ````,
:data:`PROSE_DIRECTIVES`) is prose, its fence lines included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

_HEADING = re.compile(r"^(#{1,6}) +(.*?)\s*$")
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\\n])+?(?<!\\)\$")
# A fence opens a line, or a list item's first line (``- ```python``, ``1. ~~~``).
_FENCE = re.compile(r"\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(`{3,}|~{3,})(.*)")
PROSE_DIRECTIVES = frozenset(
    "admonition attention caution danger error hint important note seealso tip todo warning "
    "versionadded versionchanged versionremoved deprecated dropdown margin sidebar topic".split()
)
"""MyST directives whose body is Markdown (```` ```{note} ````): read as prose, not code."""
_PROSE_DIRECTIVE = re.compile(r"\s*\{(" + "|".join(sorted(PROSE_DIRECTIVES)) + r")\}(?:\s|$)")


@dataclass(frozen=True)
class Line:
    """One line of a document: ``text[start:end]``, without its newline."""

    start: int
    end: int
    text: str
    in_fence: bool
    """True for fence lines themselves and everything between them."""


@dataclass(frozen=True)
class Heading:
    """An ATX heading outside code fences: ``level`` hashes, then ``title``."""

    level: int
    title: str
    start: int
    end: int
    """End of the heading line, excluding its newline."""


class MarkdownDoc:
    """Line-level structure of one Markdown text, computed once and cached."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def lines(self) -> list[Line]:
        out: list[Line] = []
        fence: str | None = None
        directives: list[str] = []  # the open MyST prose directives' fences, innermost last
        pos = 0
        for raw in self.text.split("\n"):
            in_fence = True
            if fence is not None:  # code ends at a line that starts with its fence's characters
                fence = None if raw.lstrip().startswith(fence) else fence
            elif directives and _closes(raw, directives[-1]):
                directives.pop()
                in_fence = False
            elif opening := _FENCE.match(raw):
                if _PROSE_DIRECTIVE.match(opening.group(2)):
                    directives.append(opening.group(1))
                    in_fence = False
                else:
                    fence = opening.group(1)[:3]
            else:
                in_fence = False
            out.append(Line(pos, pos + len(raw), raw, in_fence))
            pos += len(raw) + 1
        return out

    @cached_property
    def headings(self) -> list[Heading]:
        out = []
        for line in self.lines:
            if line.in_fence:
                continue
            m = _HEADING.match(line.text)
            if m:
                out.append(Heading(len(m.group(1)), m.group(2), line.start, line.end))
        return out

    @cached_property
    def code_blocks(self) -> list[tuple[int, int]]:
        """Character spans of fenced code blocks, fence lines included."""
        spans: list[tuple[int, int]] = []
        open_at: int | None = None
        fence = ""
        for line in self.lines:
            if not line.in_fence:
                if open_at is not None:  # an unclosed fence runs to the end of the text
                    spans.append((open_at, line.start))
                    open_at = None
                continue
            if open_at is None:
                open_at = line.start
                fence = _FENCE.match(line.text).group(1)[:3]
            elif line.text.lstrip().startswith(fence):
                spans.append((open_at, line.end))
                open_at = None
        if open_at is not None:
            spans.append((open_at, len(self.text)))
        return spans

    @cached_property
    def table_rows(self) -> list[Line]:
        return [ln for ln in self.lines if not ln.in_fence and ln.text.lstrip().startswith("|")]

    @cached_property
    def tables(self) -> int:
        """Runs of consecutive table rows that include a ``|---|`` delimiter row."""
        count, run, has_rule = 0, 0, False
        for line in [*self.lines, Line(0, 0, "", False)]:
            is_row = not line.in_fence and line.text.lstrip().startswith("|")
            if is_row:
                run += 1
                has_rule |= bool(re.fullmatch(r"\s*\|[\s:|-]*-[\s:|-]*", line.text))
                continue
            if run and has_rule:
                count += 1
            run, has_rule = 0, False
        return count

    @cached_property
    def display_math(self) -> list[tuple[int, int]]:
        """Spans of ``$$ … $$`` blocks outside fences (a one-line ``$$x$$`` counts too)."""
        spans: list[tuple[int, int]] = []
        prose = self._prose_mask_text()
        for m in re.finditer(r"\$\$.*?\$\$", prose, flags=re.DOTALL):
            spans.append((m.start(), m.end()))
        return spans

    @cached_property
    def inline_math(self) -> int:
        """Number of ``$…$`` spans outside fences and display math."""
        prose = list(self._prose_mask_text())
        for a, b in self.display_math:
            prose[a:b] = " " * (b - a)
        return len(_INLINE_MATH.findall("".join(prose)))

    def _prose_mask_text(self) -> str:
        """The text with fenced code blanked out (same length, so offsets still hold)."""
        chars = list(self.text)
        for a, b in self.code_blocks:
            chars[a:b] = [" " if c != "\n" else "\n" for c in self.text[a:b]]
        return "".join(chars)

    def overlaps(self, start: int, end: int) -> dict[str, bool]:
        """Which kinds of non-prose structure the span ``[start, end)`` touches."""

        def touches(spans) -> bool:
            return any(a < end and start < b for a, b in spans)

        return {
            "heading": touches((h.start, h.end) for h in self.headings),
            "code": touches(self.code_blocks),
            "table": touches((r.start, r.end) for r in self.table_rows),
            "display math": touches(self.display_math),
        }


def _closes(line: str, fence: str) -> bool:
    """Does ``line`` close a directive opened by ``fence``: that character alone, as many times
    or more (CommonMark's closing fence)?"""
    bare = line.strip()
    return len(bare) >= len(fence) and bare == fence[0] * len(bare)


def structure(text: str) -> dict[str, int]:
    """Counts of the things that make a technical corpus hard to chunk."""
    md = MarkdownDoc(text)
    return {
        "characters": len(text),
        "sections": sum(h.level == 2 for h in md.headings),
        "subsections": sum(h.level == 3 for h in md.headings),
        "code blocks": len(md.code_blocks),
        "tables": md.tables,
        "display equations": len(md.display_math),
        "inline math": md.inline_math,
    }
