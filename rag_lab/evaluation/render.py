"""Records rendered for reading: the package's one :class:`Table`, and a Markdown pipe table.

A :class:`Table` renders as HTML in a notebook (a pandas ``Styler``: numbers right-aligned in
tabular figures, long text wrapped within its column) and as plain text (nbval compares it, a
terminal shows it); a notebook's table wider than a page is refused when it is made
(:class:`TooWide`). A report writes its caption, its note and :func:`markdown_table` of its frame.

>>> import pandas as pd
>>> strategy = pd.Index(["A"], name="strategy")
>>> t = Table(pd.DataFrame({"R@4": ["0.469 [0.309, 0.636]"]}, index=strategy))
>>> print(repr(t))
strategy                   R@4
A         0.469 [0.309, 0.636]
>>> t.width
30
"""

from __future__ import annotations

import hashlib
import html
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pandas as pd

from rag_lab.errors import BadInput

MAX_COLUMNS = 8
"""Columns of a table, its index included."""
MAX_WIDTH = 100
"""Characters of content across a table: each column as wide as its widest cell or header,
two spaces between columns, the index included. About what a laptop page holds."""

_NUMERIC = re.compile(r"^\s*[−+\-]?(\d(?!\d*-[^\d\s])|\.\d|\[)|^\s*[–-]\s*$")
"""A cell that reads as a number, an interval or a dash: right-aligned. A numbered name
(``03-linear-algebra``, ``05-autograd#char=848,1304``) is text."""


class TooWide(BadInput, ValueError):
    """A table wider than a page: it names each column's width so the fix is plain."""


