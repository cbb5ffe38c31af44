"""What survives extraction, against the ground truth: needles found verbatim, 8-word runs
kept in order, table rows kept, each layout against one column by an exact sign test per
needle; and the running lines, the chunks that carry them and what removal takes.

A needle survives when it is found in its document's extracted text, whitespace normalised.
Reading in the wrong order (columns interleaved, table cells scattered) breaks runs of
consecutive words. The running lines are known from the ground truth: on the
``running-header`` layout, a page's first drawn line (the title) and its last (``Page N``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.experiments.nb11_extraction.pdfs import (
    READERS,
    STRATEGY,
    Extracted,
    Typeset,
    canonical,
    extracted_docs,
    flat,
    is_app,
)
from rag_lab.models.minilm import count_word_pieces
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.stats import ALPHA, holm, paired, wilson

BASE = "one-column"
"""The layout every other is tested against."""
_RUN = 8
"""Words per run for the reading-order measure."""
_WINDOW = 256
"""The encoder's window in word-pieces: past it, text is never embedded."""


def kept_vector(
    needles: Mapping[str, Sequence[str]], texts: Mapping[str, str], fold=flat
) -> np.ndarray:
    """Per needle (documents in order, needles in question order): found in the text?"""
    return np.array(
        [fold(n) in fold(texts.get(doc, "")) for doc, ns in needles.items() for n in ns],
        dtype=bool,
    )


def _runs(text: str) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + _RUN]) for i in range(len(words) - _RUN + 1)}


def runs_kept(placed: Mapping[str, ts.Placement], texts: Mapping[str, str]) -> float:
    """The share of the drawn body's 8-word runs found in the extracted text."""
    kept = total = 0
    for doc, p in placed.items():
        want = _runs(" ".join(p.body))
        kept += len(want & _runs(texts.get(doc, "")))
        total += len(want)
    return kept / total if total else math.nan


def rows_kept(docs: Sequence[Document], texts: Mapping[str, str]) -> tuple[int, int]:
    """Table rows (header rows included) whose cells come out in order as one run of words,
    whitespace normalised: (kept, rows)."""
    kept = total = 0
    for doc in docs:
        text = flat(texts.get(doc.id, ""))
        for cells in ts.table_rows(doc):
            total += 1
            kept += flat(" ".join(c for c in cells if c)) in text
    return kept, total


