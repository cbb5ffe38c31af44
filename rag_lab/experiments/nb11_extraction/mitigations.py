"""What each mitigation recovers: the same measures with it and without it, as two tables
worded from the run's records (:class:`~.results.Results`): the needles kept, then
retrieval by question."""

from __future__ import annotations

import pandas as pd

from rag_lab.experiments.nb11_extraction.kept import best_and_worst
from rag_lab.experiments.nb11_extraction.pdfs import SCAN_DPI, SCAN_LAYOUT
from rag_lab.experiments.nb11_extraction.results import Results
from rag_lab.experiments.nb11_extraction.retrieval import KS
from rag_lab.experiments.present import Table
from rag_lab.metrics import hits_at, recall_at
from rag_lab.stats import cluster_paired

DRAWING_ORDER = "pdfium default"
"""The reader layout analysis is set against: the one ``rag-lab index`` uses by default,
which reads in the order the page was drawn."""
_REMOVAL, _LAYOUT, _OCR = "remove running lines", "layout analysis", "OCR (Tesseract)"


def mitigations(results: Results, drawing_order: str = DRAWING_ORDER) -> pd.DataFrame:
    """One row per mitigation, numbers and names: where it is measured (the corpus without
    it, what is applied), needles kept without and with it, and the names of the two
    retrieval corpora it is set between (``a`` with it, ``b`` without; None for OCR, whose
    retrieval is not measured: only a sample of pages is read). Removing running lines is
    measured on the running-header layout's worst reader, layout analysis (the best reader of
    the row-drawn two columns) against ``drawing_order``, whose corpus must be among the
    systems."""
    picks = best_and_worst(results.survival)
    rh, two, n = "running-header", "two-column-rows", results.n
    worst, best = picks[rh][1], picks[two][0]
    rows = [
        {
            "mitigation": _REMOVAL,
            "without it": f"{rh} · {worst}",
            "with it": "repeated edge lines removed",
            "kept without": results.kept(rh, worst),
            "kept with": results.kept(rh, worst, removed=True),
            "n": n,
            "a": f"{rh} · {worst} · running lines removed",
            "b": f"{rh} · {worst}",
        },
        {
            "mitigation": _LAYOUT,
            "without it": f"{two} · {drawing_order}",
            "with it": best,
            "kept without": results.kept(two, drawing_order),
            "kept with": results.kept(two, best),
            "n": n,
            "a": f"{two} · {best}",
            "b": f"{two} · {drawing_order}",
        },
    ]
    if results.run is not None:
        needles = results.run.needles
        rows.append(
            {
                "mitigation": _OCR,
                "without it": f"scanned {SCAN_LAYOUT}, {SCAN_DPI} dpi",
                "with it": "pages holding needles",
                "kept without": 0 if int(results.text_layer["characters"].max()) == 0 else None,
                "kept with": int(needles["kept"].sum()),
                "n": len(needles),
                "a": None,
                "b": None,
            }
        )
    return pd.DataFrame(rows).set_index("mitigation")


def mitigation_tables(results: Results) -> tuple[Table, Table]:
    """:func:`mitigations` for reading: where each is measured and the needles it recovers;
    then retrieval without and with it, by question (each test's p unadjusted)."""
    table = mitigations(results)
    kept = Table(
        pd.DataFrame(
            {
                "without it": table["without it"],
                "with it": table["with it"],
                "needles kept": [
                    f"{'?' if pd.isna(w) else int(w)}/{n} → {int(k)}/{n}"
                    for w, k, n in zip(
                        table["kept without"], table["kept with"], table["n"], strict=True
                    )
                ],
            },
            index=table.index,
        ),
        caption="Each mitigation, measured without it and with it: needles found verbatim"
        + _ocr_note(results),
    )
    ids = [q.question.id for q in results.queries]
    rows = {}
    for name, r in table.iterrows():
        row = {}
        for k in KS:
            if pd.isna(r["a"]):
                row |= {f"R@{k}": "–", f"R@{k} by question": "not measured"}
                continue
            a, b = results.systems[r["a"]], results.systems[r["b"]]
            test = cluster_paired(hits_at(a, k), hits_at(b, k), ids)
            row |= {
                f"R@{k}": f"{recall_at(b, k):.3f} → {recall_at(a, k):.3f}",
                f"R@{k} by question": str(test),
            }
        rows[name] = row
    retrieval = Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("mitigation"),
        caption="Dense retrieval (strategy E) without → with it; by question: wins/losses of "
        "with over without, exact sign test, each p unadjusted",
    )
    return kept, retrieval


def _ocr_note(results: Results) -> str:
    if results.run is None:
        return ""
    needles = results.run.needles
    return (
        f"; OCR keeps {int(needles['kept, marks ignored'].sum())}/{len(needles)} with quotes, "
        "backticks and asterisks ignored, and its retrieval is not measured (a sample of "
        "pages is read)"
    )
