"""The chapter's five statements about extraction (declared in ``chapter.yaml``), each a
ledger :class:`~rag_lab.evaluation.ledger.Entry` judged on a count of the run's records.
"""

from __future__ import annotations

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.paired import Finding
from rag_lab.experiments.nb11_extraction.pdfs import APP_READER
from rag_lab.experiments.nb11_extraction.retrieval import worse
from rag_lab.experiments.nb11_extraction.run import Results
from rag_lab.experiments.nb11_extraction.survival import losing

HEADLINE = ("interleave:two-column-rows", "word-soup", "running-headers", "scans", "symptom")
"""The claims the notebook opens with: interleaving where it is real (the row-drawn page),
word soup, running headers, scans, and the symptom three layers later."""


def chapter_claims(results: Results) -> list[Entry]:
    """Interleaving (two layouts), word soup, running headers, scans, the symptom: this
    notebook's part of the ledger, each a count on the run's records."""
    return [
        *(_interleave(results, layout) for layout in ("two-column", "two-column-rows")),
        _word_soup(results),
        _running_headers(results),
        _scans(results),
        _symptom(results),
    ]


_AT = {"notebook": "11", "benchmark": "d2l as PDFs"}


def _interleave(results: Results, layout: str) -> Entry:
    lost, readers = losing(results.tests, layout), len(results.tests.loc[layout])
    here = (
        f"{len(lost)} of {readers} readers lose needles against one column: {', '.join(lost)}"
        if lost
        else "no reader loses needles against one column"
    )
    return count_entry(f"interleave:{layout}", **_AT, holds=bool(lost), here=here)


def _word_soup(results: Results) -> Entry:
    rows = results.rows
    counts = zip(rows.index, rows["kept"], rows["rows"], strict=True)
    soup = rows[rows["kept"] < rows["rows"]]
    here = (
        f"{len(soup)} of {len(rows)} readers scatter rows; rows with cells in order: "
        + ", ".join(f"{r} {k}/{n}" for r, k, n in counts)
        + f"; needles inside tables: {results.needles_in_tables}"
    )
    return count_entry("word-soup", **_AT, holds=not soup.empty, here=here)


def _running_headers(results: Results) -> Entry:
    lib = results.waste.drop(index=APP_READER, errors="ignore")
    carrying = lib["share of chunks"]
    here = (
        f"{carrying.min():.1%}–{carrying.max():.1%} of chunks carry one; "
        f"{lib['share of embedded word-pieces'].max():.2%} of embedded word-pieces at most"
    )
    return count_entry("running-headers", **_AT, holds=bool(carrying.min() == 1), here=here)


def _scans(results: Results) -> Entry:
    run, layer = results.run, results.text_layer
    chars = int(layer["characters"].max())
    if run is None:
        return fixed_entry(
            "scans",
            **_AT,
            verdict=Verdict.NOT_MEASURED,
            reason="Tesseract is not installed here, so OCR could not run",
            here=f"{chars} characters from any of the {len(layer)} readers",
        )
    here = (
        f"{chars} characters from any of the {len(layer)} readers; OCR: mean page confidence "
        f"{run.pages['confidence'].mean():.1f}, needles {int(run.needles['kept'].sum())}/"
        f"{len(run.needles)} verbatim"
    )
    return count_entry("scans", **_AT, holds=chars == 0, here=here)


def _symptom(results: Results) -> Entry:
    loss = results.loss
    lower = worse(loss)
    same = sum(d is Finding.NONE for d in loss["difference"])
    here = (
        f"{len(lower)} of {len(loss)} comparisons worse than the clean Markdown "
        f"(by question, Holm): {', '.join(sorted(set(lower['a']))) or 'none'}; "
        f"{same} with no difference shown"
    )
    return count_entry("symptom", **_AT, holds=not lower.empty, here=here)
