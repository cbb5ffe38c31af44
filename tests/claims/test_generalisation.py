"""The generalisation rule (one claim, one benchmark, its verdict under each encoder) on
hand-made verdicts: every outcome reached, and an entry that carries its encoder."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rag_lab.claims import claim, generalisation_plan
from rag_lab.claims.judge import DECIDED, Generalisation, Generality, generalisation
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import REFERENCE_ENCODER, Ledger, count_entry
from rag_lab.models.encoder import DEFAULT_ENCODER, PACKAGED

L6, L3 = PACKAGED
R, C, X, U = (Verdict.REPRODUCES, Verdict.CONTRADICTED, Verdict.EXCLUDES_CHAPTER_EFFECT,
              Verdict.INCONCLUSIVE)  # fmt: skip


@pytest.mark.parametrize("verdict", DECIDED)
def test_the_same_decided_verdict_under_every_encoder_generalises(verdict):
    g = generalisation({L6: verdict, L3: verdict})
    assert g == Generalisation(Generality.GENERALISES, verdict=verdict)


@pytest.mark.parametrize(("l6", "l3", "holds"), [(R, U, L6), (U, R, L3), (R, C, L6), (X, R, L3)])
def test_reproducing_under_exactly_one_tested_encoder_is_model_specific(l6, l3, holds):
    assert generalisation({L6: l6, L3: l3}) == Generalisation(
        Generality.MODEL_SPECIFIC, encoder=holds
    )


@pytest.mark.parametrize(
    "verdicts",
    [
        {L6: U, L3: U},  # undecided under each: nothing generalises
        {L6: C, L3: X},  # decided differently, neither reproduces
        {L6: R, L3: Verdict.NOT_TESTABLE},  # no test under one: not model-specific
        {L6: R, L3: Verdict.NO_VARIATION},
        {L6: Verdict.NOT_MEASURED, L3: Verdict.NOT_MEASURED},
        {L6: R, L3: R, "a third": U},  # two of three reproduce
    ],
)
def test_anything_else_is_neither(verdicts):
    assert generalisation(verdicts).kind is Generality.NEITHER


def test_one_encoder_cannot_generalise():
    with pytest.raises(ValueError, match="two encoders"):
        generalisation({L6: R})


def test_an_entry_carries_its_encoder_through_the_ledger_file(tmp_path):
    assert REFERENCE_ENCODER == DEFAULT_ENCODER == generalisation_plan()["reference"]
    e = count_entry("A-destroys", notebook="13", benchmark="d2l", holds=True, here="4 of 32")
    assert e.encoder == REFERENCE_ENCODER
    entries = [e, replace(e, encoder=L3)]
    path = Ledger(entries).write(tmp_path / "13.json")
    assert Ledger.read(path).entries == entries
    assert path.read_text().count(f'"encoder": "{L3}"') == 1


def test_an_entry_written_before_the_field_reads_as_the_reference_encoder(tmp_path):
    e = count_entry("A-destroys", notebook="02", benchmark="d2l", holds=True, here="4 of 32")
    old = {k: v for k, v in e.to_json().items() if k != "encoder"}
    path = tmp_path / "02.json"
    path.write_text(json.dumps([old]))
    assert Ledger.read(path).entries == [e]


def test_every_claim_of_the_plan_is_declared_and_the_encoders_are_the_lab_s():
    plan = generalisation_plan()
    assert tuple(plan["encoders"]) == PACKAGED
    assert all(claim(c) for ids in plan["claims"].values() for c in ids)
