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
from rag_lab.sources.pdf import extract as ex

DRAWING_ORDER = "pdfium default"
"""The reader layout analysis is set against: ``rag-lab index``'s default, which reads in
the order the page was drawn."""
HEADLINE = ("interleave:two-column-rows", "word-soup", "running-headers", "scans", "symptom")
"""The claims the notebook opens with."""


def measure(lab: Lab, folder: str) -> dict:
    """Every record of notebook 11, the PDFs written under ``folder``: retrieval over each
    layout's best and worst reader and both corpora of each mitigation; OCR (``ocr…``) only
    when Tesseract runs here (``tesseract``: its version, else None)."""
    docs, needles, folder = lab.docs, pdfs.needles_by_doc(lab.queries), Path(folder)
    sets = pdfs.typeset_all(docs, needles, folder)
    r = {"sets": sets, "extracted": (extracted := pdfs.extract_all(sets))}
    r["survival"] = m.survival_table(docs, sets, extracted, needles)
    r["layouts"], r["rows"] = m.layout_table(sets), m.rows_table(docs, extracted)
    r["needles_in_tables"] = m.needles_in_tables(docs, needles)
    r["waste"], r["removal"] = m.running_tables(docs, sets, extracted, needles)
    picks = m.best_and_worst(r["survival"])
    rw, cb = picks["running-header"][1], picks["two-column-rows"][0]
    wanted = [(layout, reader, False) for layout, pair in picks.items() for reader in pair]
    wanted += [("running-header", rw, True), ("two-column-rows", DRAWING_ORDER, False)]
    measured, same = m.corpora(lab, extracted, wanted)
    systems, ids = m.retrieval_systems(lab, measured), [q.question.id for q in lab.queries]
    r["same_text"] = pd.DataFrame({"the same text as": same}).rename_axis("left out")
    r["destroyed"] = m.destroyed_table(lab, measured, systems)
    r["loss"] = paired_table(systems, [(n, m.CLEAN) for n in systems if n != m.CLEAN], m.KS, ids)
    rh, rows = f"running-header · {rw}", f"two-column-rows · {cb}"
    pairs = {"remove running lines": (rh, f"{rh} · lines removed")}
    pairs["layout analysis"] = (f"two-column-rows · {DRAWING_ORDER}", rows)
    r["mitigations"] = m.mitigations(systems, pairs, ids)
    r["scanned"] = scanned = pdfs.scan_all(sets["one-column"], folder)
    r["text_layer"] = m.text_characters(pdfs.extract_all({"scans": scanned}, pdfs.LIBRARY_READERS))
    r["refusals"] = m.app_refusals(scanned)
    try:
        r["tesseract"] = ex.tesseract_version()
    except ex.OcrUnavailable:
        return r | {"tesseract": None}
    r["ocr_pages"], r["ocr_needles"] = pages, read = m.ocr_run(scanned, needles)
    return r | {
        "ocr": m.ocr_tables(scanned, pages, read),
        "thresholds": m.ocr_threshold_table(pages, read),
    }


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
    counts = ", ".join(f"{i} {k}/{n}" for i, (k, n) in rows[["kept", "rows"]].iterrows())
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
        verdict = Verdict.NOT_MEASURED
        out.append(fixed_entry("scans", **_AT, verdict=verdict, reason=reason, here=here))
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
