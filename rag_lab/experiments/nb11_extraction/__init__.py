"""Notebook 11: where content dies. PDF extraction, measured before retrieval and through it.

The documents are typeset as PDFs whose ground truth is known
(:mod:`rag_lab.sources.pdf.typeset`), read back by three libraries in two modes each and by
``rag-lab index``'s reader, and a scanned variant by Tesseract. ``pdfs``: the PDFs and what
the readers extract (cached); ``measures``: what survives, running lines, retrieval over the
extracted text, OCR; ``run``: the whole run in one call (:func:`measure`) and the claims;
``views``: the records as tables. The PDFs are made again each run.
"""

from rag_lab.experiments.nb11_extraction import measures, pdfs, run, views
from rag_lab.experiments.nb11_extraction.pdfs import extract_cached, ocr_cached

__all__ = ["extract_cached", "measures", "ocr_cached", "pdfs", "run", "views"]