@dataclass(frozen=True)
class Table:
    """A table for reading, in a notebook or in a report.

    ``frame`` holds the whole content (``table.frame`` gives it back unshortened); cells
    are shown as text, floats to three decimals. ``shorten`` caps a column (or ``"index"``)
    at that many characters: the plain text cuts it there with ``…``; the HTML wraps the
    whole text within that width. ``caption`` says what a row is and the units of any
    column that needs them; a report heads the table with it, then ``note`` (how to read
    it). A ``headline`` table is also printed on the terminal by ``rag-lab evaluate``.
    """

    frame: pd.DataFrame
    caption: str = ""
    shorten: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    note: str = ""
    headline: bool = False
    page: bool = True
    """Refused when made if wider than a page (:class:`TooWide`); a report's table is not
    (``page=False``): report.md and the terminal show its whole frame."""

    def __post_init__(self) -> None:
        if not self.page:
            return
        if isinstance(self.frame.columns, pd.MultiIndex):
            raise TypeError("a Table takes flat column labels: join the levels first")
        columns = len(self.frame.columns) + (0 if self._plain_index else 1)
        if columns > MAX_COLUMNS or self.width > MAX_WIDTH:
            widths = ", ".join(f"{name} {max(map(len, c))}" for name, c, _ in self._columns())
            raise TooWide(
                f"table {self.caption[:40]!r} is {columns} columns and {self.width} characters "
                f"wide (at most {MAX_COLUMNS} and {MAX_WIDTH}): {widths}. Split it or shorten "
                "a column."
            )

    @property
    def _plain_index(self) -> bool:
        return isinstance(self.frame.index, pd.RangeIndex) and self.frame.index.name is None

    def shown(self) -> pd.DataFrame:
        """The cells as shown: text, shortened where :attr:`shorten` says."""
        frame = self.frame.copy()
        for column in frame.columns:
            frame[column] = [_short(_text(v), self.shorten.get(str(column))) for v in frame[column]]
        if not self._plain_index:
            cut = self.shorten.get("index")
            frame.index = pd.Index(
                [_short(_text(v), cut) for v in frame.index], name=frame.index.name
            )
        return frame

    def _columns(self) -> list[tuple[str, list[str], bool]]:
        """Each column as shown, the index first unless plain: its name, its header and
        cells, and whether it reads as a number (right-aligned)."""
        shown = self.shown()
        columns = [
            (str(c), [str(c), *shown[c]], r)
            for c, r in zip(shown.columns, self._right(shown), strict=True)
        ]
        if not self._plain_index:
            name = str(shown.index.name or "")
            columns.insert(0, (name or "index", [name, *shown.index], False))
        return columns

    @property
    def width(self) -> int:
        """Characters of content: the columns' widths and two spaces between them."""
        widths = [max(map(len, cells)) for _, cells, _ in self._columns()]
        return sum(widths) + 2 * (len(widths) - 1)

    def __repr__(self) -> str:
        """The plain text: the caption, broken at spaces within :data:`MAX_WIDTH`
        characters, then the columns aligned two spaces apart, numbers and intervals
        right-aligned, exactly :attr:`width` characters wide."""
        columns = [(cells, max(map(len, cells)), r) for _, cells, r in self._columns()]
        lines = [
            "  ".join((c[i].rjust(w) if r else c[i].ljust(w)) for c, w, r in columns).rstrip()
            for i in range(len(columns[0][0]))
        ]
        return "\n".join([*wrapped(self.caption), *lines] if self.caption else lines)

    @staticmethod
    def _right(shown: pd.DataFrame) -> list[bool]:
        """Which columns read as numbers (right-aligned): every non-empty cell does."""
        return [
            len(shown) > 0 and all(_NUMERIC.match(v) for v in shown[c] if v) for c in shown.columns
        ]

    def _repr_html_(self) -> str:
        """The HTML: one header row (the index becomes the first column, in bold), numbers
        right-aligned in tabular figures; a column capped by :attr:`shorten` keeps its whole
        text, wrapped within that many characters (the plain text cuts it instead).
        The element ids derive from the caption and columns, so the HTML is the same on
        every run."""
        full, columns = self.frame, self._columns()
        headers = [html.escape(cells[0]) for _, cells, _ in columns]
        right = [r for _, _, r in columns]
        rows = [[html.escape(_text(v)) for v in row] for row in full.itertuples(index=False)]
        caps = [self.shorten.get(str(c)) for c in full.columns]
        if not self._plain_index:
            for row, label in zip(rows, full.index, strict=True):
                row.insert(0, f"<b>{html.escape(_text(label))}</b>")
            caps.insert(0, self.shorten.get("index"))
        cells = pd.DataFrame(rows, columns=pd.Index(range(len(headers))))
        styles = [
            {"selector": "", "props": "font-variant-numeric: tabular-nums; font-size: 0.92em"},
            {"selector": "caption", "props": "caption-side: top; text-align: left; color: #444"},
            {"selector": "th", "props": "text-align: left; font-weight: 600"},
            {"selector": "td", "props": "text-align: left"},
            *(
                {"selector": f"td.col{j}", "props": "text-align: right; white-space: nowrap"}
                for j, r in enumerate(right)
                if r
            ),
            *(
                {
                    "selector": f"td.col{j}",
                    "props": f"max-width: {cap}ch; white-space: normal; overflow-wrap: anywhere",
                }
                for j, cap in enumerate(caps)
                if cap is not None
            ),
        ]
        key = hashlib.sha1(f"{self.caption}|{headers}".encode()).hexdigest()[:8]
        styler = (
            cells.style.set_uuid(key)
            .set_table_styles(styles)
            .format(escape=None)
            .format_index(lambda j: headers[j], axis="columns", escape=None)
            .hide(axis="index")
        )
        styler.cell_ids = False
        if self.caption:
            styler = styler.set_caption(html.escape(self.caption))
        return styler.to_html()


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def wrapped(text: str, indent: str = "") -> list[str]:
    """``text`` broken at spaces into lines of at most :data:`MAX_WIDTH` characters (a word
    longer than a line stays whole); every word kept, in order."""
    return textwrap.wrap(
        text,
        MAX_WIDTH,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]


def _short(text: str, cap: int | None) -> str:
    if cap is None or len(text) <= cap:
        return text
    return text[: cap - 1].rstrip() + "…"


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
