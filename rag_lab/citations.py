"""Citations the server builds from exact offsets; the model only ever writes ``[n]``.

The generator sees numbered sources and is asked to cite them as ``[1]``, ``[2]``. It is
never asked for a link, a page or an identifier, so it has nothing to invent: the server,
which knows which document and which character range each number stands for, attaches
the document, a human label and a locator fragment afterwards.

Locators follow the standards a browser already understands:

- ``#char=start,end`` — a character range in the document's canonical text
  (RFC 5147 text/plain fragment identifiers);
- ``#page=N`` — PDF Open Parameters;
- ``#page=N&char=start,end`` — a chunk of a PDF: the page its quote starts on (what a PDF
  viewer opens) and the character range in the canonical text extracted from the PDF
  (:class:`PageChars`); the href names the file, ``guides/manual.pdf#page=3&char=…``;
- ``#t=start,end`` — W3C Media Fragments, in seconds, for audio and video;
- ``#sheet=Name&range=B2:D9`` — a sheet of a spreadsheet and an A1 range in it. No
  standard names this one; it follows the shape of Google Sheets' ``#gid=…&range=…``,
  with the sheet named (percent-encoded, RFC 3986) rather than numbered.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from rag_lab.chunking import Chunk


@dataclass(frozen=True)
class CharRange:
    """Characters ``[start, end)`` of a plain-text document."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"need 0 <= start <= end, got {self.start}, {self.end}")

    @property
    def fragment(self) -> str:
        return f"#char={self.start},{self.end}"


@dataclass(frozen=True)
class Page:
    """Page ``number`` (1-based) of a PDF."""

    number: int

    def __post_init__(self) -> None:
        if self.number < 1:
            raise ValueError(f"PDF pages are numbered from 1, got {self.number}")

    @property
    def fragment(self) -> str:
        return f"#page={self.number}"


@dataclass(frozen=True)
class PageChars:
    """Characters ``[start, end)`` of the text extracted from a PDF, starting on ``page``.

    >>> PageChars(3, 120, 480).fragment
    '#page=3&char=120,480'
    """

    page: int
    start: int
    end: int

    def __post_init__(self) -> None:
        Page(self.page)
        CharRange(self.start, self.end)

    @property
    def fragment(self) -> str:
        return f"#page={self.page}&char={self.start},{self.end}"


@dataclass(frozen=True)
class Paged:
    """How a paginated document (a PDF) is cited: its file, its page starts, doubtful pages."""

    file: str
    """The file's path in the indexed folder, e.g. ``guides/manual.pdf``: what an href names."""
    starts: tuple[int, ...]
    """The offset of each page's first character in the document's canonical text."""
    doubtful: tuple[tuple[int, str], ...] = ()
    """``(page, why)`` for pages whose text may be wrong (OCR under its confidence threshold)."""

    def page_of(self, offset: int) -> int:
        """The 1-based page holding character ``offset``; a page break is the page before's."""
        return max(bisect_right(self.starts, offset), 1)

    def pages(self, start: int, end: int) -> tuple[int, int]:
        """The first and last page of characters ``[start, end)``."""
        return self.page_of(start), self.page_of(max(start, end - 1))


@dataclass(frozen=True)
class TimeRange:
    """Seconds ``[start, end)`` of an audio or video recording."""

    start: float
    end: float

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"need 0 <= start <= end seconds, got {self.start}, {self.end}")

    @property
    def fragment(self) -> str:
        return f"#t={_seconds(self.start)},{_seconds(self.end)}"


_CELL = re.compile(r"([A-Z]{1,3})([1-9][0-9]*)")
MAX_COLUMN = 16_384
"""Columns A … XFD, as in current spreadsheet formats; rows are only bounded below."""


def column_number(letters: str) -> int:
    """A1-notation column letters to a 1-based number: ``A`` 1, ``Z`` 26, ``AA`` 27."""
    n = 0
    for ch in letters:
        n = 26 * n + ord(ch) - ord("A") + 1
    return n


