"""Notebook 11: where content dies. The chapter's statements about PDF extraction as ledger
entries (:func:`chapter_claims`), each judged on a count of the records of
:func:`rag_lab.evaluation.extraction.measure`, and what a :class:`~.present.Table` does not
show as it is: reader-by-layout grids, p-values (three decimals would read 0), one table per
k, a reader's text, and what OCR read in place of each needle it missed."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation.extraction_pdfs import APP_READER, canonical
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.paired import Finding, PairedTable
from rag_lab.experiments.present import Table
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf.typeset import table_rows
from rag_lab.text import flat

HEADLINE = ("interleave:two-column-rows", "word-soup", "running-headers", "scans", "symptom")
"""The claims the notebook opens with."""
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
    lib = r["waste"].drop(index=APP_READER)
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


def with_p(frame: pd.DataFrame) -> Table:
    """``frame`` with its ``p`` and ``p Holm`` to two significant digits."""
    return Table(
        frame.assign(**{c: frame[c].map("{:#.2g}".format) for c in ("p", "p Holm") if c in frame})
    )


def grid(survival: pd.DataFrame, column: str) -> Table:
    """One column of :func:`~rag_lab.evaluation.extraction.survival_table`: a row per reader,
    a column per layout."""
    frame = survival.set_index(["reader", "layout"])[column].unstack(sort=False)
    return Table(frame.rename_axis(columns=None))


def losses(survival: pd.DataFrame) -> Table:
    """The sign tests of the survival table where a needle differs."""
    differ = survival[survival["wins"] + survival["losses"] > 0].set_index("layout")
    return with_p(differ[["reader", "wins", "losses", "p", "p Holm", "finding"]])


def loss(family: PairedTable) -> list[Table]:
    """Each corpus (a) against the clean Markdown (b) by question, one table per k."""
    shown = family.view(columns=["a", "k", "a − b by question", "questions", "p Holm"])
    words = {Finding.B_BETTER: "worse", Finding.A_BETTER: "better"}
    shown["finding"] = [words.get(c.finding, "–") for c in family.comparisons]
    shown = shown.set_index("a").rename_axis("corpus (a)")
    return [Table(at.drop(columns="k"), caption=f"Recall@{k}") for k, at in shown.groupby("k")]


def misses(needles: pd.DataFrame, width: int = 88) -> str:
    """Each needle OCR did not keep verbatim above what Tesseract read in its place (aligned
    on their longest common block), from a little before their first difference."""
    shown = []
    for r in needles[~needles["kept"]].to_dict("records"):
        needle, text = flat(r["needle"]), flat(r["text"])
        match = difflib.SequenceMatcher(None, text, needle, autojunk=False)
        block = max(match.get_matching_blocks(), key=lambda b: b.size)
        read = text[max(0, block.a - block.b) :][: len(needle)]
        differ = (i for i, (a, b) in enumerate(zip(needle, read, strict=False)) if a != b)
        lo = max(0, next(differ, len(read)) - 20)
        marks = "kept" if r["kept, marks ignored"] else "lost"
        shown.append(
            f"{r['document']} (marks ignored: {marks})\n"
            f"  needle   {needle[lo : lo + width]}\n  OCR read {read[lo : lo + width]}"
        )
    return "\n".join(shown)


def excerpt(by_doc: Mapping[str, ex.PdfText], doc: str, lines: int = 6, start: str = "") -> str:
    """``lines`` non-blank lines of a document as a reader gave them, from the first line
    holding ``start`` (the top by default); each cut to 100 characters."""
    text = canonical(by_doc[doc].pages).split("\n")
    at = next(i for i, ln in enumerate(text) if start in ln)
    shown = [ln.rstrip() for ln in text[at:] if ln.strip()][:lines]
    return "\n".join(ln if len(ln) <= 100 else ln[:99] + "…" for ln in shown)


def table_of_rows(docs: Sequence[Document]) -> tuple[str, tuple[str, ...]]:
    """The first document with a table, and that table's first data row."""
    return next((d.id, rows[1]) for d in docs if len(rows := table_rows(d)) > 1)
