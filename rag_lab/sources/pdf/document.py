"""A PDF as the canonical text of a document, with the offset where each of its pages starts.

:func:`read_pdf` is what ``rag-lab index`` reads a PDF with: the text of every page
(:func:`~.extract.extract`, PDFium by default), cleaned, its running headers and footers
removed, the pages joined by :data:`PAGE_JOIN`; :class:`PdfDocument` keeps the offset of
every page's first character, so any chunk offset maps to a page (:meth:`PdfDocument.page_of`)
and a citation says ``#page=N&char=s,e``.

Cleaning (:func:`normalise`), so that the text is what the page shows:

- ``\\r\\n`` and lone ``\\r`` (PDFium ends its lines with ``\\r\\n``) become ``\\n``;
- PDFium marks a hyphen it judges to be a hyphenation (a ``-`` ending a line, the word
  going on at the start of the next) with U+FFFE, a noncharacter, or U+0002, and joins the
  two lines itself: ``exam-`` / ``ple`` comes back as ``exam\\ufffeple``. The marker is
  dropped, so the word is whole again (``example``); where a marker is followed by a line
  break (not seen from PDFium 159, handled all the same), the break goes too. The price:
  a compound whose own hyphen ends a line (``well-`` / ``known``) comes out as
  ``wellknown``;
- the form feed :data:`PAGE_BREAK` inside a page becomes a newline, so that the one form
  feed of a page is the one that ends it.

Pages are joined by :data:`PAGE_JOIN`, a form feed then a newline: the form feed keeps
the page break visible in the text (as ``pdftotext`` writes it), and a paragraph that runs on
over the page break stays one paragraph for the chunker, so a sentence cut by the page break
can still be chunked whole (a chunk holding it is cited ``pp. 3–4``). Notebook 11 measured
the other choice, a blank line after the form feed (a page break as a paragraph break): on
the 20 documents typeset with running headers, 3 of the 32 needles were then in no chunk,
against 0 with this join; the cost is that a paragraph ending at the foot of a page runs
into the next page's first one.

Paragraphs within a page: PDFium does not mark them (it ends every line with ``\r\n``,
blank line or not), and a page that is one paragraph would be cut by sentences only. So
with PDFium the reader looks at where each line sits (the baseline of its first
character): a gap between two baselines over :data:`PARAGRAPH_GAP` times the page's
line spacing (the gap a quarter of its gaps are under, or equal to), as paragraph spacing
or a heading make, or a jump back up the page (a new column), becomes a blank line. A
page whose paragraphs are all one line long has no line spacing to tell them by, and
stays one paragraph. Tesseract's and pdfminer's text have blank lines between their
blocks already, and are taken as they come, as is pypdf's (which has none).

A PDF with no text on any page has no text layer (a scan): :class:`NoTextLayer`, unless
``ocr`` is asked, when the pages are read by Tesseract (:func:`~.extract.ocr`, 300 dpi)
and each page's mean word confidence is kept.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.sources.pdf.extract import (
    EXTRACTORS,
    PAGE_BREAK,
    OcrUnavailable,
    PdfError,
    extract,
    library_warnings,
    load_page,
    ocr,
    remove_repeated_lines,
    tesseract_version,
)

READER_VERSION = "2"
"""Bump whenever :func:`read_pdf` could turn the same PDF into another text."""
DEFAULT_EXTRACTOR = "pdfium"
"""PDFium (Google's C++ library, through pypdfium2): the fastest of :data:`EXTRACTORS`."""
MODE = "default"
"""Each extractor is used in its default mode (``extract.MODES``)."""
PAGE_JOIN = PAGE_BREAK + "\n"
"""Between two pages of :attr:`PdfDocument.text`: a page break and a newline, no paragraph
break, so a paragraph that runs over a page break stays one (the newline keeps the words
apart: the encoder's tokenizer drops a form feed as a control character)."""
PARAGRAPH_GAP = 1.3
"""A gap between baselines over this many times the page's line spacing ends a paragraph.

A paragraph space of half a line makes 1.5; a heading more."""
OCR_DPI = 300
"""Tesseract reads best at 300 dpi (its documentation's advice)."""
OCR_WORKERS = max(1, min(2, os.cpu_count() or 1))
"""Pages OCRed at once, one Tesseract thread each (:func:`~.extract.ocr`)."""
OCR_MIN_CONFIDENCE = 80.0
"""A page whose mean word confidence is under this is flagged as doubtful."""
NO_TEXT = "no text layer (scanned?)"
OCR_HINT = "(rag-lab index --ocr reads it with Tesseract)"

_HYPHEN_MARKS = "\u0002\ufffe"
_MARK_AT_LINE_END = re.compile(f"[{_HYPHEN_MARKS}][ \t]*\n")
_MARK = re.compile(f"[{_HYPHEN_MARKS}]")


class NoTextLayer(PdfError):
    """A PDF whose pages hold no text (a scan, without OCR asked)."""


@dataclass(frozen=True)
class OcrReading:
    """How the pages of a scanned PDF were read: Tesseract, and its confidence per page."""

    engine: str
    """E.g. ``tesseract 5.3.0, 300 dpi``."""
    confidences: tuple[float, ...]
    """Mean word confidence (0–100) of each page; NaN for a page with no word."""
    min_confidence: float
    """Pages under it (or with no word) are flagged (:attr:`rag_lab.app.store.Pages.flagged`)."""


@dataclass(frozen=True)
class PdfDocument:
    """The canonical text of a PDF and where each page starts in it.

    >>> d = PdfDocument("t", ("one", "two"), "pdfium default")
    >>> d.text, d.starts, d.page_of(d.text.index("two"))
    ('one\\x0c\\ntwo', (0, 5), 2)
    """

    title: str
    pages: tuple[str, ...]
    """Each page's cleaned text, running lines removed (unless kept)."""
    extractor: str
    """What read the text, with the library's version: ``pdfium default, pypdfium2 5.15.2 …``."""
    removed: tuple[tuple[int, str], ...] = ()
    """The running headers and footers removed, as ``(page, line)``."""
    running_lines: str = "removed"
    """``removed`` or ``kept``."""
    ocr: OcrReading | None = None
    """Set when the text came from Tesseract (the PDF had no text layer)."""
    text: str = field(init=False, repr=False)
    starts: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        starts, at = [], 0
        for page in self.pages:
            starts.append(at)
            at += len(page) + len(PAGE_JOIN)
        object.__setattr__(self, "text", PAGE_JOIN.join(self.pages))
        object.__setattr__(self, "starts", tuple(starts))

    def page_of(self, offset: int) -> int:
        """The 1-based page holding character ``offset`` (a :data:`PAGE_JOIN`: the page before)."""
        return page_of(self.starts, offset)

    @property
    def reading(self) -> str:
        """How the text was read, in one line (:func:`reading`)."""
        ocr = self.ocr
        return reading(
            self.extractor,
            self.running_lines,
            ocr.engine if ocr else None,
            ocr.min_confidence if ocr else None,
        )


def reading(
    extractor: str,
    running_lines: str,
    ocr_engine: str | None = None,
    min_confidence: float | None = None,
) -> str:
    """How a PDF's text was read, in one line: what a re-read must match to be skipped.

    ``extractor`` is :attr:`PdfDocument.extractor` (the library's version included), so an
    upgrade re-reads; the OCR threshold is part of it, so another one redoes the flags.
    """
    ocr = f"; OCR {ocr_engine}, pages under {min_confidence:g} flagged" if ocr_engine else ""
    return f"pdf reader {READER_VERSION}: {extractor}; running lines {running_lines}{ocr}"


def ocr_reading(
    extractor: str = DEFAULT_EXTRACTOR,
    keep_running_lines: bool = False,
    ocr_min_confidence: float = OCR_MIN_CONFIDENCE,
) -> str:
    """The :func:`reading` a scan read with these options gets, without reading it.

    So that an unchanged scan is not OCRed again to learn that it is unchanged. Raises
    :class:`~.extract.OcrUnavailable` when Tesseract is not installed.
    """
    return reading(
        f"{extractor} {MODE}, {library_version(extractor)}",
        "kept" if keep_running_lines else "removed",
        ocr_engine(),
        ocr_min_confidence,
    )


def ocr_engine() -> str:
    """``tesseract 5.3.0, 300 dpi``: what reads scans; raise :class:`~.extract.OcrUnavailable`."""
    return f"tesseract {tesseract_version()}, {OCR_DPI} dpi"


def page_of(starts: tuple[int, ...] | list[int], offset: int) -> int:
    """The 1-based page, of pages starting at ``starts``, that holds character ``offset``."""
    if offset < 0:
        raise ValueError(f"offset {offset} is negative")
    return max(bisect_right(starts, offset), 1)


def read_pdf(
    path: str | os.PathLike,
    *,
    extractor: str = DEFAULT_EXTRACTOR,
    keep_running_lines: bool = False,
    use_ocr: bool = False,
    ocr_min_confidence: float = OCR_MIN_CONFIDENCE,
) -> PdfDocument:
    """The PDF at ``path`` as a :class:`PdfDocument` (see the module docstring).

    Raises :class:`~.extract.PdfError` (``encrypted: …``, ``malformed: …``),
    :class:`NoTextLayer` for a scan when ``use_ocr`` is false, and
    :class:`~.extract.OcrUnavailable` when it is true but Tesseract is not installed.
    """
    if extractor not in EXTRACTORS:
        raise ValueError(f"extractor must be one of {EXTRACTORS}, got {extractor!r}")
    read = extract(path, extractor, MODE)
    title = pdf_title(path) or Path(path).stem
    got = None
    if read.has_text:
        raw = _with_paragraphs(path, read.pages) if extractor == "pdfium" else read.pages
        pages = [normalise(p) for p in raw]
    elif not use_ocr:
        raise NoTextLayer(f"{NO_TEXT} {OCR_HINT}")
    else:
        engine = ocr_engine()  # OcrUnavailable before any page is rendered
        scanned = ocr(path, OCR_DPI, workers=OCR_WORKERS)
        pages = [normalise(p.text) for p in scanned]
        got = OcrReading(
            engine,
            tuple(p.confidence for p in scanned),
            ocr_min_confidence,
        )
        if not any(p.strip() for p in pages):
            raise NoTextLayer(f"{NO_TEXT}, and Tesseract found no words in it either")
    removed: list[tuple[int, str]] = []
    if not keep_running_lines:
        pages, removed = remove_repeated_lines(pages)
    pages = [p.strip("\n") for p in pages]  # the blank lines a removed line leaves
    return PdfDocument(
        title=title,
        pages=tuple(pages),
        extractor=f"{extractor} {MODE}, {library_version(extractor)}",
        removed=tuple(removed),
        running_lines="kept" if keep_running_lines else "removed",
        ocr=got,
    )


def _with_paragraphs(path: str | os.PathLike, pages: tuple[str, ...]) -> list[str]:
    """PDFium's ``pages`` with a blank line where a paragraph ends (see the module docstring).

    ``pages`` are what :func:`~.extract.extract` returned for ``path`` with PDFium: one
    character per character of PDFium's text page (so an index into a page's text is a
    character index for ``FPDFText_GetCharOrigin``), lines ended by ``\r\n``. A character
    outside Unicode's first plane is two of PDFium's: the lines after it on its page are
    then looked up a character early. That can only misplace a paragraph break (or miss
    one, for a line PDFium has no position for), never shift an offset: the text is the
    text, the breaks are added to it before its offsets are taken.
    """
    import ctypes
    import itertools

    import pypdfium2
    import pypdfium2.raw as pdfium_c

    pdf = pypdfium2.PdfDocument(os.fspath(path))
    try:
        out = []
        for n, text in enumerate(pages, start=1):
            textpage = load_page(pdf, n).get_textpage()
            lines = text.split("\r\n")
            baselines: list[float | None] = []
            at = 0
            for line in lines:
                first = at + len(line) - len(line.lstrip())
                x, y = ctypes.c_double(), ctypes.c_double()
                known = line.strip() and pdfium_c.FPDFText_GetCharOrigin(
                    textpage.raw, first, ctypes.byref(x), ctypes.byref(y)
                )
                baselines.append(y.value if known else None)
                at += len(line) + 2
            filled = [(i, y) for i, y in enumerate(baselines) if y is not None]
            pairs = [(below, above - y) for (_, above), (below, y) in itertools.pairwise(filled)]
            # The line spacing: a low quantile, not the median, since a page of two-line
            # paragraphs has as many paragraph gaps as line gaps.
            positive = sorted(gap for _, gap in pairs if gap > 0)
            usual = positive[len(positive) // 4] if positive else 0.0
            breaks = {
                line
                for line, gap in pairs
                if usual > 0 and (gap > PARAGRAPH_GAP * usual or gap < -usual)
            }
            out.append(
                "\r\n".join(("\r\n" + ln) if i in breaks else ln for i, ln in enumerate(lines))
            )
        return out
    finally:
        pdf.close()


def normalise(page: str) -> str:
    """One page's text as PDFium gives it, cleaned (see the module docstring).

    >>> normalise("exam\\x02\\r\\nple\\r\\nend\\ufffe")
    'example\\nend'
    """
    page = page.replace("\r\n", "\n").replace("\r", "\n").replace(PAGE_BREAK, "\n")
    page = _MARK_AT_LINE_END.sub("", page)
    return _MARK.sub("", page)


def pdf_title(path: str | os.PathLike) -> str | None:
    """The title in the PDF's metadata (its Info dictionary), stripped; None when it has none.

    Characters that are not text (a lone UTF-16 surrogate) are U+FFFD; a title of only
    those is none.

    ``untitled`` (any case) counts as none: it is what producers such as reportlab write
    when they were given no title, and the file's name says more.
    """
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(os.fspath(path))
    except pypdfium2.PdfiumError as err:
        raise PdfError(f"malformed: pdfium: {' '.join(str(err).split())}") from None
    try:
        title = _metadata_text(pdf, "Title").strip()
    finally:
        pdf.close()
    if not title.strip("\ufffd \t"):  # nothing but what could not be decoded
        return None
    return None if title.lower() in ("", "untitled") else title


def _metadata_text(pdf, key: str) -> str:
    """The Info dictionary's ``key`` of a pypdfium2 document, as text, whatever its bytes.

    PDFium gives it as UTF-16; a unit that is not text (a lone surrogate) becomes U+FFFD,
    where pypdfium2's ``get_metadata_value`` raises.
    """
    import ctypes

    import pypdfium2.raw as pdfium_c

    name = (key + "\0").encode("utf-8")
    size = pdfium_c.FPDF_GetMetaText(pdf, name, None, 0)
    buffer = ctypes.create_string_buffer(size)
    pdfium_c.FPDF_GetMetaText(pdf, name, buffer, size)
    return buffer.raw[: max(size - 2, 0)].decode("utf-16-le", errors="replace")


def library_version(extractor: str) -> str:
    """The library behind ``extractor`` and its version, e.g. ``pypdf 6.1.0``."""
    if extractor == "pdfium":
        import pypdfium2

        return f"pypdfium2 {pypdfium2.PYPDFIUM_INFO} (PDFium {pypdfium2.PDFIUM_INFO.tag})"
    if extractor == "pypdf":
        import pypdf

        return f"pypdf {pypdf.__version__}"
    if extractor == "pdfminer":
        import pdfminer

        return f"pdfminer.six {pdfminer.__version__}"
    raise ValueError(f"extractor must be one of {EXTRACTORS}, got {extractor!r}")


__all__ = [
    "DEFAULT_EXTRACTOR",
    "NO_TEXT",
    "OCR_DPI",
    "OCR_HINT",
    "OCR_MIN_CONFIDENCE",
    "PAGE_JOIN",
    "READER_VERSION",
    "NoTextLayer",
    "OcrReading",
    "OcrUnavailable",
    "PdfDocument",
    "PdfError",
    "library_warnings",
    "normalise",
    "ocr_engine",
    "ocr_reading",
    "page_of",
    "pdf_title",
    "read_pdf",
    "reading",
]