@dataclass(frozen=True)
class CellRange:
    """Cells ``first:last`` (A1 notation, inclusive) of the sheet ``sheet`` of a spreadsheet.

    >>> CellRange("Q3 budget", "B2", "D9").fragment
    '#sheet=Q3%20budget&range=B2:D9'
    """

    sheet: str
    first: str
    last: str

    def __post_init__(self) -> None:
        if not self.sheet:
            raise ValueError("a cell range needs a sheet name")
        (c1, r1), (c2, r2) = (self._cell(self.first), self._cell(self.last))
        if not (c1 <= c2 and r1 <= r2):
            raise ValueError(f"{self.first}:{self.last} is not top-left to bottom-right")

    @staticmethod
    def _cell(cell: str) -> tuple[int, int]:
        m = _CELL.fullmatch(cell)
        if m is None or column_number(m[1]) > MAX_COLUMN:
            raise ValueError(f"{cell!r} is not an A1 cell (column A-XFD, row from 1)")
        return column_number(m[1]), int(m[2])

    @property
    def fragment(self) -> str:
        return f"#sheet={quote(self.sheet, safe='')}&range={self.first}:{self.last}"


Locator = CharRange | Page | PageChars | TimeRange | CellRange


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with the document it came from and its distance to the query."""

    chunk: Chunk
    document_name: str
    distance: float
    paged: Paged | None = None
    """Set for a chunk of a PDF: then the locator is :class:`PageChars`."""

    @property
    def locator(self) -> Locator:
        if self.paged is not None:
            page = self.paged.page_of(self.chunk.start)
            return PageChars(page, self.chunk.start, self.chunk.end)
        return CharRange(self.chunk.start, self.chunk.end)

    @property
    def label(self) -> str:
        """A PDF chunk's pages, ``p. 3`` or ``pp. 3–4``; else its section."""
        if self.paged is None:
            return self.chunk.section or "(introduction)"
        first, last = self.paged.pages(self.chunk.start, self.chunk.end)
        return f"p. {first}" if first == last else f"pp. {first}–{last}"

    @property
    def warning(self) -> str | None:
        """Why the quoted text may be wrong (a doubtful page it is on), or None."""
        if self.paged is None or not self.paged.doubtful:
            return None
        first, last = self.paged.pages(self.chunk.start, self.chunk.end)
        why = [f"p. {n}: {reason}" for n, reason in self.paged.doubtful if first <= n <= last]
        return "; ".join(why) or None


@dataclass(frozen=True)
class Citation:
    """What the server attaches to ``[index]`` in an answer; the model never sees it."""

    index: int
    document_id: str
    document_name: str
    locator_label: str
    fragment: str
    quote: str
    """The chunk's own ``content`` — never its embedded ``text`` (header, overlap)."""
    distance: float
    file: str | None = None
    """A PDF's path in the folder (``guides/manual.pdf``), which its href names; None for text."""
    warning: str | None = None
    """Why the quote may be wrong (OCR of low confidence on its page), or None."""

    @property
    def href(self) -> str:
        """``doc_id#char=s,e`` for text; ``file.pdf#page=N&char=s,e`` for a PDF. The path is
        percent-encoded where a character would end it or break a link (``#``, ``?``, ``<``…),
        so a file named ``guide#char=0,9.md`` cannot pass for a locator."""
        path = self.file or self.document_id
        return (
            "".join(
                quote(c, errors="surrogateescape")
                if c in _ENDS_A_PATH or not c.isprintable()
                else c
                for c in path
            )
            + self.fragment
        )


_ENDS_A_PATH = frozenset('%#?<>"^`{|} []()')
"""Characters a URI path cannot hold as they are (RFC 3986), and the brackets that would end
a Markdown link. A backslash stays: it is how an id writes a byte of a name that is not
UTF-8 (``caf\\xe9``)."""
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def plain(title: str) -> str:
    """A title as text: a Markdown link (or image) reduced to its words, so nothing in the
    prompt is a link the model could copy.

    >>> plain("See [the guide](http://x.test/a) first")
    'See the guide first'
    """
    return _LINK.sub(r"\1", title)


