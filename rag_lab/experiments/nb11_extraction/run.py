"""The whole run of notebook 11 in one call (:func:`measure`): typeset, extract, measure
survival and waste, retrieve over the extracted corpora, scan and OCR; every record the
notebook shows, in one :class:`Results`, and what each mitigation recovers
(:func:`mitigations`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from rag_lab.evaluation.lab import Lab
from rag_lab.experiments.nb11_extraction.ocr import (
    OcrRun,
    app_refusals,
    ocr_run,
    ocr_threshold_table,
    text_layer_table,
)
from rag_lab.experiments.nb11_extraction.pdfs import (
    LIBRARY_READERS,
    SCAN_DPI,
    SCAN_LAYOUT,
    Extracted,
    Typeset,
    extract_all,
    library_versions,
    needles_by_doc,
    scan_all,
    typeset_all,
)
from rag_lab.experiments.nb11_extraction.retrieval import (
    KS,
    corpora,
    destroyed_table,
    embed_all,
    loss_table,
    retrieval_systems,
)
from rag_lab.experiments.nb11_extraction.survival import (
    best_and_worst,
    layout_tests,
    needles_in_tables,
    rows_table,
    survival_table,
    waste_table,
)
from rag_lab.metrics import Ranks, hits_at
from rag_lab.questions import Query
from rag_lab.sources.pdf import extract as ex
from rag_lab.stats import cluster_paired

DRAWING_ORDER = "pdfium default"
"""The reader layout analysis is set against: the one ``rag-lab index`` uses by default,
which reads in the order the page was drawn."""


@dataclass(frozen=True, eq=False)
class Results:
    """Every record notebook 11 measured (numbers), and the files and texts they come from."""

    survival: pd.DataFrame
    """:func:`~.survival.survival_table` of every layout."""
    survival_removed: pd.DataFrame
    """The same of the running-header layout, running lines removed by repetition."""
    tests: pd.DataFrame
    """:func:`~.survival.layout_tests`: each layout against one column, per reader."""
    rows: pd.DataFrame
    """:func:`~.survival.rows_table`."""
    waste: pd.DataFrame
    """:func:`~.survival.waste_table`."""
    needles_in_tables: int
    destroyed: pd.DataFrame
    """:func:`~.retrieval.destroyed_table`."""
    systems: Mapping[str, Ranks]
    """:func:`~.retrieval.retrieval_systems`: the clean Markdown first, then each corpus."""
    loss: pd.DataFrame
    """:func:`~.retrieval.loss_table`."""
    queries: Sequence[Query]
    text_layer: pd.DataFrame
    """:func:`~.ocr.text_layer_table`: what the readers get from the scans."""
    run: OcrRun | None = None
    """The OCR run; None when Tesseract is not installed."""
    thresholds: pd.DataFrame | None = None
    """:func:`~.ocr.ocr_threshold_table` of the run."""
    refusals: pd.DataFrame | None = None
    """:func:`~.ocr.app_refusals`."""
    picks: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each layout's reader keeping the most needles and the one keeping the fewest."""
    same_text: dict[str, str] = field(default_factory=dict)
    """Corpora left out of retrieval, each the same text as the named one measured."""
    sets: dict[str, Typeset] = field(default_factory=dict)
    extracted: Extracted = field(default_factory=dict)
    scanned: Typeset | None = None

    @property
    def n(self) -> int:
        """Needles (one per question)."""
        return int(self.survival["n"].iloc[0])

    def kept(self, layout: str, reader: str, removed: bool = False) -> int:
        """Needles ``reader`` keeps on ``layout`` (with running lines removed: ``removed``)."""
        table = self.survival_removed if removed else self.survival
        return int(table.set_index(["layout", "reader"]).loc[(layout, reader), "needles kept"])


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


