"""Notebook 13's cutoff, tables and figure on entries built here: no corpus, no encoder."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from dataclasses import replace
from types import SimpleNamespace

import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import Direction, Entry, Ledger, count_entry
from rag_lab.experiments import findings
from rag_lab.experiments import nb13_second_encoder as nb13

L6, L3 = nb13.ENCODERS


def _paired(claim: str, benchmark: str, encoder: str, verdict: Verdict, estimate: float) -> Entry:
    return Entry("13", claim, benchmark, f"the statement of {claim}", Direction.BETTER, "R@20",
                 verdict, estimate=estimate, ci=(estimate - 0.1, estimate + 0.1),
                 encoder=encoder)  # fmt: skip


ENTRIES = [
    _paired("E>A@R20", "d2l", L6, Verdict.REPRODUCES, 0.28),
    _paired("E>A@R20", "d2l", L3, Verdict.REPRODUCES, 0.20),
    _paired("F<E@R20", "d2l", L6, Verdict.INCONCLUSIVE, 0.02),
    _paired("F<E@R20", "d2l", L3, Verdict.REPRODUCES, -0.15),
    _paired("F<E@R20", "chroma", L6, Verdict.INCONCLUSIVE, 0.0),
    _paired("F<E@R20", "chroma", L3, Verdict.INCONCLUSIVE, 0.01),
]


def test_the_matched_cutoff_is_the_smallest_refusing_no_more_than_the_reference():
    sweep = pd.DataFrame({"cutoff": [None, 0.4, 0.5, 0.6, 0.7], "refused": [0, 9, 3, 1, 0]})
    gated = SimpleNamespace(sweep=sweep)
    assert nb13.matched_cutoff(gated, 1) == 0.6
    assert nb13.matched_cutoff(gated, 3) == 0.5
    assert nb13.matched_cutoff(gated, 0) == 0.7


def test_the_plan_keeps_its_order_and_stamps_the_encoder():
    base = count_entry("header-window", notebook="13", benchmark="d2l", holds=True, here="")
    made = [replace(base, claim=c) for c in reversed(nb13.PLAN["claims"]["d2l"])]
    planned = nb13._planned(made, "d2l", L3)
    assert [e.claim for e in planned] == nb13.PLAN["claims"]["d2l"]
    assert {e.encoder for e in planned} == {L3}


def test_the_generalisation_table_and_tally_read_the_rule():
    table = nb13.generalisation_table(ENTRIES).frame
    assert table["benchmark"].tolist() == ["d2l", "d2l", "chroma"]
    assert table[nb13.short(L3)].tolist() == ["reproduces", "reproduces", "inconclusive"]
    tally = nb13.tally(ENTRIES)
    assert tally.loc["generalises", "d2l"] == 1 and tally.loc["model-specific", "d2l"] == 1
    assert tally.loc["neither", "chroma"] == 1


def test_the_claims_table_has_a_row_per_claim_and_encoder_on_one_benchmark():
    frame = nb13.claims_table(ENTRIES, "d2l").frame
    assert frame["encoder"].tolist() == ["L6", "L3", "L6", "L3"]
    assert frame["estimate [CI]"].iloc[0] == "+0.280 [+0.180, +0.380]"


def test_the_forest_has_one_row_per_claim_and_benchmark():
    fig = nb13.forest_figure(ENTRIES)
    assert len(fig.axes[0].get_yticks()) == 3


def test_the_chapter_ledger_never_gathers_notebook_13(tmp_path, monkeypatch):
    monkeypatch.setattr(findings, "parts_dir", lambda: tmp_path)
    Ledger(ENTRIES[:1]).write(tmp_path / "03.json")
    Ledger(ENTRIES).write(tmp_path / f"{findings.SECOND_ENCODER}.json")
    assert findings.gather().entries == ENTRIES[:1]
