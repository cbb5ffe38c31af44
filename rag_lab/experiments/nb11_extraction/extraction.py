"""The readers, and what they extract and OCR reads, cached.

Results are cached (:class:`rag_lab.json_cache.JsonCache`, checksummed, under
:func:`rag_lab.paths.cache_dir`) keyed by the PDF's bytes, the reader and its library's
version, so that a warm run extracts nothing.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import version
from multiprocessing import get_context
from pathlib import Path

from rag_lab import paths
from rag_lab.experiments.nb11_extraction.pdfs import SCAN_DPI, Typeset
from rag_lab.json_cache import JsonCache
from rag_lab.progress import track
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex

LIBRARY_READERS: tuple[str, ...] = tuple(f"{e} {m}" for e in ex.EXTRACTORS for m in ex.MODES[e])
"""Every extractor in every mode, named ``"pypdf default"``, ``"pdfminer positional"``, …"""
APP_READER = "rag-lab index"
"""What ``rag-lab index`` reads a PDF with (:func:`rag_lab.sources.pdf.document.read_pdf`,
its defaults): PDFium, cleaned, paragraphs from line spacing, running lines removed."""
READERS: tuple[str, ...] = (*LIBRARY_READERS, APP_READER)
_EXTRACT_WORKERS = 2
"""Processes extracting at once on a cold cache (pdfminer.six, pure Python, is most of it)."""

Extracted = Mapping[tuple[str, str], Mapping[str, ex.PdfText]]
"""(layout, reader) → document id → the pages that reader extracted."""


def reader_parts(reader: str) -> tuple[str, str]:
    """A library reader's name as (extractor, mode): ``"pdfminer positional"`` →
    ``("pdfminer", "positional")``."""
    extractor, mode = reader.split(" ")
    return extractor, mode


def library_versions() -> dict[str, str]:
    """The version of each extractor's library (what the cache keys on)."""
    return {
        "pypdf": version("pypdf"),
        "pdfminer": version("pdfminer.six"),
        "pdfium": version("pypdfium2"),
        "rag-lab": f"reader {pdf_document.READER_VERSION}, pypdfium2 {version('pypdfium2')}",
    }


def _cache() -> JsonCache:
    return JsonCache(paths.cache_dir() / "pdf-text")


def _cached(key: dict, compute):
    cache = _cache()
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.save(key, value)
    return value


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extract_key(path: Path, reader: str) -> dict:
    library = library_versions()["rag-lab" if reader == APP_READER else reader_parts(reader)[0]]
    return {"pdf": _sha256(path), "reader": reader, "library": library}


def _extract_pages(path: Path, reader: str) -> list[str]:
    if reader == APP_READER:
        return list(pdf_document.read_pdf(path).pages)
    return list(ex.extract(path, *reader_parts(reader)).pages)


def extract_cached(path: Path, reader: str) -> ex.PdfText:
    """:func:`rag_lab.sources.pdf.extract.extract`, cached by the PDF's bytes and the reader."""
    pages = _cached(_extract_key(path, reader), lambda: _extract_pages(path, reader))
    name = ("rag-lab", "index") if reader == APP_READER else reader_parts(reader)
    return ex.PdfText(*name, tuple(pages))


def extract_all(
    sets: Mapping[str, Typeset], readers: Sequence[str] = READERS, workers: int = _EXTRACT_WORKERS
) -> dict[tuple[str, str], dict[str, ex.PdfText]]:
    """(layout, reader) → document id → the extracted pages; what the cache lacks is
    extracted in ``workers`` processes first."""
    jobs = [
        (layout, r, d, f) for layout in sets for r in readers for d, f in sets[layout].files.items()
    ]
    cache = _cache()
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
