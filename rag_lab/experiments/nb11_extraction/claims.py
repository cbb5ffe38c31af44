"""The chapter's five statements about extraction, each judged against the run's records.

Each is a ledger :class:`~rag_lab.evaluation.ledger.Entry` whose verdict is decided from
the run's counts; the chapter gives
none of its own for these (it says the symptom shows up "three layers later", without a
number), so a claim's ``chapter`` is empty.
"""

from __future__ import annotations

import pandas as pd

from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.paired import Finding
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.experiments.nb11_extraction.extraction import APP_READER
from rag_lab.experiments.nb11_extraction.kept import losing
from rag_lab.experiments.nb11_extraction.results import Results
from rag_lab.experiments.nb11_extraction.retrieval import worse

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


def claims_table(entries: list[Entry]) -> pd.DataFrame:
    """The claims for reading: each statement, what was measured, the verdict in words."""
    return pd.DataFrame(
        {"measured": [e.here for e in entries], "verdict": [e.verdict.label for e in entries]},
        index=pd.Index([e.statement for e in entries], name="chapter"),
    )


_AT = {"notebook": "11", "benchmark": "d2l as PDFs"}


def _interleave(results: Results, layout: str) -> Entry:
    lost, readers = losing(results.tests, layout), len(results.tests.loc[layout])
    here = (
        f"{len(lost)} of {readers} readers lose needles against one column: {', '.join(lost)}"
        if lost
        else "no reader loses needles against one column"
    )
    return count_entry(
        **_AT,
        claim=f"interleave:{layout}",
        statement=f"two-column layouts interleave ({layout})",
        metric="readers that lose needles against one column (per-needle sign test, Holm)",
        holds=bool(lost),
        here=here,
        rule="reproduces when at least one reader loses needles significantly",
    )


def _word_soup(results: Results) -> Entry:
    rows = results.rows
    counts = zip(rows.index, rows["kept"], rows["rows"], strict=True)
    soup = rows[rows["kept"] < rows["rows"]]
    here = (
        f"{len(soup)} of {len(rows)} readers scatter rows; rows with cells in order: "
        + ", ".join(f"{r} {k}/{n}" for r, k, n in counts)
        + f"; needles inside tables: {results.needles_in_tables}"
    )
    return count_entry(
        **_AT,
        claim="word-soup",
        statement="tables become word soup",
        metric="readers that scatter a table row's cells",
        holds=not soup.empty,
        here=here,
        rule="reproduces when at least one reader scatters rows",
    )


def _running_headers(results: Results) -> Entry:
    lib = results.waste.drop(index=APP_READER, errors="ignore")
    carrying = lib["share of chunks"]
    here = (
        f"{carrying.min():.1%}–{carrying.max():.1%} of chunks carry one "
        f"(the chunks at a page's top or bottom); "
        f"{lib['share of embedded word-pieces'].max():.2%} of embedded word-pieces at most"
    )
    return count_entry(
        **_AT,
        claim="running-headers",
        statement="running headers repeat in every chunk",
        metric="share of chunks that carry a running line",
        holds=bool(carrying.min() == 1),
        here=here,
        rule="reproduces when every chunk of every reader carries one",
    )


def _scans(results: Results) -> Entry:
    run, layer = results.run, results.text_layer
    chars = int(layer["characters"].max())
    statement = "a scanned page has no text until OCR gives some, with a confidence"
    if run is None:
        return fixed_entry(
            **_AT,
            claim="scans",
            statement=statement,
            verdict=Verdict.NOT_MEASURED,
            reason="Tesseract is not installed here, so OCR could not run",
            metric="characters from the scans' text layer",
            here=f"{chars} characters from any of the {len(layer)} readers",
        )
    here = (
        f"{chars} characters from any of the {len(layer)} readers; OCR: mean page confidence "
        f"{run.pages['confidence'].mean():.1f}, needles {int(run.needles['kept'].sum())}/"
        f"{len(run.needles)} verbatim"
    )
    return count_entry(
        **_AT,
        claim="scans",
        statement=statement,
        metric="characters from the scans' text layer",
        holds=chars == 0,
        here=here,
        rule="reproduces when no reader gets a character from a scan",
    )


def _symptom(results: Results) -> Entry:
    loss = results.loss
    lower = worse(loss)
    same = sum(d is Finding.NONE for d in loss["difference"])
    here = (
        f"{len(lower)} of {len(loss)} comparisons worse than the clean Markdown "
        f"(by question, Holm): {', '.join(sorted(set(lower['a']))) or 'none'}; "
        f"{same} with no difference shown"
    )
    return count_entry(
        **_AT,
        claim="symptom",
        statement="the symptom shows up as bad retrieval, three layers later",
        metric="extracted corpora that retrieve worse than the Markdown (by question, Holm)",
        holds=not lower.empty,
        here=here,
        rule="reproduces when at least one extracted corpus retrieves significantly worse",
    )
