"""The committed notebooks: every figure shown where it is made, no machine paths, no residue.

These read the notebooks as committed (``make reproduce`` writes them); nbval re-executes
them separately, and ``test_cold_run.py`` runs one in an empty cache against the same rules.
"""

from __future__ import annotations

import json

import pytest
from notebook_outputs import code_cells, layout, problems

from rag_lab import paths

NOTEBOOKS = sorted((paths.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_are_clean(path):
    assert problems(json.loads(path.read_text())) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_tables_and_lines_fit_a_page(path):
    assert layout(json.loads(path.read_text())) == []


def _headings(notebook: dict) -> list[str]:
    return [
        line
        for c in notebook["cells"]
        if c["cell_type"] == "markdown"
        for line in "".join(c["source"]).splitlines()
        if line.startswith("## ")
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_findings_first_environment_last(path):
    """A notebook opens with its title and what it shows, then its findings, computed from
    the ledger; it closes with its reading (every claim rendered) and then what ran."""
    notebook = json.loads(path.read_text())
    assert "".join(notebook["cells"][0]["source"]).startswith(f"# {path.stem[:2]} · ")
    headings = _headings(notebook)
    assert headings[0] == "## Findings" and headings[-2:] == ["## Reading", "## Environment"]
    cells = code_cells(notebook)
    at = next(i for i, c in enumerate(notebook["cells"]) if "## Findings" in "".join(c["source"]))
    findings = next(c for c in notebook["cells"][at:] if c["cell_type"] == "code")
    assert "# NBVAL_CHECK_OUTPUT" in "".join(findings["source"]), "findings are checked"
    assert any(  # computed lines (Markdown), or a computed table (notebook 12's counts)
        {"text/markdown", "text/html"} & set(out.get("data", {})) for out in findings["outputs"]
    )
    at = next(i for i, c in enumerate(notebook["cells"]) if "## Reading" in "".join(c["source"]))
    reading = [c for c in notebook["cells"][at:] if c["cell_type"] == "code"][:-1]
    assert reading and all(
        any(out.get("data", {}).get("text/markdown") for out in c["outputs"]) for c in reading
    ), "the reading is computed Markdown"
    assert "present.environment(" in "".join(cells[-1]["source"])
    earlier = "".join("".join(c["source"]) for c in cells[:-1])
    assert "provenance" not in earlier, "versions belong in the closing Environment section"


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


def test_the_layout_rules_catch_what_they_are_for():
    wide = "<table><tr>" + "<th>x</th>" * 9 + "</tr></table>"
    long_cells = "<table><tr><td>" + "a" * 60 + "</td><td>" + "b" * 50 + "</td></tr></table>"
    markdown = "| a | b |\n|---|---|\n| " + "c" * 99 + " | d |"
    cell = {
        "cell_type": "code",
        "source": ["t"],
        "outputs": [
            {"output_type": "display_data", "data": {"text/html": [wide]}},
            {"output_type": "display_data", "data": {"text/html": [long_cells]}},
            {"output_type": "display_data", "data": {"text/markdown": [markdown]}},
            {"name": "stdout", "output_type": "stream", "text": ["x" * 101 + "\n" + "y" * 100]},
        ],
    }
    found = layout({"cells": [cell]})
    assert [f.split(": ", 1)[1] for f in found] == [
        "a table of 9 columns, 25 characters",
        "a table of 2 columns, 112 characters",
        "a table of 2 columns, 102 characters",
        "a line of 101 characters",
    ]
    fits = {
        "output_type": "display_data",
        "data": {"text/html": ["<table><tr><td>ok</td></tr></table>"]},
    }
    assert layout({"cells": [{**cell, "outputs": [fits]}]}) == []


def test_a_wrapped_column_counts_at_the_width_it_is_wrapped_to():
    """A Table's capped column keeps its whole text in the HTML, wrapped within its cap: the
    page holds the cap, not the text (the same text uncapped is refused)."""
    import pandas as pd

    from rag_lab.experiments.present import Table

    frame = pd.DataFrame({"n": [1], "text": ["word " * 40]}, index=pd.Index(["q1"], name="q"))
    html = Table(frame, shorten={"text": 30})._repr_html_()
    assert "word " * 39 in html  # the whole text is there
    out = {"output_type": "display_data", "data": {"text/html": [html]}}
    assert layout({"cells": [{"cell_type": "code", "source": ["t"], "outputs": [out]}]}) == []
    bare = html.replace("max-width: 30ch", "max-width: none")
    out = {"output_type": "display_data", "data": {"text/html": [bare]}}
    found = layout({"cells": [{"cell_type": "code", "source": ["t"], "outputs": [out]}]})
    assert found == ["code cell 1 (t): a table of 3 columns, 206 characters"]
