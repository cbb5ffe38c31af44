"""The whole run of notebook 11 in one call (:func:`measure`), and the chapter's statements
about extraction as ledger entries (:func:`chapter_claims`), each judged on a count of the
run's records."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.paired import Finding, paired_table
from rag_lab.experiments.nb11_extraction import measures as m
from rag_lab.experiments.nb11_extraction import pdfs
from rag_lab.metrics import hits_at
from rag_lab.sources.pdf import extract as ex
from rag_lab.stats import cluster_paired

DRAWING_ORDER = "pdfium default"
"""The reader layout analysis is set against: ``rag-lab index``'s default, which reads in
the order the page was drawn."""
HEADLINE = ("interleave:two-column-rows", "word-soup", "running-headers", "scans", "symptom")
"""The claims the notebook opens with."""


def measure(lab: Lab, folder: str) -> dict:
    """Every record of notebook 11, the PDFs written under ``folder``: retrieval over each
    layout's best and worst reader and both corpora of each mitigation; OCR (the ``ocr …``
    records) only when Tesseract runs here (``tesseract``: its version, else None)."""
    docs, needles, folder = lab.docs, pdfs.needles_by_doc(lab.queries), Path(folder)
    sets = pdfs.typeset_all(docs, needles, folder)
    extracted = pdfs.extract_all(sets)
    survival = m.survival_table(docs, sets, extracted, needles)
    picks = m.best_and_worst(survival)
    rh, rows = (
        f"{lay} · {picks[lay][i]}" for lay, i in (("running-header", 1), ("two-column-rows", 0))
    )
    wanted = [(layout, r, False) for layout, pair in picks.items() for r in pair]
    wanted += [("running-header", picks["running-header"][1], True)]
    measured, same = m.corpora(lab, extracted, [*wanted, ("two-column-rows", DRAWING_ORDER, False)])
    systems, ids = m.retrieval_systems(lab, measured), [q.question.id for q in lab.queries]
    pairs = {
        "remove running lines": (rh, f"{rh} · lines removed"),
        "layout analysis": (f"two-column-rows · {DRAWING_ORDER}", rows),
    }
    hits = {(c, k): hits_at(systems[c], k) for pair in pairs.values() for c in pair for k in m.KS}
    scanned = pdfs.scan_all(sets["one-column"], folder)
    out = dict(
        sets=sets,
        extracted=extracted,
        layouts=m.layout_table(sets),
        survival=survival,
        rows=m.rows_table(docs, extracted),
        needles_in_tables=m.needles_in_tables(docs, needles),
        **dict(
            zip(("waste", "removal"), m.running_tables(docs, sets, extracted, needles), strict=True)
        ),
        same_text=pd.DataFrame({"the same text as": same}).rename_axis("left out"),
        destroyed=m.destroyed_table(lab, measured, systems),
        loss=paired_table(systems, [(n, m.CLEAN) for n in systems if n != m.CLEAN], m.KS, ids),
        mitigations=pd.DataFrame(
            [
                [
                    name,
                    k,
                    hits[b, k].mean(),
                    hits[a, k].mean(),
                    cluster_paired(hits[a, k], hits[b, k], ids),
                ]
                for name, (b, a) in pairs.items()
                for k in m.KS
            ],
            columns=["mitigation", "k", "without", "with", "with over without, by question"],
        ),
        text_layer=m.text_characters(pdfs.extract_all({"scans": scanned}, pdfs.LIBRARY_READERS)),
        refusals=m.app_refusals(scanned),
        scanned=scanned,
    )
    try:
        out["tesseract"] = ex.tesseract_version()
    except ex.OcrUnavailable:
        return out | {"tesseract": None}
    pages, read = m.ocr_run(scanned, needles)
    return out | dict(
        ocr_pages=pages,
        ocr_needles=read,
        ocr=m.ocr_tables(scanned, pages, read),
        thresholds=m.ocr_threshold_table(pages, read),
    )


_AT = {"notebook": "11", "benchmark": "d2l as PDFs"}


def chapter_claims(r: dict) -> list[Entry]:
    """Interleaving (two layouts), word soup, running headers, scans, the symptom."""
    out = []
    for layout in ("two-column", "two-column-rows"):
        t = r["survival"][r["survival"]["layout"] == layout]
        lost = list(t["reader"][t["finding"] == "loses needles"])
        here = f"{len(lost)} of {len(t)} readers lose needles against one column: {', '.join(lost)}"
        here = here if lost else "no reader loses needles against one column"
        out.append(count_entry(f"interleave:{layout}", **_AT, holds=bool(lost), here=here))
    rows = r["rows"]
    soup = (rows["kept"] < rows["rows"]).sum()
    counts = ", ".join(
        f"{i} {k}/{n}" for i, k, n in zip(rows.index, rows["kept"], rows["rows"], strict=True)
    )
    here = f"{soup} of {len(rows)} readers scatter rows; rows with cells in order: {counts}"
    here += f"; needles inside tables: {r['needles_in_tables']}"
    out.append(count_entry("word-soup", **_AT, holds=bool(soup), here=here))
    lib = r["waste"].drop(index=pdfs.APP_READER)
    carrying = lib["carrying one"] / lib["chunks"]
    pieces = (lib["word-pieces wasted"] / lib["word-pieces embedded"]).max()
    here = f"{carrying.min():.1%}–{carrying.max():.1%} of chunks carry one; "
    here += f"{pieces:.2%} of embedded word-pieces at most"
    out.append(count_entry("running-headers", **_AT, holds=bool(carrying.max() == 1), here=here))
    chars = int(r["text_layer"].max())
    here = f"{chars} characters from any of the {len(r['text_layer'])} readers"
    if r["tesseract"] is None:
        reason = "Tesseract is not installed here, so OCR could not run"
        out.append(
            fixed_entry("scans", **_AT, verdict=Verdict.NOT_MEASURED, reason=reason, here=here)
        )
    else:
        kept, conf = r["ocr_needles"]["kept"], r["ocr_pages"]["confidence"]
        here += f"; OCR: mean page confidence {conf.mean():.1f}, "
        here += f"needles {int(kept.sum())}/{len(kept)} verbatim"
        out.append(count_entry("scans", **_AT, holds=chars == 0, here=here))
    loss = r["loss"].frame()
    worse = sorted(set(loss["a"][loss["finding"] == Finding.B_BETTER]))
    corpora, shown = loss["a"].nunique(), loss["a"][loss["finding"] != Finding.NONE].nunique()
    here = f"{len(worse)} of {corpora} extracted corpora worse than the clean Markdown at some "
    here += f"k (by question, Holm): {', '.join(worse) or 'none'}; "
    here += f"{corpora - shown} with no difference shown at any k"
    return [*out, count_entry("symptom", **_AT, holds=bool(worse), here=here)]
