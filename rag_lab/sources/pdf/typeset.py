"""Typeset a Markdown document as a PDF whose ground truth is known: what text is on which page.

:func:`typeset` draws a :class:`~rag_lab.documents.Document` with reportlab in one of the
:data:`LAYOUTS`, breaking lines itself, so it knows every line it put on every page; the
returned :class:`Placement` says on which page(s) each needle landed, found in that drawn
text, never by extracting it back. :func:`scan` renders a PDF's pages to images and writes
a PDF of those images alone: what a scanner gives, with no text layer.

What is drawn: headings as bold, larger lines; paragraphs (and display math, as its source
lines) wrapped to the column; fenced code monospace, line for line (too long a line goes on
below, cut at the column); tables as their Markdown source lines, monospace, except in the
``"tables"`` layout, where they are drawn as ruled tables, one row of cells per table row.
Inline markup (backticks, ``*``, ``$``) is drawn as it is in the source, so that a needle,
verbatim from the source, is verbatim on the page: what is measured is what extraction
loses, not what a Markdown renderer would have.

Fonts are the PDF core fonts (Helvetica, Helvetica-Bold, Courier), so nothing is embedded
and the output does not depend on the fonts installed. They are encoded as WinAnsi
(cp1252: Latin-1 plus typographic quotes and dashes); any other character is drawn as
``?`` and counted in :attr:`Placement.replaced` (the lab's corpus has none: its only
non-ASCII characters are ``é``, ``à`` and one no-break space). The files are byte for byte
the same on every run: reportlab's ``invariant`` mode fixes the creation date and the
document id.

>>> from rag_lab.documents import Document
>>> doc = Document("d", "Tensors", "# Tensors\\n\\nA tensor is an array.\\n")
>>> typeset(doc, "one-column", "/tmp/d.pdf", ["an array."]).needles  # doctest: +SKIP
{'an array.': (1,)}
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rag_lab.documents import Document
from rag_lab.markdown import MarkdownDoc
from rag_lab.text import flat

LAYOUTS = ("one-column", "two-column", "two-column-rows", "running-header", "tables")
"""``one-column``; ``two-column``; ``two-column-rows`` (the same page, but its lines drawn
row by row across the columns: top line of column 1, top line of column 2, then the next
row, as producers that write text by position do); ``running-header`` (one column, the
document's title at the top and ``Page N`` at the bottom of every page); ``tables`` (one
column, Markdown tables drawn as ruled tables).

The two two-column layouts look the same on paper; only the order of the drawing
instructions in the file differs, which is what an extractor reading in drawing order sees."""

PAGE_SIZE = (595.2756, 841.8898)
"""A4 in points (1/72 inch)."""
MARGIN = 56.0
GUTTER = 18.0
"""Space between the two columns of ``two-column``, in points."""
BODY = ("Helvetica", 10.0, 12.5)
"""Font, size and leading (baseline to baseline), in points."""
CODE = ("Courier", 8.5, 10.5)
HEADING_SIZES = {1: 18.0, 2: 14.0, 3: 12.0}
"""Levels 4–6 are 11 pt."""
HEADER = ("Helvetica", 8.0)
CELL_PAD = 3.0
ENCODING = "cp1252"
"""What reportlab's core fonts can draw (WinAnsiEncoding)."""

_HEADING = re.compile(r"^(#{1,6}) +(.*?)\s*$")
_RULE_ROW = re.compile(r"\s*\|[\s:|-]*-[\s:|-]*")


@dataclass(frozen=True)
class Placement:
    """Where a typeset document's text went: each page's drawn text and each needle's pages."""

    layout: str
    pages: tuple[str, ...]
    """The text drawn on each page, one drawn line per line, in reading order: the running
    header first and the footer last (``running-header``), column 1 before column 2, a
    table row's cells left to right."""
    body: tuple[str, ...]
    """:attr:`pages` without the running header and footer lines (the same text in the
    other layouts)."""
    needles: dict[str, tuple[int, ...]]
    """Needle → the 1-based pages its text covers (two when a page break falls inside it),
    found in :attr:`body` with whitespace normalised, so a needle cut by a page break is
    found across the running lines between its halves; ``()`` when it is not on any page
    verbatim."""
    replaced: int = 0
    """Characters the core fonts cannot encode, drawn as ``?``."""


