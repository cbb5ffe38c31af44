"""What each mitigation recovers: the same measures with it and without it, as a display
table worded from the run's records (:class:`~.results.Results`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.experiments.nb11_extraction.kept import best_and_worst
from rag_lab.experiments.nb11_extraction.pdfs import SCAN_DPI, SCAN_LAYOUT
from rag_lab.experiments.nb11_extraction.results import Results
from rag_lab.experiments.nb11_extraction.retrieval import KS
from rag_lab.metrics import Ranks, hits_at, recall_at
from rag_lab.stats import cluster_paired

_RETRIEVAL = "retrieval, by question (p unadjusted)"


def mitigation_table(results: Results, drawing_order: str = "pdfium default") -> pd.DataFrame:
    """What each mitigation recovers, measured with it and without it: removing running lines
    on the running-header layout's worst reader; layout analysis (the best reader of the
    row-drawn two columns) set against ``drawing_order`` (the reader of ``rag-lab index`` by
    default), whose corpus must be among the systems; OCR of the scans."""
    picks = best_and_worst(results.survival)
    ids = [q.question.id for q in results.queries]
    rows = [
        _removal_row(results, picks["running-header"][1], ids),
        _layout_row(results, picks["two-column-rows"][0], drawing_order, ids),
    ]
    if results.run is not None:
        rows.append(_ocr_row(results))
    return pd.DataFrame(rows).set_index("mitigation")


def _removal_row(results: Results, reader: str, ids: Sequence[str]) -> dict:
    """Removal by repetition on ``reader`` (a library: its running lines are in the text)."""
    rh, n, waste = "running-header", results.n, results.waste
    carrying = int(waste.loc[reader, "carrying running lines"])
    left = int(waste.loc[reader, "left after removal"])
    a, b = f"{rh} · {reader} · running lines removed", f"{rh} · {reader}"
    return {
        "mitigation": "remove running lines by repetition",
        "where": f"{rh}, {reader}",
        "without": f"needles {results.kept(rh, reader)}/{n}; {carrying} chunks carry running lines",
        "with": f"needles {results.kept(rh, reader, removed=True)}/{n}; {left} running lines left",
        _RETRIEVAL: _paired_line(results.systems, a, b, ids),
    }


def _layout_row(results: Results, best: str, worst: str, ids: Sequence[str]) -> dict:
    two, n = "two-column-rows", results.n
    return {
        "mitigation": f"layout analysis ({best})",
        "where": f"{two}, against {worst}",
        "without": f"needles {results.kept(two, worst)}/{n}",
        "with": f"needles {results.kept(two, best)}/{n}",
        _RETRIEVAL: _paired_line(results.systems, f"{two} · {best}", f"{two} · {worst}", ids),
    }


def _ocr_row(results: Results) -> dict:
    needles = results.run.needles
    n = len(needles)
    chars = int(results.text_layer["characters"].max())
    return {
        "mitigation": "OCR (Tesseract), pages holding needles",
        "where": f"scanned {SCAN_LAYOUT}, {SCAN_DPI} dpi",
        "without": f"{chars} characters from any reader: needles 0/{n}",
        "with": f"needles {int(needles['kept'].sum())}/{n} verbatim, "
        f"{int(needles['kept, marks ignored'].sum())}/{n} with marks ignored",
        _RETRIEVAL: "not measured: only a sample of pages is read",
    }


def _paired_line(systems: Mapping[str, Ranks], a: str, b: str, ids: Sequence[str]) -> str:
    """``R@4 b → a (+w/−l, p); R@20 …``: a against b by question, the p of each test
    unadjusted (the mitigation table says so)."""
    parts = []
    for k in KS:
        r = cluster_paired(hits_at(systems[a], k), hits_at(systems[b], k), ids)
        parts.append(f"R@{k} {recall_at(systems[b], k):.3f} → {recall_at(systems[a], k):.3f} ({r})")
    return "; ".join(parts)
