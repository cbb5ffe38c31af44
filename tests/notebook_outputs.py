"""What a committed notebook's outputs must not hold, as a list of problems (empty: clean).

Shared by the checks on the committed notebooks (``test_notebooks.py``) and on a notebook run
cold in a fresh cache (``test_cold_run.py``), so both apply the same rules.
"""

from __future__ import annotations

import json
import re

MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:work|root|home|tmp|usr|opt|var)/[\w.~/-]+")
RESIDUE = ("IProgress not found", "it/s]", "\r", "TqdmWarning", "without encryption")


def code_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook["cells"] if c["cell_type"] == "code"]


def texts(cell: dict):
    for out in cell.get("outputs", []):
        if "text" in out:
            yield "".join(out["text"])
        for kind, value in out.get("data", {}).items():
            if kind.startswith("text/"):
                yield "".join(value)


def problems(notebook: dict) -> list[str]:
    """Every stderr output, machine path, progress residue and figure not shown inline."""
    found = []
    for i, cell in enumerate(code_cells(notebook)):
        source = "".join(cell["source"])
        where = f"code cell {i + 1} ({source.splitlines()[0][:60] if source else 'empty'})"
        for out in cell.get("outputs", []):
            if out.get("name") == "stderr":
                found.append(f"{where}: stderr: {''.join(out.get('text', ''))[:200]}")
        for text in texts(cell):
            if m := MACHINE_PATH.search(text):
                found.append(f"{where}: a machine path: {m[0]}")
            found += [f"{where}: residue {mark!r}" for mark in RESIDUE if mark in text]
        if "plots.show(" in source:
            kinds = {k for out in cell["outputs"] for k in out.get("data", {})}
            if "image/png" not in kinds:
                found.append(f"{where}: a figure made but not shown")
    if m := MACHINE_PATH.search(json.dumps(notebook["metadata"])):
        found.append(f"metadata: a machine path: {m[0]}")  # papermill records its paths
    return found


def checked_outputs(notebook: dict) -> list[str]:
    """The text output of each cell nbval compares (``# NBVAL_CHECK_OUTPUT``), in order.

    A cell's text is joined whole: the kernel splits printed text into stream chunks at
    points that depend on timing, so only the joined text is the cell's output.
    """
    return [
        "".join(texts(c))
        for c in code_cells(notebook)
        if "# NBVAL_CHECK_OUTPUT" in "".join(c["source"])
    ]


# --- layout: what a reader sees ---------------------------------------------------------------

MAX_COLUMNS = 8
MAX_WIDTH = 100
"""As :mod:`rag_lab.experiments.present` sets them: a table's columns (its index included)
and characters of content (each column as wide as its widest cell, two between columns)."""


_WRAPPED = re.compile(r"#(\w+) td\.col(\d+) \{[^}]*?max-width: (\d+)ch")
"""A column :class:`rag_lab.experiments.present.Table` wraps within that many characters."""


def _table_rows(markup: str) -> list[list[list[str]]]:
    """The tables of an HTML fragment, as rows of cell texts (tags dropped, hover text not);
    a cell of a column wrapped within ``max-width: Nch`` counts as its first N characters,
    the width it takes on the page."""
    from html.parser import HTMLParser

    caps: dict[str, dict[int, int]] = {}
    for table, column, cap in _WRAPPED.findall(markup):
        caps.setdefault(table, {})[int(column)] = int(cap)

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tables: list[list[list[str]]] = []
            self.cell: list[str] | None = None
            self.caps: list[dict[int, int]] = []

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.tables.append([])
                self.caps.append(caps.get(dict(attrs).get("id") or "", {}))
            elif tag == "tr" and self.tables:
                self.tables[-1].append([])
            elif tag in ("td", "th") and self.tables and self.tables[-1]:
                self.cell = []

        def handle_endtag(self, tag):
            if tag in ("td", "th") and self.cell is not None:
                text = " ".join("".join(self.cell).split())
                row = self.tables[-1][-1]
                cap = self.caps[-1].get(len(row)) if tag == "td" else None
                row.append(text[:cap] if cap else text)
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)

    parser = Cells()
    parser.feed(markup)
    return parser.tables


def _markdown_rows(text: str) -> list[list[list[str]]]:
    tables, current = [], None
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            cells = [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
            if all(set(c) <= set("-: ") for c in cells):
                continue  # the rule under the header
            if current is None:
                current = []
                tables.append(current)
            current.append(cells)
        else:
            current = None
    return tables


_WRAPPED_COLUMNS = re.compile(r"td\.col(\d+)\s*\{[^}]*max-width:\s*(\d+)ch")
"""A column :class:`~rag_lab.experiments.present.Table` wraps: its cells' class and width."""


def _wrapped(markup: str) -> dict[int, int]:
    """Column → characters, for the columns an HTML fragment's style block wraps (a page
    shows them at most that wide, however long their text)."""
    return {int(col): int(ch) for col, ch in _WRAPPED_COLUMNS.findall(markup)}


def _table_width(rows: list[list[str]], caps: dict[int, int] | None = None) -> tuple[int, int]:
    columns = max(len(r) for r in rows)
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(columns)]
    widths = [min(w, (caps or {}).get(i, w)) for i, w in enumerate(widths)]
    return columns, sum(widths) + 2 * (columns - 1)


def _html_tables(markup: str) -> list[tuple[list[list[str]], dict[int, int]]]:
    """Each table of an HTML fragment with its wrapped columns (a Styler table per fragment)."""
    caps = _wrapped(markup)
    return [(rows, caps) for rows in _table_rows(markup)]


def layout(notebook: dict) -> list[str]:
    """Every table over :data:`MAX_COLUMNS` columns or :data:`MAX_WIDTH` characters, and every
    line of plain text output over :data:`MAX_WIDTH` characters, as problems."""
    found = []
    for i, cell in enumerate(code_cells(notebook)):
        source = "".join(cell["source"])
        where = f"code cell {i + 1} ({source.splitlines()[0][:50] if source else 'empty'})"
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            tables = []
            if "text/html" in data:
                tables += _html_tables("".join(data["text/html"]))
            if "text/markdown" in data:
                tables += [(rows, {}) for rows in _markdown_rows("".join(data["text/markdown"]))]
            for rows, caps in tables:
                columns, width = _table_width(rows, caps)
                if columns > MAX_COLUMNS or width > MAX_WIDTH:
                    found.append(f"{where}: a table of {columns} columns, {width} characters")
            plain = []
            if "text" in out:
                plain.append("".join(out["text"]))
            if "text/plain" in data and not (
                {"text/html", "text/markdown", "image/png"} & set(data)
            ):
                plain.append("".join(data["text/plain"]))
            for text in plain:
                longest = max((len(line) for line in text.splitlines()), default=0)
                if longest > MAX_WIDTH:
                    found.append(f"{where}: a line of {longest} characters")
    return found


def widest_table(notebook: dict) -> tuple[int, int]:
    """The widest table's (characters, columns) among a notebook's outputs; (0, 0) if none."""
    best = (0, 0)
    for cell in code_cells(notebook):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            tables = _html_tables("".join(data.get("text/html", "")))
            tables += [
                (rows, {}) for rows in _markdown_rows("".join(data.get("text/markdown", "")))
            ]
            for rows, caps in tables:
                columns, width = _table_width(rows, caps)
                best = max(best, (width, columns))
    return best
