"""A PDF's text, page by page, as three libraries read it; running lines removed; OCR.

:func:`extract` reads a PDF with one of :data:`EXTRACTORS` in one of its :data:`MODES`:

========== ============= ==================================================================
extractor  mode          what it is
========== ============= ==================================================================
pypdf      ``default``   ``page.extract_text()``: text in content-stream (drawing) order
pypdf      ``layout``    ``extract_text(extraction_mode="layout")``: the page as a grid of
                         fixed-width characters by position, so columns come out side by
                         side, line by line
pdfminer   ``default``   pdfminer.six's layout analysis with its default ``LAParams()``:
                         characters grouped into lines and text boxes, boxes ordered by
                         ``boxes_flow=0.5`` (half horizontal, half vertical position)
pdfminer   ``positional`` ``LAParams(boxes_flow=None)``: the same boxes, ordered by the
                         position of their lower-left corner alone
pdfium     ``default``   pypdfium2's ``get_text_range()``: PDFium's text page, in its order
pdfium     ``bounded``   ``get_text_bounded()`` over the whole page: the characters inside a
                         rectangle, as PDFium orders them
========== ============= ==================================================================

The three libraries are independent implementations (pure Python, pure Python, Google's
C++ PDFium). What each returns is kept as it is, except that a form feed inside a page
becomes a newline: :data:`PAGE_BREAK` joins the pages of :attr:`PdfText.text`, so any
offset into it names one page (:meth:`PdfText.page_of`).

A PDF the library cannot read raises :class:`PdfError` whose ``reason`` starts with
``encrypted:`` (a password is needed) or ``malformed:``, followed by the parser's own words.
A scanned PDF reads without error as pages of no text (:attr:`PdfText.has_text` is False);
:func:`ocr` reads it with Tesseract instead, with each page's mean word confidence.
What pypdf and pdfminer warn of while reading one (``incorrect startxref pointer``) is kept
by :func:`library_warnings`, for the caller to say with the file's name.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from rag_lab.errors import BadEnvironment, BadInput

EXTRACTORS = ("pypdf", "pdfminer", "pdfium")
MODES = {
    "pypdf": ("default", "layout"),
    "pdfminer": ("default", "positional"),
    "pdfium": ("default", "bounded"),
}
PAGE_BREAK = "\f"
"""Between pages in :attr:`PdfText.text` (as ``pdftotext`` writes them)."""
MAX_OCR_PIXELS = 50_000_000
"""The most pixels :func:`ocr` renders for one page; a larger page fails with its size.

An A2 page at 300 dpi is 34.8 million (an A4 page 8.7 million); a 200 × 200-inch page
(a PDF may declare one) would be 3.6 billion, a 3.6 GB bitmap that Tesseract refuses."""


class PdfError(BadInput):
    """A PDF that cannot be read; ``reason`` (``encrypted: …`` or ``malformed: …``) says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OcrUnavailable(BadEnvironment, RuntimeError):
    """Tesseract (the ``tesseract`` program, or the pytesseract package) is not installed."""


@dataclass(frozen=True)
class PdfText:
    """The text of each page of a PDF, as ``extractor`` read it in ``mode``.

    >>> t = PdfText("pypdf", "default", ("one\\n", "two"))
    >>> t.starts, t.page_of(t.text.index("two"))
    ((0, 5), 2)
    """

    extractor: str
    mode: str
    pages: tuple[str, ...]

    @property
    def text(self) -> str:
        """The pages joined by :data:`PAGE_BREAK`."""
        return PAGE_BREAK.join(self.pages)

    @property
    def starts(self) -> tuple[int, ...]:
        """Where each page starts in :attr:`text`."""
        out, at = [], 0
        for page in self.pages:
            out.append(at)
            at += len(page) + len(PAGE_BREAK)
        return tuple(out)

    def page_of(self, offset: int) -> int:
        """The 1-based page holding character ``offset`` of :attr:`text`.

        A :data:`PAGE_BREAK` belongs to the page before it.
        """
        if not 0 <= offset < max(len(self.text), 1):
            raise ValueError(f"offset {offset} is outside the text (0..{len(self.text)})")
        return bisect_right(self.starts, offset)

    @property
    def has_text(self) -> bool:
        """False when no page has any text: no text layer (a scan?)."""
        return any(p.strip() for p in self.pages)


