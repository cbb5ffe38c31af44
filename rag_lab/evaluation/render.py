"""Records rendered for reading: a Markdown pipe table from any table of a record."""

from __future__ import annotations

import numpy as np
import pandas as pd


def markdown_table(table: pd.DataFrame) -> str:
    """A padded pipe table (numbers right-aligned); a plain 0..n-1 index is left out."""
    plain = isinstance(table.index, pd.RangeIndex)
    if plain:
        frame = table
    elif isinstance(table.index, pd.MultiIndex):
        frame = table.reset_index()
    else:
        frame = table.rename_axis(table.index.name or "").reset_index()
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    rows = [[str(c) for c in frame.columns]]
    rows += [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max(3, *(len(r[i]) for r in rows)) for i in range(len(numeric))]

    def line(cells: list[str]) -> str:
        padded = [
            c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = ["-" * (w - 1) + ":" if n else "-" * w for w, n in zip(widths, numeric, strict=True)]
    return "\n".join([line(rows[0]), line(rule), *map(line, rows[1:])])


def _cell(value: object) -> str:
    """A table cell as text: empty for a missing value, ``|`` escaped."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value).replace("|", "\\|")
