"""The claims file: its schema holds, every claim is declared once, a bad file is refused
with the claim and the field named."""

from __future__ import annotations

import collections

import pytest
import yaml

from rag_lab import claims as claims_mod
from rag_lab.claims import ROLES, ClaimsFileError, Direction, claim, claims


def test_every_claim_is_declared_once_with_its_fields():
    declared = claims()
    raw = yaml.safe_load(claims_mod.FILE.read_text(encoding="utf-8"))
    ids = [c["id"] for c in raw["claims"]]
    assert len(ids) == len(set(ids)) == len(declared)
    for c in declared.values():
        assert c.role in ROLES and c.statement and c.population
        # a claim no notebook measures is the deploy gate's, about a user's two runs
        assert c.notebooks or (c.id.startswith("new-run-worse:") and c.role == "project")
        if c.direction in (Direction.SAME, Direction.VALUE):
            assert c.margin is not None and c.margin_name
        if c.compare is not None:
            assert c.direction in (Direction.BETTER, Direction.WORSE, Direction.SAME)
        if c.direction is Direction.VALUE:
            assert c.chapter_effect is not None


def test_roles_and_families_are_what_the_plan_says():
    roles = collections.Counter(c.role for c in claims().values())
    assert set(roles) <= set(ROLES) and roles["chapter"] > 0
    # a control and the project's hypotheses are never in a confirmatory family
    for c in claims().values():
        if c.role in ("control", "exploratory"):
            assert c.family != "confirmatory", c.id


def test_a_chapter_value_given_as_a_count_is_its_fraction():
    assert claim("bluffs@0.675").chapter_effect == pytest.approx(10 / 30)
    assert claim("E>A@R20").chapter_effect == pytest.approx((18 - 3) / 64)


def test_an_undeclared_claim_is_named():
    with pytest.raises(KeyError, match=r"'no-such-claim' is not declared in chapter\.yaml"):
        claim("no-such-claim")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.pop("population"), r"missing \['population'\]"),
        (lambda c: c.update(colour="red"), r"unknown \['colour'\]"),
        (lambda c: c.update(role="hunch"), "role 'hunch' is not one of"),
        (lambda c: c.update(margin="loose"), "margin 'loose' is not in `margins`"),
        (lambda c: c.pop("margin"), "a no difference claim needs its margin"),
    ],
)
def test_a_broken_declaration_is_refused_with_its_claim_named(edit, message):
    doc = yaml.safe_load(claims_mod.FILE.read_text(encoding="utf-8"))
    target = next(c for c in doc["claims"] if c["id"] == "hybrid=dense@R4")
    edit(target)
    with pytest.raises(ClaimsFileError, match=message) as err:
        claims_mod._parse(doc)
    assert "'hybrid=dense@R4'" in str(err.value)


def test_a_claim_declared_twice_is_refused():
    doc = yaml.safe_load(claims_mod.FILE.read_text(encoding="utf-8"))
    doc["claims"].append(dict(doc["claims"][0]))
    with pytest.raises(ClaimsFileError, match="declared twice"):
        claims_mod._parse(doc)


def test_the_plan_has_a_fingerprint_and_a_deviations_list():
    assert len(claims_mod.sha256()) == 64
    assert isinstance(claims_mod.deviations(), list)
