"""Notebook 11: where content dies. PDF extraction, measured before retrieval and through it.

The documents are typeset as PDFs whose ground truth is known
(:mod:`rag_lab.sources.pdf.typeset`), read back by three libraries in two modes each and by
``rag-lab index``'s reader (:mod:`rag_lab.sources.pdf.extract`), and a scanned variant by
Tesseract. Measured: the needles found verbatim, 8-word runs and table rows kept in order;
the chunks carrying a running header or footer and the word-pieces those lines take; dense
Recall@k over each extracted corpus against the clean Markdown, by question; what each
mitigation recovers. The modules, by concern:

- ``pdfs``: the PDFs, the readers, what they extract and OCR reads (cached), the text;
- ``survival``: needles, runs and rows kept, each layout against one column, running lines;
- ``retrieval``: the extracted corpora retrieved and set against the clean Markdown;
- ``ocr``: what the readers and Tesseract get from the scans, confidence thresholds;
- ``run``: the whole run in one call (:func:`measure`, its :class:`Results`), mitigations;
- ``claims``: the ledger entries; ``views``: the records as tables and figures.

Measures return records of numbers; ``views`` formats them, last (the notebook calls
``nb11.views.…``). The PDFs are made again each run and never kept in the repository.
"""

from __future__ import annotations

from rag_lab.experiments.nb11_extraction import views
from rag_lab.experiments.nb11_extraction.claims import HEADLINE, chapter_claims
from rag_lab.experiments.nb11_extraction.pdfs import excerpt, extract_cached, ocr_cached
from rag_lab.experiments.nb11_extraction.run import Results, measure, tesseract, versions
from rag_lab.experiments.nb11_extraction.survival import table_of_rows

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
