"""The committed notebooks: every figure shown where it is made, no machine paths, no residue.

These read the notebooks as committed (``make reproduce`` writes them); nbval re-executes
them separately.
"""

from __future__ import annotations

import json
import re

import pytest

from rag_lab import paths

NOTEBOOKS = sorted((paths.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:work|root|home|tmp|usr|opt|var)/[\w.~/-]+")
RESIDUE = ("IProgress not found", "it/s]", "\r")


def _code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def _texts(cell):
    for out in cell.get("outputs", []):
        if "text" in out:
            yield "".join(out["text"])
        for kind, value in out.get("data", {}).items():
            if kind.startswith("text/"):
                yield "".join(value)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_is_shown_in_its_cell(path):
    for cell in _code_cells(path):
        if "plots.show(" in "".join(cell["source"]):
            kinds = {k for out in cell["outputs"] for k in out.get("data", {})}
            assert "image/png" in kinds, "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_nothing_is_written_to_stderr(path):
    for cell in _code_cells(path):
        for out in cell.get("outputs", []):
            assert out.get("name") != "stderr", "".join(out.get("text", ""))[:200]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_carry_no_machine_paths_and_no_progress_residue(path):
    for cell in _code_cells(path):
        for text in _texts(cell):
            assert not MACHINE_PATH.search(text), MACHINE_PATH.search(text)[0]
            for mark in RESIDUE:
                assert mark not in text, (mark, text[:200])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_metadata_carries_no_machine_paths(path):
    # papermill records the paths it was given; `make reproduce` gives relative ones.
    metadata = json.dumps(json.loads(path.read_text())["metadata"])
    assert not MACHINE_PATH.search(metadata), MACHINE_PATH.search(metadata)[0]


def test_every_notebook_ends_with_a_computed_reading():
    for path in NOTEBOOKS:
        last = _code_cells(path)[-1]
        assert "reading(" in "".join(last["source"]), path.stem
