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
