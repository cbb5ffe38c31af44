"""The whole run of notebook 11 in one call (:func:`measure`), what each mitigation changes in
retrieval (:func:`mitigations`), and the chapter's statements about extraction as ledger
entries (:func:`chapter_claims`), each judged on a count of the run's records."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.paired import Finding
from rag_lab.experiments.nb11_extraction import measures as m
from rag_lab.experiments.nb11_extraction import pdfs
from rag_lab.metrics import Ranks, hits_at
from rag_lab.questions import Query
from rag_lab.sources.pdf import extract as ex
from rag_lab.stats import cluster_paired

DRAWING_ORDER = "pdfium default"
"""The reader layout analysis is set against: ``rag-lab index``'s default, which reads in
the order the page was drawn."""
HEADLINE = ("interleave:two-column-rows", "word-soup", "running-headers", "scans", "symptom")
"""The claims the notebook opens with."""


@dataclass(frozen=True, eq=False)
class Results:
    """Every record notebook 11 measured, and the files and texts they come from."""

    survival: pd.DataFrame
    survival_removed: pd.DataFrame  # the running-header layout, running lines removed
    tests: pd.DataFrame
    rows: pd.DataFrame
    waste: pd.DataFrame
    needles_in_tables: int
    destroyed: pd.DataFrame
    systems: Mapping[str, Ranks]
    loss: pd.DataFrame
    queries: Sequence[Query]
    text_layer: pd.Series  # characters per reader of the scans
    refusals: pd.DataFrame | None = None
    run: m.OcrRun | None = None  # None when Tesseract is not installed
    thresholds: pd.DataFrame | None = None
    picks: dict[str, tuple[str, str]] = field(default_factory=dict)
    same_text: dict[str, str] = field(default_factory=dict)
    sets: dict[str, pdfs.Typeset] = field(default_factory=dict)
    extracted: pdfs.Extracted = field(default_factory=dict)
    scanned: pdfs.Typeset | None = None


def tesseract() -> tuple[str | None, str]:
    """(Tesseract's version, or None when it cannot run here; the reason it cannot)."""
    try:
        return ex.tesseract_version(), ""
    except ex.OcrUnavailable as err:
        return None, str(err)


def versions(ocr: tuple[str | None, str]) -> str:
    """The extractors' versions and Tesseract's (or why OCR cannot run)."""
    libraries = ", ".join(f"{k} {v}" for k, v in pdfs.library_versions().items())
    tess = f"OCR: tesseract {ocr[0]}" if ocr[0] is not None else f"OCR cannot run: {ocr[1]}"
    return f"extractors: {libraries}\n{tess}"


def measure(lab: Lab, folder: str | os.PathLike, ocr: tuple[str | None, str]) -> Results:
    """Every measure of notebook 11, the PDFs written under ``folder``: retrieval over each
    layout's best and worst reader and both corpora of each mitigation; no OCR when
    :func:`tesseract` gave no version."""
    docs, needles = lab.docs, pdfs.needles_by_doc(lab.queries)
    sets = pdfs.typeset_all(docs, needles, folder)
    extracted = pdfs.extract_all(sets)
    survival = m.survival_table(docs, sets, extracted, needles)
    picks = m.best_and_worst(survival)
    wanted = [(layout, r, False) for layout, pair in picks.items() for r in pair]
    wanted += [("running-header", picks["running-header"][1], True)]
    measured, same = m.corpora(lab, extracted, [*wanted, ("two-column-rows", DRAWING_ORDER, False)])
    systems = m.retrieval_systems(lab, measured)
    scanned = pdfs.scan_all(sets[pdfs.SCAN_LAYOUT], folder)
    run = m.ocr_run(scanned, needles) if ocr[0] is not None else None
    return Results(
        survival=survival,
        survival_removed=m.survival_table(docs, sets, extracted, needles, True, ["running-header"]),
        tests=m.layout_tests(docs, extracted, needles),
        rows=m.rows_table(docs, extracted),
        waste=m.waste_table(docs, sets, extracted),
        needles_in_tables=m.needles_in_tables(docs, needles),
        destroyed=m.destroyed_table(lab, measured),
        systems=systems,
        loss=m.loss_table(systems, lab.queries),
        queries=lab.queries,
        text_layer=m.text_characters(
            pdfs.extract_all({scanned.layout: scanned}, pdfs.LIBRARY_READERS)
        ),
        refusals=m.app_refusals(scanned),
        run=run,
        thresholds=m.ocr_threshold_table(run) if run is not None else None,
        picks=picks,
        same_text=same,
        sets=sets,
        extracted=extracted,
        scanned=scanned,
    )


def mitigations(results: Results) -> pd.DataFrame:
    """Per mitigation and k: Recall@k without and with it, and the sign test by question of
    with over without (none for OCR: only a sample of pages is read)."""
    picks = m.best_and_worst(results.survival)
    rh, rows = f"running-header · {picks['running-header'][1]}", "two-column-rows"
    rows = f"{rows} · {picks[rows][0]}"
    pairs = {
        "remove running lines": (rh, f"{rh} · running lines removed"),
        "layout analysis": (f"two-column-rows · {DRAWING_ORDER}", rows),
    }
    ids = [q.question.id for q in results.queries]
    rows = []
    for mitigation, (without, with_it) in pairs.items():
        for k in m.KS:
            b, a = (hits_at(results.systems[c], k) for c in (without, with_it))
            rows.append(
                [mitigation, k, float(b.mean()), float(a.mean()), cluster_paired(a, b, ids)]
            )
    if results.run is not None:
        rows += [["OCR (Tesseract)", k, None, None, None] for k in m.KS]
    columns = ["mitigation", "k", "without", "with", "test"]
    return pd.DataFrame(rows, columns=columns).set_index(["mitigation", "k"])


# --- the claims -------------------------------------------------------------------------------

_AT = {"notebook": "11", "benchmark": "d2l as PDFs"}


def chapter_claims(results: Results) -> list[Entry]:
    """Interleaving (two layouts), word soup, running headers, scans, the symptom."""
    return [
        *(_interleave(results, layout) for layout in ("two-column", "two-column-rows")),
        _word_soup(results),
        _running_headers(results),
        _scans(results),
        _symptom(results),
    ]


def _interleave(results: Results, layout: str) -> Entry:
    t = results.tests.loc[layout]
    lost = list(t.index[t["finding"] == "loses needles"])
    here = f"{len(lost)} of {len(t)} readers lose needles against one column: {', '.join(lost)}"
    if not lost:
        here = "no reader loses needles against one column"
    return count_entry(f"interleave:{layout}", **_AT, holds=bool(lost), here=here)


def _word_soup(results: Results) -> Entry:
    rows, in_tables = results.rows, results.needles_in_tables
    soup = (rows["kept"] < rows["rows"]).sum()
    counts = ", ".join(
        f"{r} {k}/{n}" for r, k, n in zip(rows.index, rows["kept"], rows["rows"], strict=True)
    )
    here = f"{soup} of {len(rows)} readers scatter rows; rows with cells in order: {counts}"
    return count_entry(
        "word-soup", **_AT, holds=bool(soup), here=f"{here}; needles inside tables: {in_tables}"
    )


def _running_headers(results: Results) -> Entry:
    lib = results.waste.drop(index=pdfs.APP_READER, errors="ignore")
    carrying, pieces = lib["share of chunks"], lib["share of embedded word-pieces"].max()
    here = (
        f"{carrying.min():.1%}–{carrying.max():.1%} of chunks carry one; "
        f"{pieces:.2%} of embedded word-pieces at most"
    )
    return count_entry("running-headers", **_AT, holds=bool(carrying.max() == 1), here=here)


def _scans(results: Results) -> Entry:
    run, chars = results.run, int(results.text_layer.max())
    here = f"{chars} characters from any of the {len(results.text_layer)} readers"
    if run is None:
        reason = "Tesseract is not installed here, so OCR could not run"
        return fixed_entry("scans", **_AT, verdict=Verdict.NOT_MEASURED, reason=reason, here=here)
    kept = run.needles["kept"]
    here += (
        f"; OCR: mean page confidence {run.pages['confidence'].mean():.1f}, "
        f"needles {int(kept.sum())}/{len(kept)} verbatim"
    )
    return count_entry("scans", **_AT, holds=chars == 0, here=here)


def _symptom(results: Results) -> Entry:
    loss = results.loss
    worse = sorted(set(loss["a"][loss["difference"] == Finding.B_BETTER]))
    shown = set(loss["a"][loss["difference"] != Finding.NONE])
    corpora = loss["a"].nunique()
    here = (
        f"{len(worse)} of {corpora} extracted corpora worse than the clean Markdown "
        f"at some k (by question, Holm): {', '.join(worse) or 'none'}; "
        f"{corpora - len(shown)} with no difference shown at any k"
    )
    return count_entry("symptom", **_AT, holds=bool(worse), here=here)