INSTRUCTIONS = (
    "Answer the question using only the numbered sources below. Cite every claim with "
    "the number of its source in brackets, like [1] or [2]; write no links, titles or "
    "other references. If the sources do not contain the answer, say that they do not "
    "and stop."
)


def citation(index: int, hit: Hit) -> Citation:
    """The citation numbered ``index`` for one hit, built from its offsets."""
    chunk = hit.chunk
    return Citation(
        index=index,
        document_id=chunk.doc_id,
        document_name=hit.document_name,
        locator_label=hit.label,
        fragment=hit.locator.fragment,
        quote=chunk.content,
        distance=hit.distance,
        file=hit.paged.file if hit.paged else None,
        warning=hit.warning,
    )


def build_context(question: str, hits: Sequence[Hit]) -> tuple[str, list[Citation]]:
    """The prompt the generator sees and the citations only the server keeps.

    Sources are numbered from 1 in the order given; each shows the document name, the
    section and the quoted content, and nothing the model could copy as a link.
    """
    citations = [citation(i, hit) for i, hit in enumerate(hits, start=1)]
    sources = "\n\n".join(
        f"[{c.index}] {plain(c.document_name)} — {plain(c.locator_label)}\n{c.quote}"
        for c in citations
    )
    prompt = f"{INSTRUCTIONS}\n\nSOURCES\n\n{sources}\n\nQUESTION\n{question}\n"
    return prompt, citations


def _seconds(value: float) -> str:
    """Seconds as Media Fragments write them: no trailing zeros, at most 3 decimals."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def parse_fragment(fragment: str) -> Locator:
    """The locator a fragment names: ``#char=s,e``, ``#page=N``, ``#page=N&char=s,e``,
    ``#t=s,e`` or ``#sheet=Name&range=A1:B2``."""
    kind, _, value = fragment.removeprefix("#").partition("=")
    try:
        if kind == "page" and "&" in value:
            page, sep, chars = value.partition("&char=")
            if not sep:
                raise ValueError("expected #page=N&char=START,END")
            start, end = (int(x) for x in chars.split(","))
            return PageChars(int(page), start, end)
        if kind == "sheet":
            sheet, sep, cells = value.partition("&range=")
            first, colon, last = cells.partition(":")
            if not sep or not colon:
                raise ValueError("expected #sheet=NAME&range=A1:B2")
            return CellRange(unquote(sheet), first, last)
        if kind == "char":
            start, end = (int(x) for x in value.split(","))
            return CharRange(start, end)
        if kind == "page":
            return Page(int(value))
        if kind == "t":
            start, end = (float(x) for x in value.split(","))
            return TimeRange(start, end)
    except ValueError as err:
        raise ValueError(f"malformed fragment {fragment!r}: {err}") from None
    raise ValueError(f"unknown fragment {fragment!r}; expected #char=, #page=, #t= or #sheet=")


def quote_matches(c: Citation, document_text: str) -> bool:
    """True when the document, sliced at the citation's ``#char`` range, is its quote.

    For a PDF (``#page=N&char=s,e``) ``document_text`` is the canonical text extracted
    from it (what the index chunked).
    """
    loc = parse_fragment(c.fragment)
    if not isinstance(loc, CharRange | PageChars):
        raise ValueError(f"{c.fragment} is not a character range")
    return document_text[loc.start : loc.end] == c.quote


def citation_table(citations: Sequence[Citation], width: int = 70) -> list[dict[str, object]]:
    """Rows for display: what the server shows beside ``[n]`` (the model never sees this)."""
    return [
        {
            "[n]": c.index,
            "document": c.document_id,
            "section": c.locator_label,
            "locator": c.fragment,
            "distance": round(c.distance, 3),
            "quote": c.quote if len(c.quote) <= width else c.quote[: width - 1] + "…",
        }
        for c in citations
    ]
