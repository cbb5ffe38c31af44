"""Notebook 11: where content dies. PDF extraction, measured before retrieval and through it.

The 20 documents are typeset as PDFs whose ground truth is known
(:mod:`rag_lab.sources.pdf.typeset`: which text is drawn on which page, in which order),
read back by three libraries in two modes each (:mod:`rag_lab.sources.pdf.extract`), and
the scanned variant by Tesseract. Three things are measured:

- **survival**: the 32 needles found verbatim in the extracted text (whitespace
  normalised), per layout and reader, with Wilson intervals; the share of the drawn text's
  8-word runs kept in order (what interleaving breaks); for the tables layout, the rows whose
  cells come out in order;
- **waste**: chunks of strategy E over the extracted text that carry a running header or
  footer, and the share of embedded word-pieces those lines take;
- **the symptom three layers later**: dense Recall@4 and @20 of the 64 queries over the
  extracted corpus against the clean Markdown, paired per question (the 64 queries are 32
  questions asked twice), for each layout's best and worst reader.

What each mitigation recovers is the same measures, with it and without: running lines
removed by repetition, a layout-aware reader, OCR with a confidence threshold.

Measures return records of numbers (DataFrames, :class:`OcrRun`, the :class:`Results` of
the run); a ``*_view`` or ``*_table`` of a record formats it for the notebook, and the
claims (ledger entries, :class:`~rag_lab.evaluation.ledger.Entry`) and the reading are
worded from the records' fields, last. The modules, by concern:

- ``pdfs``: the corpus typeset in every layout, and scanned (:class:`Typeset`);
- ``extraction``: the readers, and what they extract and OCR reads, cached (keyed by the
  PDF's bytes, the reader and its library's version; :class:`rag_lab.json_cache.JsonCache`);
- ``text``: the extracted text normalised and joined as the app joins pages, as documents;
- ``kept``: needles and 8-word runs kept, each layout against one column (:class:`NeedleFinding`);
- ``rows``: table rows kept in order, needles inside tables;
- ``running``: running lines, the chunks carrying them and the word-pieces they waste, removal;
- ``retrieval``: the extracted corpora, retrieved and set against the clean Markdown
  (:class:`~rag_lab.evaluation.paired.Finding`);
- ``ocr``: what the readers and Tesseract get from the scans, confidence thresholds;
- ``figures``; ``results`` (the run's records in one); ``mitigations``; ``claims``;
  ``prose`` (the reading); ``views`` (the records as tables that fit a page);
- ``measure``: the whole run in one call (:func:`measure`, a :class:`Measured`).

The PDFs are made again each run (they are byte for byte the same) and never kept in the
repository. Progress goes to the terminal or the runner's relay (:mod:`rag_lab.progress`),
never into the notebook.
"""

from __future__ import annotations

from rag_lab.experiments.nb11_extraction.claims import HEADLINE, chapter_claims, claims_table
from rag_lab.experiments.nb11_extraction.extraction import (
    APP_READER,
    LIBRARY_READERS,
    READERS,
    extract_all,
    extract_cached,
    library_versions,
    ocr_cached,
    reader_parts,
)
from rag_lab.experiments.nb11_extraction.figures import loss_figure, survival_figure
from rag_lab.experiments.nb11_extraction.kept import (
    NeedleFinding,
    best_and_worst,
    kept_vector,
    layout_tests,
    page_cuts,
    runs_kept,
    survival,
    survival_table,
)
from rag_lab.experiments.nb11_extraction.measure import Measured, measure, tesseract, versions
from rag_lab.experiments.nb11_extraction.mitigations import mitigation_tables, mitigations
from rag_lab.experiments.nb11_extraction.ocr import (
    OcrRun,
    app_refusals,
    ocr_misses,
    ocr_run,
    ocr_sample,
    ocr_summary,
    ocr_threshold_table,
    text_layer_table,
)
from rag_lab.experiments.nb11_extraction.pdfs import (
    SCAN_LAYOUT,
    Typeset,
    layout_table,
    needles_by_doc,
    scan_all,
    typeset_all,
)
from rag_lab.experiments.nb11_extraction.prose import reading
from rag_lab.experiments.nb11_extraction.results import Results
from rag_lab.experiments.nb11_extraction.retrieval import (
    corpora,
    destroyed_table,
    embed_all,
    loss_table,
    retrieval_systems,
)
from rag_lab.experiments.nb11_extraction.rows import (
    needles_in_tables,
    rows_kept,
    rows_table,
    table_count,
    table_excerpt,
    table_of_rows,
)
from rag_lab.experiments.nb11_extraction.running import (
    removal_check,
    running_spans,
    waste_row,
    waste_table,
)
from rag_lab.experiments.nb11_extraction.text import (
    canonical,
    excerpt,
    extracted_docs,
    flat,
    folded,
)
from rag_lab.experiments.nb11_extraction.views import (
    destroyed_view,
    kept_views,
    layout_view,
    loss_views,
    losses_view,
    misses_text,
    picks_view,
    refusals_text,
    rows_view,
    text_layer_view,
    threshold_view,
    waste_views,
)

__all__ = [
    "APP_READER",
    "HEADLINE",
    "LIBRARY_READERS",
    "READERS",
    "SCAN_LAYOUT",
    "Measured",
    "NeedleFinding",
    "OcrRun",
    "Results",
    "Typeset",
    "app_refusals",
    "best_and_worst",
    "canonical",
    "chapter_claims",
    "claims_table",
    "corpora",
    "destroyed_table",
    "destroyed_view",
    "embed_all",
    "excerpt",
    "extract_all",
    "extract_cached",
    "extracted_docs",
    "flat",
    "folded",
    "kept_vector",
    "kept_views",
    "layout_table",
    "layout_tests",
    "layout_view",
    "library_versions",
    "loss_figure",
    "loss_table",
    "loss_views",
    "losses_view",
    "measure",
    "misses_text",
    "mitigation_tables",
    "mitigations",
    "needles_by_doc",
    "needles_in_tables",
    "ocr_cached",
    "ocr_misses",
    "ocr_run",
    "ocr_sample",
    "ocr_summary",
    "ocr_threshold_table",
    "page_cuts",
    "picks_view",
    "reader_parts",
    "reading",
    "refusals_text",
    "removal_check",
    "retrieval_systems",
    "rows_kept",
    "rows_table",
    "rows_view",
    "running_spans",
    "runs_kept",
    "scan_all",
    "survival",
    "survival_figure",
    "survival_table",
    "table_count",
    "table_excerpt",
    "table_of_rows",
    "tesseract",
    "text_layer_table",
    "text_layer_view",
    "threshold_view",
    "typeset_all",
    "versions",
    "waste_row",
    "waste_table",
    "waste_views",
]
