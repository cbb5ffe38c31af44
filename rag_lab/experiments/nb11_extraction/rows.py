"""The tables layout: table rows whose cells come out in order, and needles inside tables.

A row is kept when its cells come out one after the other as one run of words (line breaks
between cells allowed), whitespace normalised; the rows are those the ``tables`` layout draws
(:func:`rag_lab.sources.pdf.typeset.table_rows`, header rows included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.documents import Document
from rag_lab.experiments.nb11_extraction.extraction import Extracted
from rag_lab.experiments.nb11_extraction.text import canonical, clipped, flat
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.stats import wilson


def rows_kept(docs: Sequence[Document], texts: Mapping[str, str]) -> tuple[int, int]:
    """Table rows whose cells come out in order, as one run of words: (kept, rows)."""
    kept = total = 0
    for doc in docs:
        text = flat(texts.get(doc.id, ""))
        for cells in ts.table_rows(doc):
            total += 1
            kept += flat(" ".join(c for c in cells if c)) in text
    return kept, total


def rows_table(docs: Sequence[Document], extracted: Extracted, layout: str = "tables"):
    """Per reader of ``layout``: the table rows kept (:func:`rows_kept`), of how many, and
    the Wilson 95 % interval of the share (``kept``, ``rows``, ``lo``, ``hi``)."""
    rows = []
    for (lay, reader), by_doc in extracted.items():
        if lay != layout:
            continue
        kept, total = rows_kept(docs, {d: canonical(t.pages) for d, t in by_doc.items()})
        lo, hi = wilson(kept, total)
        rows.append({"reader": reader, "kept": kept, "rows": total, "lo": lo, "hi": hi})
    return pd.DataFrame(rows, columns=["reader", "kept", "rows", "lo", "hi"]).set_index("reader")


def table_count(docs: Sequence[Document]) -> str:
    """How many tables and rows the corpus has (header rows included), for the table's note."""
    found = [t for doc in docs for t in ts.tables(doc)]
    rows = sum(len(t) for t in found)
    return f"{rows} rows in {len(found)} tables, header rows included"


def table_of_rows(docs: Sequence[Document]) -> tuple[str, tuple[str, ...]]:
    """The first document with a table, and that table's first data row."""
    for doc in docs:
        rows = ts.table_rows(doc)
        if len(rows) > 1:
            return doc.id, rows[1]
    raise ValueError("no document has a table")


def table_excerpt(
    by_doc: Mapping[str, ex.PdfText], doc: str, cells: Sequence[str], lines: int = 4
) -> str:
    """The extracted lines from the one holding the row's first cell on: how a reader gives
    a table row (its cells on one line, or scattered)."""
    text = canonical(by_doc[doc].pages).split("\n")
    at = next((i for i, ln in enumerate(text) if cells[0] in ln), None)
    if at is None:
        return f"(the cell {cells[0]!r} is not in the text)"
    return clipped([ln for ln in text[at:] if ln.strip()][:lines])


def needles_in_tables(docs: Sequence[Document], needles: Mapping[str, Sequence[str]]) -> int:
    """Needles that lie inside a Markdown table line of their document
    (:func:`rag_lab.sources.pdf.typeset.table_lines`)."""
    by_id = {d.id: d for d in docs}
    count = 0
    for doc, ns in needles.items():
        lines = ts.table_lines(by_id[doc])
        count += sum(1 for n in ns if any(n in line for line in lines))
    return count
