"""The lab's ledger: parts gathered, shown side by side, counted, drawn, and the README's
summary generated from the committed file (so it cannot drift from it)."""

from __future__ import annotations

import pytest

from rag_lab import paths
from rag_lab.claims import ROLES, claim, claims, deviations
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import Ledger, count_entry, paired_entries
from rag_lab.experiments import findings

PAIRED = "hybrid>BM25@R4"
"""A declared paired claim (the chapter: +10/−3, p = 0.09) measured on made-up ranks."""


def ledger_of_two_benchmarks() -> Ledger:
    clusters = [f"q{i}" for i in range(12) for _ in range(2)]
    ranks = {"hybrid": [1] * 24, "BM25": [1] * 8 + [None] * 16}
    ledger = Ledger()
    for bench in ("d2l", "chroma"):
        ledger.extend(paired_entries("03", bench, [PAIRED], ranks, clusters))
    ledger.extend(
        [count_entry("A-destroys", notebook="02", benchmark="d2l", holds=True, here="8 of 32")]
    )
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


def test_verdict_tables_tally_and_forest():
    ledger = ledger_of_two_benchmarks()
    shared, only = (t.frame for t in findings.verdict_tables(ledger))
    assert list(shared.columns) == ["claim", "d2l", "chroma"] and list(shared.index) == [PAIRED]
    assert shared.loc[PAIRED, "d2l"] == shared.loc[PAIRED, "chroma"] == "reproduces"
    assert list(only.index) == ["A-destroys"] and only.loc["A-destroys", "here"] == "8 of 32"
    assert findings.tally(ledger).loc["reproduces"].to_dict() == {"chroma": 1, "d2l": 2}
    fig = findings.forest_figure(ledger)
    assert len(fig.axes[0].get_yticklabels()) == 2  # the two paired claims, not the count


def test_the_readme_block_is_rewritten_between_its_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{findings.START}\nold\n{findings.END}\nafter\n")
    assert findings.update_readme(ledger_of_two_benchmarks(), readme)
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("after\n") and "old" not in text
    c = claim(PAIRED)
    assert f"| {c.statement} | {c.role} | chroma | {c.chapter} | +0.667 [" in text
    assert not findings.update_readme(ledger_of_two_benchmarks(), readme)  # idempotent
    readme.write_text("no markers")
    with pytest.raises(SystemExit, match="no <!-- findings: start -->"):
        findings.update_readme(ledger_of_two_benchmarks(), readme)


def test_the_entries_are_judged_on_the_made_up_ranks():
    paired, _, count = ledger_of_two_benchmarks().entries
    assert paired.estimate == pytest.approx(2 / 3)
    assert paired.p_adjusted == paired.p  # a family of one
    assert paired.verdict is Verdict.REPRODUCES and paired.here == "+8/−0 of 12 questions"
    assert count.verdict is Verdict.REPRODUCES and count.reason == claim("A-destroys").rule


def test_the_plan_counts_the_declared_claims_by_role():
    frame = findings.plan().frame["value"]
    by_role = [int(frame[f"claims: {r}"]) for r in ROLES]
    assert sum(by_role) == len(claims()) and all(n > 0 for n in by_role)
    assert int(frame["deviations"]) == len(deviations())


def test_only_what_goes_against_the_chapter_is_not_confirmed():
    ledger = ledger_of_two_benchmarks()
    assert findings.not_confirmed(ledger) == ""
    ledger.extend(
        [count_entry("B-destroys-none", notebook="02", benchmark="d2l", holds=False, here="4")]
    )
    (line,) = findings.not_confirmed(ledger).splitlines()
    assert ledger.entries[-1].verdict is Verdict.CONTRADICTED and "**B-destroys-none**" in line


def test_the_readme_summarises_the_committed_ledger():
    committed = paths.FIGURES / "claims.json"
    if not committed.is_file():
        pytest.fail("figures/claims.json is missing: make reproduce writes it")
    text = findings.README.read_text(encoding="utf-8")
    block = text.split(findings.START)[1].split(findings.END)[0]
    assert block.strip() == findings.summary(Ledger.read(committed)).strip()


def test_the_chapter_page_holds_the_chapter_s_claims_alone():
    ledger = ledger_of_two_benchmarks()
    ledger.extend(
        [count_entry("geometry-A", notebook="02", benchmark="d2l", holds=True, here="8 of 32")]
    )
    tables = findings.chapter_page(ledger)
    assert [list(t.frame.index) for t in tables] == [[PAIRED, "A-destroys"], [PAIRED]]
    row = tables[0].frame.loc["A-destroys"]
    assert (row["chapter"], row["here"], row["verdict"]) == ("4 of 32", "8 of 32", "reproduces")
