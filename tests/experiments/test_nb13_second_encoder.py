"""Notebook 13's cutoff, tables and figure on entries built here: no corpus, no encoder."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from dataclasses import replace

from rag_lab import paths
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import generalisation
from rag_lab.evaluation.ledger import Direction, Entry, Ledger
from rag_lab.experiments import findings
from rag_lab.experiments import nb13_second_encoder as nb13

L6, L3 = generalisation.ENCODERS


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


def test_the_generalisation_table_and_tally_read_the_rule():
    table = nb13.generalisation_table(ENTRIES).frame
    assert table["benchmark"].tolist() == ["d2l", "d2l", "chroma"]
    assert table[nb13.short(L3)].tolist() == ["reproduces", "reproduces", "inconclusive"]
    assert table["across encoders"].tolist() == ["generalises", "specific to L3", "neither"]
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


def _committed(notebook: str) -> dict[tuple[str, str, str], Entry]:
    entries = Ledger.read(paths.FIGURES / "claims" / f"{notebook}.json").entries
    return {(e.benchmark, e.claim, e.encoder): e for e in entries}


def test_the_committed_run_judges_every_planned_claim_under_both_encoders():
    ran = _committed("13")
    plan = generalisation.PLAN["claims"]
    planned = {(b, c, n) for b, ids in plan.items() for c in ids for n in (L6, L3)}
    assert set(ran) == planned
    home = {k: e for nb in ("02", "03", "04", "06", "10") for k, e in _committed(nb).items()}
    for (b, c, n), e in ran.items():  # the reference's numbers are its home notebook's
        if n == L6 and (b, c, n) in home and c not in generalisation.CUTOFFS:
            assert replace(e, notebook=home[b, c, n].notebook) == home[b, c, n]


def test_the_committed_verdicts_of_the_added_claims():
    ran = _committed("13")
    verdicts = {(b, c): (ran[b, c, L6].verdict.value, ran[b, c, L3].verdict.value)
                for b, c, _ in ran}  # fmt: skip
    assert verdicts["chroma", "header-window"] == ("contradicted", "reproduces")
    assert ran["chroma", "header-window", L3].estimate == 281 - 223
    assert verdicts["chroma", "overlap-window"] == ("reproduces", "reproduces")
    assert verdicts["chroma", "header-share"] == ("excludes_chapter_effect",) * 2
    assert verdicts["d2l", "bluffs@0.525"] == ("inconclusive", "excludes_chapter_effect")
    assert ran["d2l", "bluffs@0.525", L3].metric == "bluff rate at 0.615"
    assert verdicts["d2l probes", "hybrid>dense@R1:identifiers"] == ("inconclusive", "reproduces")
    tally = nb13.tally(list(ran.values()))
    assert tally["d2l probes"].to_dict() == {"generalises": 0, "model-specific": 1, "neither": 6}
    assert tally["chroma"].to_dict() == {"generalises": 8, "model-specific": 1, "neither": 4}
    assert tally["d2l"].to_dict() == {"generalises": 4, "model-specific": 3, "neither": 9}
