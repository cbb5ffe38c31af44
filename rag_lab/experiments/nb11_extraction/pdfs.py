"""The corpus as PDFs, the readers, and the text they extract.

Every document is typeset in every layout and one layout is scanned; the ground truth of a
file is its :class:`~rag_lab.sources.pdf.typeset.Placement` (which text was drawn on which
page, in which order). What a reader extracts and what OCR reads is cached
(:class:`rag_lab.json_cache.JsonCache`) keyed by the PDF's bytes, the reader and its
library's version, so a warm run extracts nothing. Needles are matched whitespace
normalised (:func:`flat`); OCR'd ones also with the small marks OCR confuses left out
(:func:`folded`).
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from multiprocessing import get_context
from pathlib import Path

import pandas as pd

from rag_lab import paths
from rag_lab.documents import Document
from rag_lab.json_cache import JsonCache
from rag_lab.progress import track
from rag_lab.questions import Query
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.text import flat

SCAN_LAYOUT = "one-column"
"""The layout rendered to images for the scans."""
SCAN_DPI = 150
"""Scans are rendered at 150 dpi, grey (an office scanner's draft setting), and OCR reads
them at that resolution: rendering finer adds no detail."""
STRATEGY = "E"
"""The chunking measured over extracted text: the app's (paragraphs, sentences, header)."""
LIBRARY_READERS: tuple[str, ...] = tuple(f"{e} {m}" for e in ex.EXTRACTORS for m in ex.MODES[e])
"""Every extractor in every mode, named ``"pypdf default"``, ``"pdfminer positional"``, …"""
APP_READER = "rag-lab index"
"""What ``rag-lab index`` reads a PDF with (:func:`rag_lab.sources.pdf.document.read_pdf`,
its defaults): PDFium, cleaned, paragraphs from line spacing, running lines removed."""
READERS: tuple[str, ...] = (*LIBRARY_READERS, APP_READER)
_WORKERS = 2
"""Processes extracting at once on a cold cache (pdfminer.six, pure Python, is most of it)."""
_MARKS = str.maketrans("", "", "`*'\"\u2018\u2019\u201c\u201d")
_WIDTH = 100
"""Characters of an excerpt's line shown; past them it is cut with ``…``."""

Extracted = Mapping[tuple[str, str], Mapping[str, ex.PdfText]]
"""(layout, reader) → document id → the pages that reader extracted."""


@dataclass(frozen=True)
class Typeset:
    """The corpus drawn in one layout: a PDF and its ground truth per document."""

    layout: str
    files: dict[str, Path]
    placed: dict[str, ts.Placement]


def needles_by_doc(queries: Sequence[Query]) -> dict[str, list[str]]:
    """Each document's distinct needles, in question order."""
    out: dict[str, list[str]] = {}
    for q in queries:
        if q.needle not in out.setdefault(q.question.doc, []):
            out[q.question.doc].append(q.needle)
    return out


def typeset_all(
    docs: Sequence[Document],
    needles: Mapping[str, Sequence[str]],
    folder: str | os.PathLike,
    layouts: Sequence[str] = ts.LAYOUTS,
) -> dict[str, Typeset]:
    """Every document in each of ``layouts`` under ``folder`` (one subfolder per layout)."""
    out = {}
    for layout in track(layouts, "typesetting", "layout"):
        here = Path(folder) / layout
        here.mkdir(parents=True, exist_ok=True)
        files = {doc.id: here / f"{doc.id}.pdf" for doc in docs}
        placed = {d.id: ts.typeset(d, layout, files[d.id], needles.get(d.id, ())) for d in docs}
        out[layout] = Typeset(layout, files, placed)
    return out


def scan_all(sets: Typeset, folder: str | os.PathLike, dpi: int = SCAN_DPI) -> Typeset:
    """The layout's PDFs rendered to images: the same ground truth, no text layer."""
    here = Path(folder) / f"scanned-{sets.layout}"
    here.mkdir(parents=True, exist_ok=True)
    files = {}
    for doc_id, pdf in track(sets.files.items(), "scanning", "PDF"):
        files[doc_id] = here / f"{doc_id}.pdf"
        ts.scan(pdf, files[doc_id], dpi=dpi)
    return Typeset(f"scanned {sets.layout}", files, sets.placed)


def layout_table(sets: Mapping[str, Typeset]) -> pd.DataFrame:
    """Per layout: pages, needles placed of all, needles a page break cuts, characters the
    core fonts could not draw."""
    rows = []
    for layout, s in sets.items():
        spans = [pages for p in s.placed.values() for pages in p.needles.values()]
        rows.append(
            {
                "layout": layout,
                "documents": len(s.files),
                "pages": sum(len(p.pages) for p in s.placed.values()),
                "needles placed": sum(1 for pages in spans if pages),
                "needles": len(spans),
                "cut by a page break": sum(1 for pages in spans if len(pages) > 1),
                "characters drawn as ?": sum(p.replaced for p in s.placed.values()),
            }
        )
    return pd.DataFrame(rows).set_index("layout")


# --- reading them, cached ---------------------------------------------------------------------


def library_versions() -> dict[str, str]:
    """The version of each extractor's library (what the cache keys on)."""
    return {
        "pypdf": version("pypdf"),
        "pdfminer": version("pdfminer.six"),
        "pdfium": version("pypdfium2"),
        "rag-lab": f"reader {pdf_document.READER_VERSION}, pypdfium2 {version('pypdfium2')}",
    }


def _cached(key: dict, compute):
    cache = JsonCache(paths.cache_dir() / "pdf-text")
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.save(key, value)
    return value


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extract_key(path: Path, reader: str) -> dict:
    library = library_versions()["rag-lab" if reader == APP_READER else reader.split(" ")[0]]
    return {"pdf": _sha256(path), "reader": reader, "library": library}


def _extract_pages(path: Path, reader: str) -> list[str]:
    if reader == APP_READER:
        return list(pdf_document.read_pdf(path).pages)
    return list(ex.extract(path, *reader.split(" ")).pages)


def extract_cached(path: Path, reader: str) -> ex.PdfText:
    """:func:`rag_lab.sources.pdf.extract.extract`, cached by the PDF's bytes and the reader."""
    pages = _cached(_extract_key(path, reader), lambda: _extract_pages(path, reader))
    name = ("rag-lab", "index") if reader == APP_READER else reader.split(" ")
    return ex.PdfText(*name, tuple(pages))


def extract_all(
    sets: Mapping[str, Typeset], readers: Sequence[str] = READERS, workers: int = _WORKERS
) -> dict[tuple[str, str], dict[str, ex.PdfText]]:
    """(layout, reader) → document id → the extracted pages; what the cache lacks is
    extracted in ``workers`` processes first."""
    jobs = [(lay, r, d, f) for lay in sets for r in readers for d, f in sets[lay].files.items()]
    cache = JsonCache(paths.cache_dir() / "pdf-text")
    missing = [(f, r) for _, r, _, f in jobs if cache.get(_extract_key(f, r)) is None]
    if missing:
        files, names = [f for f, _ in missing], [r for _, r in missing]
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            done = pool.map(_extract_pages, files, names, chunksize=4)
            counted = track(done, "extracting", "PDF", total=len(missing))
            for f, r, pages in zip(files, names, counted, strict=True):
                cache.save(_extract_key(f, r), pages)
    out: dict[tuple[str, str], dict[str, ex.PdfText]] = {}
    for layout, reader, doc, file in jobs:
        out.setdefault((layout, reader), {})[doc] = extract_cached(file, reader)
    return out


def ocr_cached(path: Path, pages: Sequence[int], dpi: int = SCAN_DPI) -> list[ex.OcrPage]:
    """:func:`rag_lab.sources.pdf.extract.ocr` of ``pages``, cached by bytes and Tesseract."""
    key = {"pdf": _sha256(path), "pages": list(pages), "dpi": dpi, "ocr": ex.tesseract_version()}
    rows = _cached(
        key,
        lambda: [
            [p.text, None if math.isnan(p.confidence) else p.confidence, p.words]
            for p in ex.ocr(path, dpi=dpi, pages=pages, workers=pdf_document.OCR_WORKERS)
        ],
    )
    return [ex.OcrPage(t, math.nan if c is None else c, w) for t, c, w in rows]


# --- the extracted text -----------------------------------------------------------------------


def folded(text: str) -> str:
    """:func:`flat` with quotes, backticks and asterisks left out: the small marks OCR reads
    as one another, so that what is left to differ is letters, digits and other symbols."""
    return flat(text.translate(_MARKS))


def canonical(pages: Sequence[str]) -> str:
    """The pages as one text: ``\\r\\n`` read as ``\\n``, joined as ``rag-lab index`` joins
    them (:data:`~rag_lab.sources.pdf.document.PAGE_JOIN`), so offsets name a page."""
    return pdf_document.PAGE_JOIN.join(p.replace("\r\n", "\n").replace("\r", "\n") for p in pages)


def is_app(by_doc: Mapping[str, ex.PdfText]) -> bool:
    """Whether these pages are ``rag-lab index``'s (which has removed running lines itself)."""
    return next(iter(by_doc.values())).extractor == "rag-lab"


def extracted_docs(
    docs: Sequence[Document], by_doc: Mapping[str, ex.PdfText], remove_running: bool = False
) -> list[Document]:
    """The corpus as a reader extracted it: plain documents titled as their PDF is; with
    ``remove_running``, repeated lines removed first."""
    out = []
    remove_running = remove_running and not is_app(by_doc)  # it has removed them already
    for doc in docs:
        pages = list(by_doc[doc.id].pages)
        if remove_running:
            pages = ex.remove_repeated_lines([canonical([p]) for p in pages])[0]
        out.append(Document(doc.id, doc.title, canonical(pages), format="plain"))
    return out


def excerpt(
    by_doc: Mapping[str, ex.PdfText], doc: str, lines: int = 6, start: str | None = None
) -> str:
    """``lines`` non-blank lines of a document as a reader gave them, from its top or from
    the first line holding ``start``; each cut to a page's width."""
    text = canonical(by_doc[doc].pages).split("\n")
    at = 0 if start is None else next((i for i, ln in enumerate(text) if start in ln), None)
    if at is None:
        return f"({start!r} is not in the text)"
    shown = [ln.rstrip() for ln in text[at:] if ln.strip()][:lines]
    return "\n".join(ln if len(ln) <= _WIDTH else ln[: _WIDTH - 1] + "…" for ln in shown)
