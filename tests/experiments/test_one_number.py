"""One number, one place: every entry of the committed ledger (``figures/claims.json``)
reads the same in the notebook that measured it as the renderer makes it from the file, so
a notebook, the ledger and the README (checked in ``test_findings``) cannot disagree."""

from __future__ import annotations

import json

import pytest

from rag_lab import paths
from rag_lab.claims import render
from rag_lab.evaluation.ledger import Ledger

NOTEBOOKS = paths.ROOT / "notebooks"


def _markdown_outputs(notebook: str) -> str:
    (path,) = NOTEBOOKS.glob(f"{notebook}_*.ipynb")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join(
        "".join(out.get("data", {}).get("text/markdown", ""))
        for cell in cells
        if cell["cell_type"] == "code"
        for out in cell.get("outputs", [])
    )


def test_every_entry_reads_the_same_in_its_notebook_as_in_the_ledger():
    committed = paths.FIGURES / "claims.json"
    if not committed.is_file():
        pytest.fail("figures/claims.json is missing: make reproduce writes it")
    entries = Ledger.read(committed).entries
    shown = {nb: _markdown_outputs(nb) for nb in {e.notebook for e in entries}}
    missing = [
        f"{e.notebook}: {e.claim} ({e.benchmark})"
        for e in entries
        if render.entry_line(e) not in shown[e.notebook]
    ]
    assert not missing, f"{len(missing)} of {len(entries)} entries read otherwise: {missing[:5]}"