def measure(lab: Lab, folder: str | os.PathLike, ocr: tuple[str | None, str]) -> Results:
    """Every measure of notebook 11 over ``lab``'s corpus, the PDFs written under ``folder``;
    ``ocr`` is :func:`tesseract`'s answer (no OCR when its version is None). Retrieval runs
    over each layout's best and worst reader, then the running-header worst with running
    lines removed and the row-drawn two columns as ``rag-lab index`` reads them by default
    (:data:`DRAWING_ORDER`), so that each mitigation has both its corpora."""
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
    embed_all(lab, measured)
    systems = retrieval_systems(lab, measured)
    scanned = scan_all(sets[SCAN_LAYOUT], folder)
    run = ocr_run(scanned, needles) if ocr[0] is not None else None
    return Results(
        survival=survival,
        survival_removed=survival_table(
            docs, sets, extracted, needles, remove_running=True, layouts=["running-header"]
        ),
        tests=layout_tests(docs, extracted, needles),
        rows=rows_table(docs, extracted),
        waste=waste_table(docs, sets, extracted),
        needles_in_tables=needles_in_tables(docs, needles),
        destroyed=destroyed_table(lab, measured),
        systems=systems,
        loss=loss_table(systems, lab.queries),
        queries=lab.queries,
        text_layer=text_layer_table(extract_all({scanned.layout: scanned}, LIBRARY_READERS)),
        run=run,
        thresholds=ocr_threshold_table(run) if run is not None else None,
        refusals=app_refusals(scanned),
        picks=picks,
        same_text=same,
        sets=sets,
        extracted=extracted,
        scanned=scanned,
    )


def mitigations(results: Results, drawing_order: str = DRAWING_ORDER) -> pd.DataFrame:
    """One row per mitigation: where it is measured (the corpus without it, what is
    applied), needles kept without and with it of ``n``; per k, Recall@k without and with it
    and the sign test by question of with over without (a :class:`~rag_lab.stats.Paired`;
    None for OCR, whose retrieval is not measured: only a sample of pages is read). Removing
    running lines is measured on the running-header layout's worst reader, layout analysis
    (the best reader of the row-drawn two columns) against ``drawing_order``."""
    picks = best_and_worst(results.survival)
    rh, two = "running-header", "two-column-rows"
    worst, best = picks[rh][1], picks[two][0]
    rows = [
        {
            "mitigation": "remove running lines",
            "without it": f"{rh} · {worst}",
            "with it": "repeated edge lines removed",
            "kept without": results.kept(rh, worst),
            "kept with": results.kept(rh, worst, removed=True),
            "n": results.n,
            "corpora": (f"{rh} · {worst}", f"{rh} · {worst} · running lines removed"),
        },
        {
            "mitigation": "layout analysis",
            "without it": f"{two} · {drawing_order}",
            "with it": best,
            "kept without": results.kept(two, drawing_order),
            "kept with": results.kept(two, best),
            "n": results.n,
            "corpora": (f"{two} · {drawing_order}", f"{two} · {best}"),
        },
    ]
    if results.run is not None:
        needles, chars = results.run.needles, int(results.text_layer["characters"].max())
        rows.append(
            {
                "mitigation": "OCR (Tesseract)",
                "without it": f"scanned {SCAN_LAYOUT}, {SCAN_DPI} dpi",
                "with it": "pages holding needles",
                "kept without": 0 if chars == 0 else None,
                "kept with": int(needles["kept"].sum()),
                "n": len(needles),
                "corpora": None,
            }
        )
    ids = [q.question.id for q in results.queries]
    for row in rows:
        pair = row.pop("corpora")
        for k in KS:
            if pair is None:
                row |= {f"R@{k} without": None, f"R@{k} with": None, f"R@{k} test": None}
                continue
            b, a = (hits_at(results.systems[name], k) for name in pair)
            row |= {
                f"R@{k} without": float(b.mean()),
                f"R@{k} with": float(a.mean()),
                f"R@{k} test": cluster_paired(a, b, ids),
            }
    return pd.DataFrame(rows).set_index("mitigation")
