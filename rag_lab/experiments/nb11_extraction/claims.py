"""The chapter's five statements about extraction, each judged against the run's records.

Each is a :class:`~rag_lab.evaluation.verdicts.Claim` whose
:class:`~rag_lab.evaluation.verdicts.Verdict` is decided from numbers; the chapter gives
none of its own for these (it says the symptom shows up "three layers later", without a
number), so a claim's ``chapter`` is empty.
"""

from __future__ import annotations

import pandas as pd

from rag_lab.evaluation.paired import Finding
from rag_lab.evaluation.verdicts import Claim, Verdict
from rag_lab.experiments.nb11_extraction.extraction import APP_READER
from rag_lab.experiments.nb11_extraction.kept import losing
from rag_lab.experiments.nb11_extraction.results import Results
from rag_lab.experiments.nb11_extraction.retrieval import worse


def chapter_claims(results: Results) -> list[Claim]:
    """Interleaving (two layouts), word soup, running headers, scans, the symptom."""
    return [
        *(_interleave(results, layout) for layout in ("two-column", "two-column-rows")),
        _word_soup(results),
        _running_headers(results),
        _scans(results),
        _symptom(results),
    ]


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    """The claims for reading: each statement, what was measured, the verdict in words."""
    return pd.DataFrame(
        {"measured": [c.here for c in claims], "verdict": [c.verdict_text for c in claims]},
        index=pd.Index([c.statement for c in claims], name="chapter"),
    )


def _interleave(results: Results, layout: str) -> Claim:
    lost, readers = losing(results.tests, layout), len(results.tests.loc[layout])
    here = (
        f"needles lost against one column by {', '.join(lost)}"
        if lost
        else "no reader loses needles against one column"
    )
    statement = f"two-column layouts interleave ({layout})"
    if not lost:
        return Claim(statement, "", here, Verdict.NOT_REPRODUCED)
    if len(lost) == readers:
        return Claim(statement, "", here, Verdict.REPRODUCES)
    return Claim(
        statement, "", here, Verdict.IN_PART, detail=f"for {len(lost)} of {readers} readers"
    )


def _word_soup(results: Results) -> Claim:
    rows = results.rows
    counts = zip(rows.index, rows["kept"], rows["rows"], strict=True)
    here = (
        "rows with cells in order: "
        + ", ".join(f"{r} {k}/{n}" for r, k, n in counts)
        + f"; needles inside tables: {results.needles_in_tables}"
    )
    soup = rows[rows["kept"] < rows["rows"]]
    statement = "tables become word soup"
    if soup.empty:
        return Claim(statement, "", here, Verdict.NOT_REPRODUCED)
    lo, hi = int(soup["kept"].min()), int(soup["kept"].max())
    keeping = f"keeping {lo if lo == hi else f'{lo}–{hi}'} of {int(soup['rows'].iloc[0])}"
    if len(soup) == len(rows):
        return Claim(statement, "", here, Verdict.REPRODUCES, detail=f"(every reader, {keeping})")
    wording = f"in part: {len(soup)} of {len(rows)} readers scatter rows ({keeping})"
    return Claim(statement, "", here, Verdict.IN_PART, wording=wording)


def _running_headers(results: Results) -> Claim:
    lib = results.waste.drop(index=APP_READER, errors="ignore")
    carrying = lib["share of chunks"]
    here = (
        f"{carrying.min():.1%}–{carrying.max():.1%} of chunks carry one "
        f"(the chunks at a page's top or bottom); "
        f"{lib['share of embedded word-pieces'].max():.2%} of embedded word-pieces at most"
    )
    statement = "running headers repeat in every chunk"
    if carrying.min() == 1:
        return Claim(statement, "", here, Verdict.REPRODUCES)
    return Claim(statement, "", here, Verdict.NOT_REPRODUCED, detail="as stated")


def _scans(results: Results) -> Claim:
    run, layer = results.run, results.text_layer
    chars = int(layer["characters"].max())
    ocr = (
        "OCR not run"
        if run is None
        else f"OCR: mean page confidence {run.pages['confidence'].mean():.1f}, "
        f"needles {int(run.needles['kept'].sum())}/{len(run.needles)} verbatim"
    )
    here = f"{chars} characters from any of the {len(layer)} readers; {ocr}"
    verdict = (
        Verdict.NOT_MEASURED
        if run is None
        else Verdict.REPRODUCES
        if chars == 0
        else Verdict.NOT_REPRODUCED
    )
    return Claim(
        "a scanned page has no text until OCR gives some, with a confidence", "", here, verdict
    )


def _symptom(results: Results) -> Claim:
    loss = results.loss
    lower = worse(loss)
    same = sum(d is Finding.NONE for d in loss["difference"])
    here = (
        f"{len(lower)} of {len(loss)} comparisons worse than the clean Markdown "
        f"(by question, Holm): {', '.join(sorted(set(lower['a']))) or 'none'}; "
        f"{same} with no difference shown"
    )
    statement = "the symptom shows up as bad retrieval, three layers later"
    if lower.empty:
        return Claim(statement, "", here, Verdict.NOT_REPRODUCED)
    if len(lower) == len(loss):
        return Claim(statement, "", here, Verdict.REPRODUCES)
    detail = "where extraction loses most needles (the same loss, seen again); not shown elsewhere"
    return Claim(statement, "", here, Verdict.IN_PART, detail=detail)
