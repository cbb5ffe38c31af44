"""What survives extraction: needles found verbatim, 8-word runs kept in order, and each
layout against one column, reader by reader, by an exact sign test per needle.

A needle survives when it is found in its document's extracted text, whitespace normalised
(:func:`~rag_lab.experiments.nb11_extraction.text.flat`). Reading in the wrong order
(columns interleaved, table cells scattered) breaks runs of consecutive words, which
:func:`runs_kept` counts.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.documents import Document
from rag_lab.experiments.nb11_extraction.extraction import READERS, Extracted
from rag_lab.experiments.nb11_extraction.pdfs import Typeset
from rag_lab.experiments.nb11_extraction.rows import rows_kept
from rag_lab.experiments.nb11_extraction.text import canonical, extracted_docs, flat
from rag_lab.sources.pdf import typeset as ts
from rag_lab.stats import ALPHA, Paired, holm, paired, wilson

_BASE = "one-column"
"""The layout every other is tested against."""
_RUN = 8
"""Words per run for the reading-order measure."""


def survival(needles: Mapping[str, Sequence[str]], texts: Mapping[str, str], fold=flat) -> int:
    """How many needles are found, normalised by ``fold``, in their document's text."""
    return int(kept_vector(needles, texts, fold).sum())


def kept_vector(
    needles: Mapping[str, Sequence[str]], texts: Mapping[str, str], fold=flat
) -> np.ndarray:
    """Per needle (documents in order, needles in question order): found in the text?"""
    return np.array(
        [fold(n) in fold(texts.get(doc, "")) for doc, ns in needles.items() for n in ns],
        dtype=bool,
    )


def _runs(text: str, n: int = _RUN) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def runs_kept(placed: Mapping[str, ts.Placement], texts: Mapping[str, str]) -> float:
    """The share of the drawn body's 8-word runs found in the extracted text: words that
    come out in another order (columns interleaved, table cells scattered) break runs."""
    kept = total = 0
    for doc, p in placed.items():
        want = _runs(" ".join(p.body))
        have = _runs(texts.get(doc, ""))
        kept += len(want & have)
        total += len(want)
    return kept / total if total else math.nan


def survival_table(
    docs: Sequence[Document],
    sets: Mapping[str, Typeset],
    extracted: Extracted,
    needles: Mapping[str, Sequence[str]],
    remove_running: bool = False,
    layouts: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per layout and reader: needles kept of ``n`` (Wilson 95 %: ``lo``, ``hi``), 8-word runs
    kept, table rows kept (a share; NaN but on the tables layout), characters; with
    ``remove_running``, of the text after running lines are removed by repetition."""
    n = sum(len(v) for v in needles.values())
    rows = []
    for (layout, reader), by_doc in extracted.items():
        if layouts is not None and layout not in layouts:
            continue
        texts = {d.id: d.text for d in extracted_docs(docs, by_doc, remove_running)}
        k = survival(needles, texts)
        lo, hi = wilson(k, n)
        kept_rows, all_rows = rows_kept(docs, texts) if layout == "tables" else (0, 0)
        rows.append(
            {
                "layout": layout,
                "reader": reader,
                "needles kept": k,
                "n": n,
                "share": k / n,
                "lo": lo,
                "hi": hi,
                "8-word runs kept": runs_kept(sets[layout].placed, texts),
                "table rows kept": kept_rows / all_rows if all_rows else math.nan,
                "characters": sum(len(t) for t in texts.values()),
            }
        )
    return pd.DataFrame(rows)


def best_and_worst(table: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Per layout, the reader keeping the most needles and the one keeping the fewest;
    ties are broken by 8-word runs kept, then by the order of :data:`READERS`."""
    out = {}
    columns = ["needles kept", "8-word runs kept", "pos"]
    for layout, rows in table.groupby("layout", sort=False):
        key = rows.assign(pos=[READERS.index(r) for r in rows["reader"]])
        ranked = key.sort_values(columns, ascending=[False, False, True])
        worst = key.sort_values(columns, ascending=[True, True, True])
        out[layout] = (ranked["reader"].iloc[0], worst["reader"].iloc[0])
    return out


def page_cuts(
    sets: Mapping[str, Typeset],
    extracted: Extracted,
    needles: Mapping[str, Sequence[str]],
    layout: str = "running-header",
) -> tuple[int, int]:
    """Over every reader of ``layout``: (needles lost that a page break cuts, needles lost)."""
    cut = lost = 0
    for (lay, _), by_doc in extracted.items():
        if lay != layout:
            continue
        for doc, ns in needles.items():
            text = flat(canonical(by_doc[doc].pages))
            for n in ns:
                if flat(n) not in text:
                    lost += 1
                    cut += len(sets[layout].placed[doc].needles[n]) > 1
    return cut, lost


# --- each layout against one column ----------------------------------------------------------


class NeedleFinding(enum.Enum):
    """What one layout's sign test against one column shows, for one reader."""

    LOSES = "loses needles"
    """Significantly more needles lost here than kept here, after Holm."""
    GAINS = "gains needles"
    """Significantly more kept here, after Holm."""
    NO_LOSS = "no loss shown"

    @property
    def label(self) -> str:
        return self.value


def layout_tests(
    docs: Sequence[Document],
    extracted: Extracted,
    needles: Mapping[str, Sequence[str]],
    base: str = _BASE,
) -> pd.DataFrame:
    """Each reader on each layout against the same reader on ``base``: the needles one keeps
    and the other loses (``wins``, ``losses``), an exact sign test on them (``p``; each needle
    is one question, so these are independent), Holm over the table (``p Holm``), and the
    :class:`NeedleFinding` that adjusted test supports."""

    def vector(layout: str, reader: str) -> np.ndarray:
        corpus = extracted_docs(docs, extracted[layout, reader])
        return kept_vector(needles, {d.id: d.text for d in corpus})

    rows = []
    for layout in dict.fromkeys(layout for layout, _ in extracted):
        if layout == base:
            continue
        for reader in READERS:
            if (layout, reader) in extracted:
                r = paired(vector(layout, reader), vector(base, reader))
                rows.append({"layout": layout, "reader": reader, **_counts(r)})
    table = pd.DataFrame(rows, columns=["layout", "reader", "wins", "losses", "ties", "p"])
    table["p Holm"] = holm(table["p"].tolist())
    table["finding"] = [
        _finding(Paired(w, lo, 0), p)
        for w, lo, p in zip(table["wins"], table["losses"], table["p Holm"], strict=True)
    ]
    return table.set_index(["layout", "reader"])


def _counts(r: Paired) -> dict:
    return {"wins": r.wins, "losses": r.losses, "ties": r.ties, "p": r.p}


def _finding(r: Paired, p_holm: float) -> NeedleFinding:
    if p_holm >= ALPHA:
        return NeedleFinding.NO_LOSS
    return NeedleFinding.LOSES if r.losses > r.wins else NeedleFinding.GAINS


def losing(tests: pd.DataFrame, layout: str) -> list[str]:
    """The readers whose :func:`layout_tests` row for ``layout`` says they lose needles."""
    t = tests.loc[layout]
    return [r for r, f in zip(t.index, t["finding"], strict=True) if f is NeedleFinding.LOSES]
