"""The lab's ledger: parts gathered, shown side by side, counted, drawn, and the README's
summary generated from the committed file (so it cannot drift from it)."""

from __future__ import annotations

import pytest

from rag_lab import paths
from rag_lab.evaluation.ledger import Direction, Ledger, PairedClaim, count_entry, paired_entries
from rag_lab.experiments import findings


def ledger_of_two_benchmarks() -> Ledger:
    clusters = [f"q{i}" for i in range(12) for _ in range(2)]
    ranks = {"a": [1] * 24, "b": [1] * 8 + [None] * 16}
    claim = [PairedClaim("a>b", "a beats b", "a", "b", 1, Direction.BETTER, (10, 3, "0.09"))]
    ledger = Ledger()
    for bench in ("d2l", "chroma"):
        ledger.extend(paired_entries("03", bench, claim, ranks, clusters))
    ledger.extend([
        count_entry(notebook="02", benchmark="d2l", claim="A-destroys", statement="cuts destroy",
                    metric="m", holds=True, here="8 of 32", chapter="4 of 32"),
    ])  # fmt: skip
    return ledger


def test_parts_are_gathered_in_notebook_order(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.FIGURES_ENV, str(tmp_path))
    ledger = ledger_of_two_benchmarks()
    findings.save_part("10", ledger.entries[1:2])
    findings.save_part("03", ledger.entries[:1])
    gathered = findings.gather()
    assert [(e.notebook, e.benchmark) for e in gathered.entries] == [
        ("03", "d2l"),
        ("03", "chroma"),
    ]


def test_side_by_side_tally_and_forest():
    ledger = ledger_of_two_benchmarks()
    table = findings.side_by_side(ledger)
    assert list(table.index) == ["a>b", "A-destroys"]
    assert table.loc["a>b", "d2l: verdict"] == table.loc["a>b", "chroma: verdict"] == "reproduces"
    assert table.loc["A-destroys", "chroma: verdict"] == "–"  # not claimed there
    assert findings.tally(ledger).loc["reproduces"].to_dict() == {"chroma": 1, "d2l": 2}
    fig = findings.forest_figure(ledger)
    assert len(fig.axes[0].get_yticklabels()) == 2  # the two paired claims, not the count
    assert "d2l**: 2 claims, 2 decided by a test or a count: 2 reproduces (a>b, A-destroys)" in (
        findings.reading(ledger)
    )


def test_the_readme_block_is_rewritten_between_its_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{findings.START}\nold\n{findings.END}\nafter\n")
    assert findings.update_readme(ledger_of_two_benchmarks(), readme)
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("after\n") and "old" not in text
    assert "| a beats b | chroma | +10/−3, p = 0.09 | +0.667 [" in text
    assert not findings.update_readme(ledger_of_two_benchmarks(), readme)  # idempotent
    readme.write_text("no markers")
    with pytest.raises(SystemExit, match="no <!-- findings: start -->"):
        findings.update_readme(ledger_of_two_benchmarks(), readme)


def test_the_readme_summarises_the_committed_ledger():
    committed = paths.FIGURES / "claims.json"
    if not committed.is_file():
        pytest.fail("figures/claims.json is missing: make reproduce writes it")
    text = findings.README.read_text(encoding="utf-8")
    block = text.split(findings.START)[1].split(findings.END)[0]
    assert block.strip() == findings.summary(Ledger.read(committed)).strip()
