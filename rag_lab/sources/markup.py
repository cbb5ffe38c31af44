"""reStructuredText and HTML read into the Markdown the chunker reads: headings, prose, code.

A reader (:mod:`.rst`, :mod:`.html`) turns a file into :class:`Block` records; :func:`markdown`
writes them as the document's text, so sections (``## `` headings, the "Doc > Section" of a
citation) and code (fenced, opaque to headings and needles) are found as in a Markdown file.
That text is what the index stores and citations quote. A prose line that Markdown would take
for a heading or a fence is written with a backslash in front (``\\# not a heading``).

>>> print(markdown([Block("heading", "Setup", 1), Block("prose", "Run it:"),
...                 Block("code", "make setup")]), end="")
# Setup
<BLANKLINE>
Run it:
<BLANKLINE>
```
make setup
```
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rag_lab.markdown import MarkdownDoc

KINDS = ("heading", "prose", "code")


@dataclass(frozen=True)
class Block:
    """One heading, paragraph or code block of a document, in reading order."""

    kind: str
    """One of :data:`KINDS`."""
    text: str
    level: int = 0
    """For a heading: 1 (the document's title) to 6."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


@dataclass(frozen=True)
class Markup:
    """What a reader made of a file: its text as Markdown, its title, what the reader warned of."""

    text: str
    title: str | None
    """The first level-1 heading, or what the file names as its title; None: neither."""
    warnings: tuple[str, ...] = ()


def markdown(blocks: Iterable[Block]) -> str:
    """``blocks`` as Markdown, one blank line between them; empty blocks left out."""
    parts = []
    for block in blocks:
        text = block.text.strip("\n") if block.kind == "code" else block.text.strip()
        if not text.strip():
            continue
        if block.kind == "heading":
            parts.append("#" * min(max(block.level, 1), 6) + " " + " ".join(text.split()))
        elif block.kind == "code":
            parts.append(_fenced(text))
        else:
            parts.append("\n".join(_escaped(line) for line in text.split("\n")))
    return "\n\n".join(parts) + "\n" if parts else ""


def _fenced(code: str) -> str:
    """``code`` between fences of a character none of its lines starts with (a line starting
    with the fence's three characters would close it); backticks unless they would."""
    starts = {line.lstrip()[:3] for line in code.split("\n")}
    fence = "~~~" if "```" in starts and "~~~" not in starts else "```"
    return f"{fence}\n{code}\n{fence}"


def _escaped(line: str) -> str:
    """``line``, with a backslash in front if Markdown would read it as a heading or a fence."""
    read = MarkdownDoc(line)
    return "\\" + line if read.headings or read.lines[0].in_fence else line