def extract(path: str | os.PathLike, extractor: str = "pypdf", mode: str = "default") -> PdfText:
    """The text of each page of the PDF at ``path``; raise :class:`PdfError` saying why not."""
    if extractor not in MODES:
        raise ValueError(f"extractor must be one of {EXTRACTORS}, got {extractor!r}")
    if mode not in MODES[extractor]:
        raise ValueError(f"{extractor} modes are {MODES[extractor]}, got {mode!r}")
    read = {"pypdf": _pypdf, "pdfminer": _pdfminer, "pdfium": _pdfium}[extractor]
    pages = read(os.fspath(path), mode)
    return PdfText(extractor, mode, tuple(p.replace(PAGE_BREAK, "\n") for p in pages))


LIBRARY_LOGGERS = ("pypdf", "pdfminer")
"""The loggers of the pure-Python readers: they warn of a damaged file and read on."""


@contextmanager
def library_warnings() -> Iterator[list[str]]:
    """Inside, what the PDF libraries warn of is kept in the list yielded, as
    ``<library>: <words>``, instead of reaching stderr with no file named: the warnings of
    :data:`LIBRARY_LOGGERS`, and Python warnings other than deprecations. The list fills
    as they warn, so an error raised inside can quote them."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(f"{record.name.split('.')[0]}: {_words(record.getMessage())}")

    def keep(message, category, filename, lineno, file=None, line=None) -> None:
        said.append(f"{category.__name__}: {_words(message)}")

    handler = Keep(logging.WARNING)
    loggers = [logging.getLogger(name) for name in LIBRARY_LOGGERS]
    propagate = [logger.propagate for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False  # else Python's last-resort handler prints them bare
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # each file hears its own, once a place
            for quiet in (DeprecationWarning, PendingDeprecationWarning, ImportWarning):
                warnings.simplefilter("ignore", quiet)
            warnings.showwarning = keep
            yield said
    finally:
        for logger, before in zip(loggers, propagate, strict=True):
            logger.removeHandler(handler)
            logger.propagate = before


def remove_repeated_lines(
    pages: Sequence[str], *, edge: int = 3, share: float = 0.5
) -> tuple[list[str], list[tuple[int, str]]]:
    """``pages`` without their running headers and footers, and the ``(page, line)`` removed.

    A running line is one of the first or last ``edge`` non-blank lines of a page whose
    normalised form (whitespace collapsed, every run of digits read as ``#``, so ``Page 9``
    and ``Page 10`` are the same line) is also among the edge lines of more than ``share`` of the
    pages, and of at least two. Lines elsewhere on a page are never removed, nor a second
    line of the same form on the same side of a page (a first page's title that repeats
    the running header stays). The price of reading digits as ``#``: body lines that
    differ only in their numbers, at the edges of most pages, would go too.

    >>> remove_repeated_lines(["Title\\nbody one\\n1", "Title\\nbody two\\n2"])[0]
    ['body one', 'body two']
    """
    split = [p.split("\n") for p in pages]

    def edges(lines: list[str]) -> tuple[list[int], list[int]]:
        filled = [i for i, ln in enumerate(lines) if ln.strip()]
        top = filled[:edge]
        return top, [i for i in reversed(filled[-edge:]) if i not in top]

    seen: Counter[str] = Counter()
    for lines in split:
        top, bottom = edges(lines)
        seen.update({_key(lines[i]) for i in top + bottom})
    needed = max(2, math.floor(share * len(pages)) + 1)
    running = {k for k, n in seen.items() if n >= needed}
    out, removed = [], []
    for number, lines in enumerate(split, start=1):
        drop: set[int] = set()
        for side in edges(lines):  # outermost first
            keys: set[str] = set()
            for i in side:
                key = _key(lines[i])
                if key in running and key not in keys:
                    drop.add(i)
                    keys.add(key)
        removed += [(number, lines[i]) for i in sorted(drop)]
        out.append("\n".join(ln for i, ln in enumerate(lines) if i not in drop))
    return out, removed


@dataclass(frozen=True)
class OcrPage:
    """One page as Tesseract read it."""

    text: str
    """Words joined by spaces, lines by newlines, paragraphs by a blank line."""
    confidence: float
    """Mean word confidence, 0–100 (Tesseract's ``conf``); NaN when no word was found."""
    words: int


def ocr(
    path: str | os.PathLike,
    dpi: int = 300,
    lang: str = "eng",
    pages: Sequence[int] | None = None,
    workers: int = 1,
) -> list[OcrPage]:
    """Each page of the PDF at ``path`` rendered at ``dpi`` and read by Tesseract.

    ``pages``: the 1-based page numbers to read, in the order given (default: all).
    ``workers``: Tesseract processes run at once, each on one page with one thread
    (``OMP_THREAD_LIMIT=1`` unless already set). Tesseract's own OpenMP threads are slower
    on a small machine: one page at 150 dpi took 8.2 s with two threads on 2 cores and
    2.9 s with one. Pages are rendered one batch of ``workers`` at a time (PDFium is not
    thread-safe, and a 300 dpi A4 page is 8.7 MB of pixels).
    Raises :class:`OcrUnavailable` when Tesseract is not installed (Debian:
    ``apt-get install tesseract-ocr``), :class:`PdfError` when the PDF cannot be rendered,
    when a page would be over :data:`MAX_OCR_PIXELS` (checked for every page before any is
    rendered), or when Tesseract fails on a page.
    """
    pytesseract = _tesseract()
    import pypdfium2

    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    try:
        pdf = pypdfium2.PdfDocument(os.fspath(path))
    except pypdfium2.PdfiumError as err:
        raise PdfError(_pdfium_reason(err)) from None
    limit = os.environ.get("OMP_THREAD_LIMIT")
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # pytesseract passes os.environ on
    try:
        numbers = list(range(1, len(pdf) + 1) if pages is None else pages)
        for n in numbers:
            if not 1 <= n <= len(pdf):
                raise ValueError(f"page {n} is outside the PDF's {len(pdf)} pages")
            _check_size(load_page(pdf, n), n, dpi)  # before minutes of OCR on the pages before it
        out: list[OcrPage] = []
        with ThreadPoolExecutor(workers) as pool:
            for i in range(0, len(numbers), workers):
                batch = numbers[i : i + workers]
                images = [_render(load_page(pdf, n), dpi) for n in batch]
                read = pool.map(lambda im: _read_image(pytesseract, im, lang), images)
                try:
                    out += read
                except pytesseract.TesseractError as err:
                    raise PdfError(f"OCR failed: tesseract: {_words(err)}") from None
        return out
    finally:
        if limit is None:
            os.environ.pop("OMP_THREAD_LIMIT", None)
        pdf.close()


def tesseract_version() -> str:
    """The installed Tesseract's version, e.g. ``5.3.0``; raise :class:`OcrUnavailable`."""
    return str(_tesseract().get_tesseract_version())


# --- the three libraries ------------------------------------------------------------------


def _pypdf(path: str, mode: str) -> list[str]:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError, PyPdfError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfError("encrypted: pypdf: a password is needed, the empty one fails")
        kwargs = {"extraction_mode": "layout"} if mode == "layout" else {}
        return [page.extract_text(**kwargs) for page in reader.pages]
    except PdfError:
        raise
    except FileNotDecryptedError as err:
        raise PdfError(f"encrypted: pypdf: {_words(err)}") from None
    except NotImplementedError as err:  # e.g. an encryption algorithm pypdf lacks
        raise PdfError(f"encrypted: pypdf: {_words(err)}") from None
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError) as err:
        raise PdfError(f"malformed: pypdf: {_words(err)}") from None


