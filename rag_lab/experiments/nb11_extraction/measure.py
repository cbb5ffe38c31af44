"""The whole run of notebook 11 in one call: typeset, extract, measure survival and waste,
retrieve over the extracted corpora, scan and OCR; every record the notebook shows.

The notebook calls :func:`measure` once, before its findings (the claims are worded from
the :class:`~.results.Results` it holds), and shows the records section by section.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rag_lab.evaluation.lab import Lab
from rag_lab.experiments.nb11_extraction.extraction import (
    LIBRARY_READERS,
    Extracted,
    extract_all,
    library_versions,
)
from rag_lab.experiments.nb11_extraction.kept import (
    best_and_worst,
    layout_tests,
    page_cuts,
    survival_table,
)
from rag_lab.experiments.nb11_extraction.mitigations import DRAWING_ORDER
from rag_lab.experiments.nb11_extraction.ocr import ocr_run, ocr_threshold_table, text_layer_table
from rag_lab.experiments.nb11_extraction.pdfs import (
    SCAN_LAYOUT,
    Typeset,
    needles_by_doc,
    scan_all,
    typeset_all,
)
from rag_lab.experiments.nb11_extraction.results import Results
from rag_lab.experiments.nb11_extraction.retrieval import (
    Corpus,
    corpora,
    destroyed_table,
    embed_all,
    loss_table,
    retrieval_systems,
)
from rag_lab.experiments.nb11_extraction.rows import needles_in_tables, rows_table
from rag_lab.experiments.nb11_extraction.running import waste_table
from rag_lab.sources.pdf import extract as ex


def tesseract() -> tuple[str | None, str]:
    """(Tesseract's version, or None when it cannot run here; the reason it cannot)."""
    try:
        return ex.tesseract_version(), ""
    except ex.OcrUnavailable as err:
        return None, str(err)


def versions(ocr: tuple[str | None, str]) -> str:
    """The extractors' versions and Tesseract's (or why OCR cannot run), for the closing
    Environment section."""
    libraries = ", ".join(f"{k} {v}" for k, v in library_versions().items())
    version, reason = ocr
    tess = f"OCR: tesseract {version}" if version is not None else f"OCR cannot run: {reason}"
    return f"extractors: {libraries}\n{tess}"


@dataclass(frozen=True, eq=False)
class Measured:
    """What notebook 11 measured: the PDFs, what each reader extracted, the corpora
    retrieved from, the scans, and the run's :class:`~.results.Results`."""

    needles: dict[str, list[str]]
    sets: dict[str, Typeset]
    extracted: Extracted
    picks: dict[str, tuple[str, str]]
    """Each layout's reader keeping the most needles and the one keeping the fewest."""
    corpora: list[Corpus]
    same_text: dict[str, str]
    """Corpora left out, each the same text as the named one measured."""
    embedded: str
    """What embedding the corpora took, in a line."""
    scanned: Typeset
    results: Results
    tesseract: str | None
    """Tesseract's version; None when OCR could not run (:attr:`ocr_reason` says why)."""
    ocr_reason: str = ""


def measure(lab: Lab, folder: str | os.PathLike, ocr: tuple[str | None, str]) -> Measured:
    """Every measure of notebook 11 over ``lab``'s corpus, the PDFs written under ``folder``;
    ``ocr`` is :func:`tesseract`'s answer (no OCR when its version is None). Retrieval runs
    over each layout's best and worst reader, then the running-header worst with running
    lines removed and the row-drawn two columns as ``rag-lab index`` reads them by default
    (:data:`~.mitigations.DRAWING_ORDER`), so that each mitigation has both its corpora."""
    docs, needles = lab.docs, needles_by_doc(lab.queries)
    sets = typeset_all(docs, needles, folder)
    extracted = extract_all(sets)
    survival = survival_table(docs, sets, extracted, needles)
    picks = best_and_worst(survival)
    extra = [
        ("running-header", picks["running-header"][1], True),
        ("two-column-rows", DRAWING_ORDER, False),
    ]
    measured, same = corpora(lab, extracted, picks, extra)
    embedded = embed_all(lab, measured)
    systems = retrieval_systems(lab, measured)
    scanned = scan_all(sets[SCAN_LAYOUT], folder)
    text_layer = text_layer_table(extract_all({scanned.layout: scanned}, LIBRARY_READERS))
    version, reason = ocr
    run = ocr_run(scanned, needles) if version is not None else None
    results = Results(
        survival=survival,
        survival_removed=survival_table(
            docs, sets, extracted, needles, remove_running=True, layouts=["running-header"]
        ),
        tests=layout_tests(docs, extracted, needles),
        rows=rows_table(docs, extracted),
        waste=waste_table(docs, sets, extracted),
        page_cuts=page_cuts(sets, extracted, needles),
        needles_in_tables=needles_in_tables(docs, needles),
        destroyed=destroyed_table(lab, measured),
        systems=systems,
        loss=loss_table(systems, lab.queries),
        queries=lab.queries,
        text_layer=text_layer,
        run=run,
        thresholds=ocr_threshold_table(run) if run is not None else None,
    )
    return Measured(
        needles,
        sets,
        extracted,
        picks,
        measured,
        same,
        embedded,
        scanned,
        results,
        version,
        reason,
    )