def survival_table(
    docs: Sequence[Document],
    sets: Mapping[str, Typeset],
    extracted: Extracted,
    needles: Mapping[str, Sequence[str]],
    remove_running: bool = False,
    layouts: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per layout and reader: needles kept of ``n`` (Wilson 95 %: ``lo``, ``hi``), the lost
    ones a page break cuts, 8-word runs kept, table rows kept (a share; NaN but on the
    tables layout), characters; with ``remove_running``, of the text after running lines are
    removed by repetition."""
    n = sum(len(v) for v in needles.values())
    rows = []
    for (layout, reader), by_doc in extracted.items():
        if layouts is not None and layout not in layouts:
            continue
        texts = {d.id: d.text for d in extracted_docs(docs, by_doc, remove_running)}
        kept = kept_vector(needles, texts)
        spans = [sets[layout].placed[d].needles[x] for d, xs in needles.items() for x in xs]
        cut = sum(len(p) > 1 for p, x in zip(spans, kept, strict=True) if not x)
        k = int(kept.sum())
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
                "lost, cut by a page break": cut,
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
        best = key.sort_values(columns, ascending=[False, False, True])["reader"].iloc[0]
        out[layout] = (best, key.sort_values(columns)["reader"].iloc[0])
    return out


def rows_table(docs: Sequence[Document], extracted: Extracted, layout: str = "tables"):
    """Per reader of ``layout``: the table rows kept (:func:`rows_kept`) of ``rows``, with the
    Wilson 95 % interval of the share (``lo``, ``hi``), and the ``tables`` they are in."""
    tables = sum(len(ts.tables(doc)) for doc in docs)
    rows = []
    for (lay, reader), by_doc in extracted.items():
        if lay == layout:
            kept, total = rows_kept(docs, {d: canonical(t.pages) for d, t in by_doc.items()})
            lo, hi = wilson(kept, total)
            rows.append([reader, kept, total, lo, hi, tables])
    columns = ["reader", "kept", "rows", "lo", "hi", "tables"]
    return pd.DataFrame(rows, columns=columns).set_index("reader")


def table_of_rows(docs: Sequence[Document]) -> tuple[str, tuple[str, ...]]:
    """The first document with a table, and that table's first data row."""
    for doc in docs:
        rows = ts.table_rows(doc)
        if len(rows) > 1:
            return doc.id, rows[1]
    raise ValueError("no document has a table")


def needles_in_tables(docs: Sequence[Document], needles: Mapping[str, Sequence[str]]) -> int:
    """Needles that lie inside a Markdown table line of their document."""
    by_id = {d.id: d for d in docs}
    return sum(
        any(n in line for line in ts.table_lines(by_id[doc]))
        for doc, ns in needles.items()
        for n in ns
    )


# --- each layout against one column -----------------------------------------------------------


class NeedleFinding(enum.Enum):
    """What one layout's sign test against one column shows for one reader, after Holm."""

    LOSES = "loses needles"
    GAINS = "gains needles"
    NO_LOSS = "no loss shown"


def layout_tests(
    docs: Sequence[Document],
    extracted: Extracted,
    needles: Mapping[str, Sequence[str]],
    base: str = BASE,
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
        for reader in READERS:
            if layout != base and (layout, reader) in extracted:
                r = paired(vector(layout, reader), vector(base, reader))
                rows.append([layout, reader, r.wins, r.losses, r.ties, r.p])
    table = pd.DataFrame(rows, columns=["layout", "reader", "wins", "losses", "ties", "p"])
    table["p Holm"] = holm(table["p"].tolist())
    table["finding"] = [
        NeedleFinding.NO_LOSS
        if p >= ALPHA
        else (NeedleFinding.LOSES if lost > won else NeedleFinding.GAINS)
        for won, lost, p in zip(table["wins"], table["losses"], table["p Holm"], strict=True)
    ]
    return table.set_index(["layout", "reader"])


def losing(tests: pd.DataFrame, layout: str) -> list[str]:
    """The readers whose :func:`layout_tests` row for ``layout`` says they lose needles."""
    t = tests.loc[layout]
    return [r for r, f in zip(t.index, t["finding"], strict=True) if f is NeedleFinding.LOSES]


# --- running headers and footers --------------------------------------------------------------


def running_spans(placed: ts.Placement, text: str) -> list[tuple[int, int]]:
    """Where the running lines still in ``text`` (:func:`canonical`) are: a page's first
    drawn line and its last, found as whole lines of the page's extracted text (whitespace
    normalised), the top one first from the top, the bottom one first from the bottom. A
    line drawn twice on a page (the first page's heading is the title too) counts as present
    only if the page still has it as often as it was drawn."""
    spans = []
    at = 0
    for drawn, page in zip(placed.pages, text.split(ex.PAGE_BREAK), strict=True):
        drawn_lines = drawn.split("\n")
        lines, offsets, pos = page.split("\n"), [], at
        for line in lines:
            offsets.append(pos)
            pos += len(line) + 1
        normalised = [flat(ln) for ln in lines]
        for target, from_top in ((drawn_lines[0], True), (drawn_lines[-1], False)):
            found = [i for i, ln in enumerate(normalised) if ln == flat(target)]
            if found and len(found) >= drawn_lines.count(target):
                i = found[0] if from_top else found[-1]
                spans.append((offsets[i], offsets[i] + len(lines[i])))
        at += len(page) + len(ex.PAGE_BREAK)
    return spans


def waste_row(chunks: Sequence[Chunk], spans: Mapping[str, Sequence[tuple[int, int]]]) -> dict:
    """Chunks whose content overlaps a running line, and the embedded word-pieces those lines
    take: for each such chunk, its word-pieces up to the encoder's window less those of its
    text without the running lines, up to the window too (a line past the window is never
    embedded, so it wastes nothing)."""
    texts, without = [], []
    for c in chunks:
        inside = [(s, e) for s, e in spans.get(c.doc_id, ()) if s < c.end and c.start < e]
        if inside:
            text = c.text
            for s, e in inside:  # each line once, as it appears in the content
                text = text.replace(c.content[max(s - c.start, 0) : e - c.start], "", 1)
            texts.append(c.text)
            without.append(text)
    embedded = np.minimum(count_word_pieces([c.text for c in chunks]), _WINDOW).sum()
    pieces = 0
    if texts:
        full = np.minimum(count_word_pieces(texts), _WINDOW)
        pieces = int((full - np.minimum(count_word_pieces(without), _WINDOW)).sum())
    return {
        "chunks": len(chunks),
        "carrying running lines": len(texts),
        "share of chunks": len(texts) / len(chunks),
        "word-pieces wasted": pieces,
        "share of embedded word-pieces": float(pieces / embedded),
    }


def removal_check(
    placed: Mapping[str, ts.Placement], by_doc: Mapping[str, ex.PdfText]
) -> dict[str, int]:
    """What removal by repetition took, against the ground truth: running lines removed,
    running lines left, body lines removed by mistake."""
    right = missed = wrong = 0
    for doc, p in placed.items():
        _, removed = ex.remove_repeated_lines([canonical([t]) for t in by_doc[doc].pages])
        by_page: dict[int, list[str]] = {}
        for number, line in removed:
            by_page.setdefault(number, []).append(flat(line))
        for number, drawn in enumerate(p.pages, start=1):
            lines = drawn.split("\n")
            got = by_page.get(number, [])
            hit = [r for r in (lines[0], lines[-1]) if flat(r) in got]
            right += len(hit)
            missed += 2 - len(hit)
            wrong += len(got) - len(hit)
    return {
        "running lines removed": right,
        "running lines left": missed,
        "body lines removed": wrong,
    }


def waste_table(
    docs: Sequence[Document],
    sets: Mapping[str, Typeset],
    extracted: Extracted,
    layout: str = "running-header",
) -> pd.DataFrame:
    """Per reader, on the text as it gives it: the running lines in it, strategy E's chunks
    that carry one and the word-pieces those lines take (:func:`waste_row`); then, after
    removal by repetition, the running lines left and the body lines removed with them
    (:func:`removal_check`; ``rag-lab index`` has removed them itself, so its row has NaN)."""
    rows = []
    placed = sets[layout].placed
    for (lay, reader), by_doc in extracted.items():
        if lay != layout:
            continue
        corpus = extracted_docs(docs, by_doc)
        spans = {d.id: running_spans(placed[d.id], d.text) for d in corpus}
        row = {
            "reader": reader,
            "running lines in the text": sum(len(v) for v in spans.values()),
            **waste_row(chunk_corpus(corpus, STRATEGY), spans),
            "left after removal": math.nan,
            "body lines removed": math.nan,
        }
        if not is_app(by_doc):
            removed = extracted_docs(docs, by_doc, remove_running=True)
            row["left after removal"] = sum(
                len(running_spans(placed[d.id], d.text)) for d in removed
            )
            row["body lines removed"] = removal_check(placed, by_doc)["body lines removed"]
        rows.append(row)
    return pd.DataFrame(rows).set_index("reader")