def _pdfminer(path: str, mode: str) -> list[str]:
    from io import StringIO

    from pdfminer.converter import TextConverter
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfminer.psparser import PSException

    laparams = LAParams(boxes_flow=None) if mode == "positional" else LAParams()
    pages = []
    try:
        with open(path, "rb") as fp:
            manager = PDFResourceManager()
            for page in PDFPage.get_pages(fp):
                out = StringIO()
                device = TextConverter(manager, out, laparams=laparams)
                PDFPageInterpreter(manager, device).process_page(page)
                device.close()
                pages.append(out.getvalue().removesuffix(PAGE_BREAK))
    except (PDFPasswordIncorrect, PDFEncryptionError) as err:
        raise PdfError(f"encrypted: pdfminer: {_words(err) or type(err).__name__}") from None
    except (PDFSyntaxError, PSException, ValueError, KeyError, TypeError) as err:
        raise PdfError(f"malformed: pdfminer: {_words(err) or type(err).__name__}") from None
    return pages


def _pdfium(path: str, mode: str) -> list[str]:
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(path)
    except pypdfium2.PdfiumError as err:
        raise PdfError(_pdfium_reason(err)) from None
    try:
        pages = []
        for n in range(1, len(pdf) + 1):
            textpage = load_page(pdf, n).get_textpage()
            if mode == "bounded":
                pages.append(textpage.get_text_bounded())
            else:
                pages.append(textpage.get_text_range())
        return pages
    finally:
        pdf.close()


