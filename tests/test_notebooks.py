"""The committed notebooks: every figure shown where it is made, no machine paths, no residue.

These read the notebooks as committed (``make reproduce`` writes them); nbval re-executes
them separately, and ``test_cold_run.py`` runs one in an empty cache against the same rules.
"""

from __future__ import annotations

import json

import pytest
from notebook_outputs import code_cells, problems

from rag_lab import paths

NOTEBOOKS = sorted((paths.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_are_clean(path):
    assert problems(json.loads(path.read_text())) == []


def test_every_notebook_ends_with_a_computed_reading():
    for path in NOTEBOOKS:
        last = code_cells(json.loads(path.read_text()))[-1]
        assert "reading(" in "".join(last["source"]), path.stem


def test_the_rules_catch_what_they_are_for():
    cell = {
        "cell_type": "code",
        "source": ["plots.show(fig, 'x')"],
        "outputs": [
            {
                "name": "stderr",
                "output_type": "stream",
                "text": ["TqdmWarning: IProgress not found"],
            },
            {"name": "stdout", "output_type": "stream", "text": ["at /work/main/x.py\r 3it/s]"]},
        ],
    }
    found = problems({"cells": [cell], "metadata": {"papermill": {"input_path": "/tmp/a"}}})
    assert any("stderr" in p for p in found) and any("machine path" in p for p in found)
    assert any("'it/s]'" in p for p in found) and any("not shown" in p for p in found)
    assert any(p.startswith("metadata") for p in found)