def typeset(
    doc: Document, layout: str, path: str | os.PathLike, needles: Iterable[str] = ()
) -> Placement:
    """Write ``doc`` to ``path`` as a PDF in ``layout``; say where each of ``needles`` went."""
    from reportlab.pdfgen.canvas import Canvas

    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    canvas = Canvas(str(path), pagesize=PAGE_SIZE, invariant=1, pageCompression=1)
    canvas.setTitle(doc.title)
    canvas.setCreator("rag_lab")
    writer = _Writer(canvas, layout, doc.title)
    for block in _blocks(doc.text):
        writer.block(block)
    pages, body = writer.finish()
    canvas.save()
    found = {n: pages_of(n, body) for n in needles}
    return Placement(layout, pages, body, found, writer.replaced)


def scan(pdf_path: str | os.PathLike, out_path: str | os.PathLike, dpi: int = 150) -> int:
    """Render each page of ``pdf_path`` at ``dpi`` (8-bit grey) into an image-only PDF.

    The pages keep their size; the output has no text layer, only one image per page.
    Returns the number of pages.
    """
    import pypdfium2
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    pdf = pypdfium2.PdfDocument(str(pdf_path))
    try:
        canvas = Canvas(str(out_path), invariant=1, pageCompression=1)
        canvas.setCreator("rag_lab")
        for page in pdf:
            width, height = page.get_size()
            image = page.render(scale=dpi / 72, grayscale=True).to_pil()
            canvas.setPageSize((width, height))
            canvas.drawImage(ImageReader(image), 0, 0, width, height)
            canvas.showPage()
        canvas.save()
        return len(pdf)
    finally:
        pdf.close()


def pages_of(needle: str, pages: Sequence[str]) -> tuple[int, ...]:
    """The 1-based pages that ``needle`` covers in ``pages``, whitespace normalised; else ``()``.

    >>> pages_of("b c", ["a b", "c d"])
    (1, 2)
    """
    target = flat(needle)
    joined, spans = "", []
    for page in pages:
        text = flat(page)
        spans.append((len(joined), len(joined) + len(text)))
        joined += text + " "
    at = joined.find(target) if target else -1
    if at < 0:
        return ()
    end = at + len(target)
    return tuple(i + 1 for i, (s, e) in enumerate(spans) if s < end and at < e)


def page_break_needle(placed: Placement, page: int = 1) -> str:
    """Text that a page break cuts in two: the last body line of ``page`` (1-based) and the
    first body line of the next, joined by a space, as a needle whose pages are both.

    >>> body = ("a\\nb c", "d e\\nf")
    >>> page_break_needle(Placement("one-column", body, body, {}))
    'b c d e'
    """
    return placed.body[page - 1].split("\n")[-1] + " " + placed.body[page].split("\n")[0]


def table_rows(doc: Document) -> list[tuple[str, ...]]:
    """The rows of cells of every Markdown table in ``doc``, one table after the other (rule
    rows left out, header rows kept), as the ``"tables"`` layout draws them.

    >>> table_rows(Document("t", "T", "| a | b |\\n|---|---|\\n| 1 | 2 |\\n"))
    [('a', 'b'), ('1', '2')]
    """
    return [
        tuple(_cells(row))
        for block in _blocks(doc.text)
        if block.kind == "table"
        for row in block.lines
        if not _RULE_ROW.fullmatch(row)
    ]


# --- the document as blocks --------------------------------------------------------------


@dataclass(frozen=True)
class _Block:
    kind: str
    """``heading``, ``paragraph``, ``code`` or ``table``."""
    lines: tuple[str, ...]
    level: int = 0