def load_page(pdf, n: int):
    """Page ``n`` (1-based) of a pypdfium2 document; :class:`PdfError` when PDFium cannot
    load it (a page tree that holds itself: ``Failed to load page``)."""
    import pypdfium2

    try:
        return pdf[n - 1]
    except pypdfium2.PdfiumError as err:
        raise PdfError(f"malformed: pdfium: page {n}: {_words(err)}") from None


def _pdfium_reason(err: Exception) -> str:
    words = _words(err)
    kind = "encrypted" if "password" in words.lower() else "malformed"
    return f"{kind}: pdfium: {words}"


def _words(err: BaseException) -> str:
    return " ".join(str(err).split())


def _key(line: str) -> str:
    return re.sub(r"\d+", "#", " ".join(line.split()))


# --- OCR ------------------------------------------------------------------------------------


def _tesseract():
    try:
        import pytesseract
    except ImportError:
        raise OcrUnavailable(
            "Tesseract is not installed: the pytesseract package is missing "
            "(pip install 'rag_lab[pdf]')"
        ) from None
    try:  # which() first: get_tesseract_version() remembers its first answer
        if shutil.which(pytesseract.pytesseract.tesseract_cmd) is None:
            raise pytesseract.TesseractNotFoundError()
        pytesseract.get_tesseract_version()
    except pytesseract.TesseractNotFoundError:
        raise OcrUnavailable(
            "Tesseract is not installed: no `tesseract` program on PATH "
            "(Debian: apt-get install tesseract-ocr)"
        ) from None
    return pytesseract


def _check_size(page, n: int, dpi: int) -> None:
    """:class:`PdfError` when page ``n`` at ``dpi`` is over :data:`MAX_OCR_PIXELS`."""
    width, height = page.get_size()  # in points, 72 an inch
    pixels = round(width * dpi / 72) * round(height * dpi / 72)
    if pixels > MAX_OCR_PIXELS:
        raise PdfError(
            f"page {n} is {width / 72:g} by {height / 72:g} inches: {pixels:,} pixels at "
            f"{dpi} dpi, over the OCR limit of {MAX_OCR_PIXELS:,} pixels a page"
        )


def _render(page, dpi: int):
    return page.render(scale=dpi / 72, grayscale=True).to_pil()


def _read_image(pytesseract, image, lang: str) -> OcrPage:
    data = pytesseract.image_to_data(image, lang=lang, output_type=pytesseract.Output.DICT)
    lines: dict[tuple[int, int, int], list[str]] = {}
    confidences = []
    for i, word in enumerate(data["text"]):
        conf = float(data["conf"][i])
        if conf < 0 or not word.strip():  # rows for blocks, paragraphs and lines, not words
            continue
        key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
        lines.setdefault(key, []).append(word)
        confidences.append(conf)
    text, last = [], None
    for (block, par, _), words in lines.items():
        if last is not None and last != (block, par):
            text.append("")
        text.append(" ".join(words))
        last = (block, par)
    mean = sum(confidences) / len(confidences) if confidences else math.nan
    return OcrPage("\n".join(text), mean, len(confidences))
