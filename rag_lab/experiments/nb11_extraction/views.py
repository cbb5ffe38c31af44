"""The records of notebook 11 that a :class:`~rag_lab.experiments.present.Table` does not show
as they are: reader-by-layout grids, p-values (three decimals would read 0), one table per k,
and what OCR read in place of each needle it missed."""

from __future__ import annotations

import difflib

import pandas as pd

from rag_lab.evaluation.paired import Finding, PairedTable
from rag_lab.experiments.present import Table
from rag_lab.text import flat


def with_p(frame: pd.DataFrame) -> Table:
    """``frame`` with its ``p`` and ``p Holm`` to two significant digits."""
    return Table(
        frame.assign(**{c: frame[c].map("{:#.2g}".format) for c in ("p", "p Holm") if c in frame})
    )


def grid(survival: pd.DataFrame, column: str) -> Table:
    """One column of :func:`~.measures.survival_table`: a row per reader, a column per layout."""
    frame = survival.set_index(["reader", "layout"])[column].unstack(sort=False)
    return Table(frame.rename_axis(columns=None))


def losses(survival: pd.DataFrame) -> Table:
    """The sign tests of :func:`~.measures.survival_table` where a needle differs."""
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
