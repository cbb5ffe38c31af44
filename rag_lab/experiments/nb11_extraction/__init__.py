"""Notebook 11: where content dies. PDF extraction, measured before retrieval and through it.

The documents are typeset as PDFs whose ground truth is known
(:mod:`rag_lab.sources.pdf.typeset`), read back by three libraries in two modes each and by
``rag-lab index``'s reader, and a scanned variant by Tesseract. ``pdfs``: the PDFs and what
the readers extract (cached); ``measures``: what survives, running lines, retrieval over the
extracted text, OCR; ``run``: the whole run in one call (:func:`measure`) and the claims;
``views``: the records as tables. The PDFs are made again each run.
"""

from rag_lab.experiments.nb11_extraction import views
from rag_lab.experiments.nb11_extraction.measures import table_of_rows
from rag_lab.experiments.nb11_extraction.pdfs import excerpt, extract_cached, ocr_cached
from rag_lab.experiments.nb11_extraction.run import (
    HEADLINE,
    Results,
    chapter_claims,
    measure,
    tesseract,
    versions,
)

__all__ = [
    "HEADLINE",
    "Results",
    "chapter_claims",
    "excerpt",
    "extract_cached",
    "measure",
    "ocr_cached",
    "table_of_rows",
    "tesseract",
    "versions",
    "views",
]
