"""Notebook 11: where content dies. PDF extraction, measured before retrieval and through it.

``pdfs``: the corpus typeset as PDFs (:mod:`rag_lab.sources.pdf.typeset`) and what each
reader extracts (cached); ``measures``: what survives, running lines, retrieval over the
extracted text, OCR; ``run``: the whole run in one call and the claims; ``views``: tables.
"""

from rag_lab.experiments.nb11_extraction import measures, pdfs, run, views
from rag_lab.experiments.nb11_extraction.pdfs import extract_cached, ocr_cached

__all__ = ["extract_cached", "measures", "ocr_cached", "pdfs", "run", "views"]