def _blocks(text: str) -> list[_Block]:
    """``text`` as headings, paragraphs, code blocks and tables (blank lines dropped)."""
    blocks: list[_Block] = []
    run: list[str] = []
    kind = ""

    def close() -> None:
        nonlocal run, kind
        if run:
            blocks.append(_Block(kind, tuple(run)))
        run, kind = [], ""

    for line in MarkdownDoc(text).lines:
        raw = line.text
        if line.in_fence:
            if raw.lstrip().startswith(("```", "~~~")):  # a fence line is markup, not code
                close()
                continue
            if kind != "code":
                close()
            kind = "code"
            run.append(raw)
            continue
        if kind == "code":
            close()
        if not raw.strip():
            close()
        elif m := _HEADING.match(raw):
            close()
            blocks.append(_Block("heading", (m.group(2),), len(m.group(1))))
        elif raw.lstrip().startswith("|"):
            if kind != "table":
                close()
            kind = "table"
            run.append(raw)
        else:
            if kind != "paragraph":
                close()
            kind = "paragraph"
            run.append(raw)
    close()
    return blocks


# --- drawing -------------------------------------------------------------------------------


class _Writer:
    """Draws lines into the layout's columns, page after page, keeping each page's text."""

    def __init__(self, canvas, layout: str, title: str) -> None:
        self.canvas = canvas
        self.layout = layout
        self.title = title
        self.replaced = 0
        width, height = PAGE_SIZE
        inner = width - 2 * MARGIN
        if layout.startswith("two-column"):
            column = (inner - GUTTER) / 2
            self.columns = [(MARGIN, column), (MARGIN + column + GUTTER, column)]
        else:
            self.columns = [(MARGIN, inner)]
        self.top = height - MARGIN
        self.bottom = MARGIN
        if layout == "running-header":  # room for the header and footer lines
            self.top -= 2 * BODY[2]
            self.bottom += 2 * BODY[2]
        self.pages: list[list[str]] = []
        self.body: list[list[str]] = []
        self.deferred: list[tuple[float, float, str, str, float]] | None = (
            [] if layout == "two-column-rows" else None
        )
        """``two-column-rows``: the page's strings, drawn when the page ends, by row."""
        self.column = 0
        self.y = self.top
        self._new_page()

    @property
    def x(self) -> float:
        return self.columns[self.column][0]

    @property
    def width(self) -> float:
        return self.columns[self.column][1]

    def block(self, block: _Block) -> None:
        if block.kind == "heading":
            size = HEADING_SIZES.get(block.level, 11.0)
            self.skip(size * 0.6)
            for line in _wrap(block.lines[0], "Helvetica-Bold", size, self.width):
                self.line(line, "Helvetica-Bold", size, size * 1.25)
            self.skip(size * 0.2)
        elif block.kind == "paragraph":
            font, size, leading = BODY
            for line in _wrap(" ".join(block.lines), font, size, self.width):
                self.line(line, font, size, leading)
            self.skip(leading * 0.5)
        elif block.kind == "table" and self.layout == "tables":
            self.table([_cells(r) for r in block.lines if not _RULE_ROW.fullmatch(r)])
            self.skip(BODY[2] * 0.5)
        else:  # code, and tables outside the "tables" layout: monospace source lines
            font, size, leading = CODE
            per_line = max(1, int(self.width // (0.6 * size)))  # Courier is 0.6 em wide
            for raw in block.lines:
                raw = raw.expandtabs(4)
                for i in range(0, max(len(raw), 1), per_line):
                    self.line(raw[i : i + per_line], font, size, leading)
            self.skip(leading * 0.5)

    def line(self, text: str, font: str, size: float, leading: float) -> None:
        self.room(leading)
        self.y -= leading
        self.draw(self.x, self.y + leading - size, text, font, size)

    def skip(self, height: float) -> None:
        """Vertical space; it never starts a column, it is dropped at the bottom of one."""
        self.y = max(self.y - height, self.bottom)

    def room(self, height: float) -> None:
        """Move to the next column, or the next page, unless ``height`` fits in this one."""
        if self.y - height >= self.bottom or self.y == self.top:
            return
        if self.column + 1 < len(self.columns):
            self.column += 1
        else:
            self._end_page()
            self.canvas.showPage()
            self._new_page()
            self.column = 0
        self.y = self.top

    def draw(
        self, x: float, y: float, text: str, font: str, size: float, running: bool = False
    ) -> None:
        """Draw ``text`` with its baseline at ``y``; record it as a line of this page."""
        text = self._encodable(text)
        if self.deferred is not None and not running:
            self.deferred.append((y, x, text, font, size))
        else:
            self.canvas.setFont(font, size)
            self.canvas.drawString(x, y, text)
        self.pages[-1].append(text)
        if not running:
            self.body[-1].append(text)

    def table(self, rows: list[list[str]]) -> None:
        font, size, leading = BODY
        ncols = max(len(r) for r in rows)
        rows = [r + [""] * (ncols - len(r)) for r in rows]
        natural = [max(_width(r[c], font, size) for r in rows) + 2 * CELL_PAD for c in range(ncols)]
        scale = min(1.0, self.width / sum(natural))
        widths = [w * scale for w in natural]
        for r, row in enumerate(rows):
            wrapped = [
                _wrap(cell, font, size, w - 2 * CELL_PAD) or [""]
                for cell, w in zip(row, widths, strict=True)
            ]
            height = max(len(w) for w in wrapped) * leading + 2 * CELL_PAD
            self.room(height)
            top, x = self.y, self.x
            self.canvas.setLineWidth(0.5)
            texts = []
            for lines, w in zip(wrapped, widths, strict=True):
                self.canvas.rect(x, top - height, w, height)
                for i, line in enumerate(lines):
                    text = self._encodable(line)
                    self.canvas.setFont("Helvetica-Bold" if r == 0 else font, size)
                    baseline = top - CELL_PAD - i * leading - size
                    self.canvas.drawString(x + CELL_PAD, baseline, text)
                texts.append(" ".join(lines))
                x += w
            self.pages[-1].append(" ".join(t for t in texts if t))
            self.body[-1].append(self.pages[-1][-1])
            self.y = top - height

    def finish(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Each page's text, with and without its running lines."""
        self._end_page()
        return tuple("\n".join(p) for p in self.pages), tuple("\n".join(p) for p in self.body)

    def _new_page(self) -> None:
        self.pages.append([])
        self.body.append([])
        if self.layout == "running-header":
            font, size = HEADER
            self.draw(MARGIN, PAGE_SIZE[1] - MARGIN - size, self.title, font, size, True)

    def _end_page(self) -> None:
        if self.deferred:  # top row first, left column first within a row
            for y, x, text, font, size in sorted(self.deferred, key=lambda d: (-d[0], d[1])):
                self.canvas.setFont(font, size)
                self.canvas.drawString(x, y, text)
            self.deferred.clear()
        if self.layout == "running-header":
            font, size = HEADER
            self.draw(MARGIN, MARGIN, f"Page {len(self.pages)}", font, size, True)

    def _encodable(self, text: str) -> str:
        out = []
        for ch in text:
            try:
                ch.encode(ENCODING)
                out.append(ch)
            except UnicodeEncodeError:
                out.append("?")
                self.replaced += 1
        return "".join(out)


def _cells(row: str) -> list[str]:
    """``| a | b |`` → ``["a", "b"]``."""
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [c.strip() for c in row.split("|")]


def _width(text: str, font: str, size: float) -> float:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return stringWidth(text, font, size, ENCODING)


def _wrap(text: str, font: str, size: float, width: float) -> list[str]:
    """Greedy line breaking at spaces; a word wider than the line is cut where it overflows."""
    measure: Callable[[str], float] = lambda s: _width(s, font, size)  # noqa: E731
    space = measure(" ")
    lines: list[str] = []
    line, used = "", 0.0
    for word in text.split():
        w = measure(word)
        if line and used + space + w <= width:
            line, used = f"{line} {word}", used + space + w
            continue
        if line:
            lines.append(line)
        while w > width and len(word) > 1:  # core fonts have no kerning: widths add up
            cut = next(i for i in range(1, len(word) + 1) if measure(word[:i]) > width) - 1
            lines.append(word[: max(cut, 1)])
            word = word[max(cut, 1) :]
            w = measure(word)
        line, used = word, w
    if line:
        lines.append(line)
    return lines
