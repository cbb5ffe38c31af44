"""How a notebook shows its results: findings first, tables that fit a page, the environment last.

A :class:`Table` renders as HTML in a notebook (a pandas ``Styler``: numbers right-aligned
in tabular figures, long text wrapped within its column) and as plain text
wherever the notebook is read as text: nbval compares that text, and a terminal shows it.
A table of more than :data:`MAX_COLUMNS` columns or :data:`MAX_WIDTH` characters of content
is refused when it is made (:class:`TooWide`): split it in two, or draw it.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import pandas as pd

from rag_lab.claims import render
from rag_lab.errors import BadInput
from rag_lab.evaluation.ledger import Entry
from rag_lab.experiments import provenance, timing

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
    """A table for reading.

    ``frame`` holds the whole content (``table.frame`` gives it back unshortened); cells
    are shown as text, floats to three decimals. ``shorten`` caps a column (or ``"index"``)
    at that many characters: the plain text cuts it there with ``…``; the HTML wraps the
    whole text within that width. ``caption`` says what a row is and the units of any
    column that needs them.
    """

    frame: pd.DataFrame
    caption: str = ""
    shorten: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if isinstance(self.frame.columns, pd.MultiIndex):
            raise TypeError("a Table takes flat column labels: join the levels first")
        columns = len(self.frame.columns) + (0 if self._plain_index else 1)
        if columns > MAX_COLUMNS or self.width > MAX_WIDTH:
            widths = ", ".join(f"{name} {w}" for name, w in self._widths().items())
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

    def _widths(self) -> dict[str, int]:
        shown = self.shown()
        widths = {}
        if not self._plain_index:
            name = str(shown.index.name or "")
            widths[name or "index"] = max([len(name), *(len(v) for v in shown.index)])
        for column in shown.columns:
            widths[str(column)] = max([len(str(column)), *(len(v) for v in shown[column])])
        return widths

    @property
    def width(self) -> int:
        """Characters of content: the columns' widths and two spaces between them."""
        widths = list(self._widths().values())
        return sum(widths) + 2 * (len(widths) - 1)

    def __repr__(self) -> str:
        """The plain text: the caption, broken at spaces within :data:`MAX_WIDTH`
        characters, then the columns aligned two spaces apart, numbers and intervals
        right-aligned, exactly :attr:`width` characters wide."""
        shown = self.shown()
        columns = [[str(c), *shown[c]] for c in shown.columns]
        right = self._right(shown)
        if not self._plain_index:
            columns.insert(0, [str(shown.index.name or ""), *shown.index])
            right.insert(0, False)
        widths = [max(map(len, col)) for col in columns]
        lines = [
            "  ".join(
                (col[i].rjust(w) if r else col[i].ljust(w))
                for col, w, r in zip(columns, widths, right, strict=True)
            ).rstrip()
            for i in range(len(columns[0]))
        ]
        return "\n".join([*_wrapped(self.caption), *lines] if self.caption else lines)

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
        shown, full = self.shown(), self.frame
        right = self._right(shown)
        rows = [[html.escape(_text(v)) for v in row] for row in full.itertuples(index=False)]
        headers = [html.escape(str(c)) for c in shown.columns]
        caps = [self.shorten.get(str(c)) for c in shown.columns]
        if not self._plain_index:
            for row, label in zip(rows, full.index, strict=True):
                row.insert(0, f"<b>{html.escape(_text(label))}</b>")
            headers.insert(0, html.escape(str(shown.index.name or "")))
            right.insert(0, False)
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


def _wrapped(text: str, indent: str = "") -> list[str]:
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


# --- findings first, the environment last -----------------------------------------------------


class Findings:
    """A notebook's headline: the claims it names, each in one sentence with its number
    and the ledger's verdict. Shown as Markdown; its plain text is the same sentences."""

    def __init__(self, entries: Sequence[Entry], claims: Sequence[str]) -> None:
        picked = []
        for claim in claims:
            matching = [e for e in entries if e.claim == claim]
            if not matching:
                known = ", ".join(dict.fromkeys(e.claim for e in entries))
                raise KeyError(f"no ledger entry {claim!r} among this notebook's: {known}")
            picked += matching
        self.entries = picked

    def markdown(self) -> str:
        return "\n".join(render.finding_line(e) for e in self.entries)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        """The same sentences as plain text, each broken at spaces within :data:`MAX_WIDTH`
        (a continuation indented two spaces, as Markdown continues a bullet)."""
        return "\n".join(
            "\n".join(_wrapped(line, indent="  ")) for line in self.markdown().split("\n")
        )


def findings(entries: Sequence[Entry], claims: Sequence[str]) -> Findings:
    """The entries of ``claims`` (ids, in that order; every benchmark's entry of an id)."""
    return Findings(entries, claims)


def every_claim(entries: Sequence[Entry]) -> str:
    """Every claim of a notebook, one bullet each: the estimate and its interval, the counts,
    the p of the test its interval inverts (adjusted in a confirmatory family), the chapter's
    result and the verdict (:func:`rag_lab.claims.render.entry_line`)."""
    return "\n".join(render.entry_line(e) for e in entries)


def environment(with_model: bool = True) -> str:
    """What ran, for the closing section: versions, the model's fingerprint, the machine."""
    return f"{provenance.describe(with_model)}\n{timing.machine()}"


# --- text shown exactly as it is --------------------------------------------------------------


@dataclass(frozen=True)
class Verbatim:
    """A text shown exactly as it is (a prompt as the generator receives it) that still fits
    a page: the HTML is a ``<pre>`` the browser wraps (``white-space: pre-wrap``), so no
    character is added or removed; the plain text breaks each line longer than ``width``
    at a space, ``↪`` starting each continuation (the marks are the display's, not the
    text's). ``text`` gives the text back unchanged.

    >>> v = Verbatim("a " * 30 + "end", width=40)
    >>> print(repr(v))
    a a a a a a a a a a a a a a a a a a a a
    ↪ a a a a a a a a a a end
    """

    text: str
    caption: str = ""
    width: int = MAX_WIDTH

    def lines(self) -> list[str]:
        """The plain text's lines, each at most :attr:`width` characters."""
        out = []
        for line in self.text.split("\n"):
            head = ""
            while len(head + line) > self.width:
                room = self.width - len(head)
                cut = line.rfind(" ", 1, room + 1)
                cut = room if cut <= 0 else cut
                out.append((head + line[:cut]).rstrip())
                line, head = line[cut:].lstrip(" "), "↪ "
            out.append(head + line)
        return out

    def __repr__(self) -> str:
        return "\n".join([self.caption, *self.lines()] if self.caption else self.lines())

    def _repr_html_(self) -> str:
        from rag_lab.evaluation.plots import NEUTRAL

        caption = f"<p>{html.escape(self.caption)}</p>" if self.caption else ""
        style = (
            "white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; padding: 0.6em; "
            "font-family: var(--jp-code-font-family, monospace); font-size: 0.85em; "
            f"background: {NEUTRAL['paper']}; border-left: 3px solid {NEUTRAL['faint']}"
        )
        # The class tells the page check (rag_lab.experiments.pages) this text wraps on purpose.
        pre = f'<pre class="{VERBATIM_CLASS}" style="{style}">'
        return f"{caption}{pre}{html.escape(self.text)}</pre>"


VERBATIM_CLASS = "rag-lab-verbatim"
"""The HTML class of a :class:`Verbatim` view: a text the page wraps by design, so that the
page check does not count its long lines as a text a reader scrolls sideways."""
