"""A source document: what every reader produces and every chunker consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.markdown import MarkdownDoc

FORMATS = ("markdown", "plain")


@dataclass(frozen=True)
class Document:
    """One source document; ``text`` is its canonical text, the one citations slice.

    ``format`` tells the chunker how to read it: ``"markdown"`` has headings and fences,
    ``"plain"`` is one section whatever its lines look like (a line starting with ``#`` is
    text, not a heading).

    >>> Document("notes", "notes", "# not a heading\\n", format="plain").format
    'plain'
    """

    id: str
    """The file stem, e.g. ``03-linear-algebra``, or a path without suffix, ``guides/setup``."""
    title: str
    """For Markdown, the text of the first ``# `` line (:func:`title_of`)."""
    text: str
    path: Path | None = field(default=None, compare=False, repr=False)
    format: str = "markdown"

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {self.format!r}")


def title_of(text: str, fallback: str) -> str:
    """The text of the first level-1 Markdown heading outside code, else ``fallback``.

    >>> title_of("```\\n# a comment\\n```\\n# Tensors\\n", "01-x")
    'Tensors'
    >>> title_of("no heading", "01-x")
    '01-x'
    """
    return next((h.title for h in MarkdownDoc(text).headings if h.level == 1), fallback)
