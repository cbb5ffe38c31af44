"""The corpus typeset as PDFs, the readers, and the text they extract: cached by the PDF's
bytes, the reader and its library's version (OCR: Tesseract's), so a warm run extracts nothing.

What :mod:`rag_lab.evaluation.extraction` measures is read from here.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from rag_lab import paths
from rag_lab.documents import Document
from rag_lab.json_cache import JsonCache
from rag_lab.progress import track
from rag_lab.questions import Query
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.text import flat

SCAN_DPI = 150
"""Scans are grey at 150 dpi (an office scanner's draft setting); rendering finer adds no detail."""
APP_READER = "rag-lab index"
""":func:`rag_lab.sources.pdf.document.read_pdf` with its defaults: running lines removed."""
LIBRARY_READERS = tuple(f"{e} {m}" for e in ex.EXTRACTORS for m in ex.MODES[e])
READERS = (*LIBRARY_READERS, APP_READER)

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
    out: dict[str, dict[str, None]] = {}
    for q in queries:
        out.setdefault(q.question.doc, {})[q.needle] = None
    return {d: list(ns) for d, ns in out.items()}


def typeset_all(docs: Sequence[Document], needles: Mapping[str, Sequence[str]], folder: Path):
    """Every document in each layout, under ``folder/<layout>/``: layout → :class:`Typeset`."""
    out = {}
    for layout in track(ts.LAYOUTS, "typesetting", "layout"):
        (folder / layout).mkdir(parents=True, exist_ok=True)
        files = {doc.id: folder / layout / f"{doc.id}.pdf" for doc in docs}
        placed = {d.id: ts.typeset(d, layout, files[d.id], needles.get(d.id, ())) for d in docs}
        out[layout] = Typeset(layout, files, placed)
    return out


def scan_all(sets: Typeset, folder: Path) -> Typeset:
    """The layout's PDFs rendered to images: the same ground truth, no text layer."""
    (folder / f"scanned-{sets.layout}").mkdir(parents=True, exist_ok=True)
    files = {d: folder / f"scanned-{sets.layout}" / f"{d}.pdf" for d in sets.files}
    for doc_id, pdf in track(sets.files.items(), "scanning", "PDF"):
        ts.scan(pdf, files[doc_id], dpi=SCAN_DPI)
    return Typeset(f"scanned {sets.layout}", files, sets.placed)


def library_versions() -> dict[str, str]:
    """Each extractor's library and its version, and the app's reader's (what the cache keys on)."""
    out = {e: pdf_document.library_version(e) for e in ex.EXTRACTORS}
    return out | {"rag-lab": f"reader {pdf_document.READER_VERSION}, {out['pdfium']}"}


def _cache() -> JsonCache:
    return JsonCache(paths.cache_dir() / "pdf-text")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _key(path: Path, reader: str) -> dict:
    library = library_versions()["rag-lab" if reader == APP_READER else reader.split(" ")[0]]
    return {"pdf": _sha256(path), "reader": reader, "library": library}


def extract_cached(path: Path, reader: str) -> ex.PdfText:
    """:func:`rag_lab.sources.pdf.extract.extract`, cached by the PDF's bytes and the reader."""
    name = ("rag-lab", "index") if reader == APP_READER else reader.split(" ")
    if (pages := _cache().get(key := _key(path, reader))) is None:
        read = pdf_document.read_pdf(path) if reader == APP_READER else ex.extract(path, *name)
        _cache().save(key, pages := list(read.pages))
    return ex.PdfText(*name, tuple(pages))


def extract_all(sets: Mapping[str, Typeset], readers: Sequence[str] = READERS) -> Extracted:
    """(layout, reader) → document id → pages; what the cache lacks extracted in parallel."""
    jobs = [(lay, r, d, f) for lay in sets for r in readers for d, f in sets[lay].files.items()]
    if missing := [(f, r) for _, r, _, f in jobs if _cache().get(_key(f, r)) is None]:
        with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:  # each caches
            done = pool.map(extract_cached, *zip(*missing, strict=True), chunksize=4)
            list(track(done, "extracting", "PDF", total=len(missing)))
    out: dict[tuple[str, str], dict[str, ex.PdfText]] = {}
    for layout, reader, doc, file in jobs:
        out.setdefault((layout, reader), {})[doc] = extract_cached(file, reader)
    return out


def ocr_cached(path: Path, pages: Sequence[int], dpi: int = SCAN_DPI) -> list[ex.OcrPage]:
    """:func:`rag_lab.sources.pdf.extract.ocr` of ``pages``, cached by bytes and Tesseract."""
    key = {"pdf": _sha256(path), "pages": list(pages), "dpi": dpi, "ocr": ex.tesseract_version()}
    rows = _cache().get(key)
    if rows is None:  # JSON has no NaN: a page without words keeps its confidence as null
        read = ex.ocr(path, dpi=dpi, pages=pages, workers=pdf_document.OCR_WORKERS)
        rows = [[p.text, None if math.isnan(p.confidence) else p.confidence, p.words] for p in read]
        _cache().save(key, rows)
    return [ex.OcrPage(t, math.nan if c is None else c, w) for t, c, w in rows]


def folded(text: str) -> str:
    """:func:`flat` with quotes, backticks and asterisks left out: the marks OCR confuses."""
    return flat(text.translate(str.maketrans("", "", "`*'\"\u2018\u2019\u201c\u201d")))


def canonical(pages: Sequence[str]) -> str:
    """The pages as one text, ``\\r\\n`` read as ``\\n``, joined as ``rag-lab index`` joins them."""
    return pdf_document.PAGE_JOIN.join(p.replace("\r\n", "\n").replace("\r", "\n") for p in pages)


def extracted_docs(
    docs: Sequence[Document], by_doc: Mapping[str, ex.PdfText], remove_running: bool = False
) -> list[Document]:
    """The corpus as a reader extracted it, plain text; with ``remove_running``, the lines
    repeated at the page edges removed first (``rag-lab index`` has removed them itself)."""
    out = []
    for doc in docs:
        pages = [canonical([p]) for p in by_doc[doc.id].pages]
        if remove_running and by_doc[doc.id].extractor != "rag-lab":
            pages = ex.remove_repeated_lines(pages)[0]
        out.append(Document(doc.id, doc.title, canonical(pages), format="plain"))
    return out
