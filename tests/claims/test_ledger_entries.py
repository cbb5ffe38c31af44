"""The ledger's builders: a declared id and a record give an entry whose words are the
file's and whose verdict is the judge's; the family is the confirmatory claims alone."""

from __future__ import annotations

import pytest

from rag_lab.claims import CONFIRMATORY, EXPLORATORY, claim, render
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import ledger
from rag_lab.evaluation.ledger import (
    Ledger,
    PairedClaim,
    count_entry,
    fixed_entry,
    paired_entries,
    value_entry,
)
from rag_lab.metrics import hits_at
from rag_lab.stats import paired_difference


def queries(n: int) -> list[str]:
    return [f"q{i}" for i in range(n) for _ in range(2)]


def test_the_family_is_the_confirmatory_claims_alone():
    # a finds both phrasings of 8 of 12 questions that b misses.
    ranks = {"a": [1] * 24, "b": [1] * 8 + [None] * 16, "c": [1] * 24}
    claims = [
        PairedClaim("E>A@R20", "a", "b", 1),  # confirmatory, better
        PairedClaim("hybrid=dense@R4", "a", "c", 1),  # confirmatory, no difference
        PairedClaim("hybrid>dense@R1", "a", "b", 1),  # exploratory
    ]
    confirm, same, explore = paired_entries("03", "d2l", claims, ranks, queries(12))
    assert confirm.family == CONFIRMATORY and explore.family == EXPLORATORY
    d = paired_difference(hits_at([1] * 24, 1), hits_at([1] * 8 + [None] * 16, 1), queries(12))
    assert confirm.p == pytest.approx(d.p)
    assert confirm.p_adjusted == pytest.approx(2 * d.p)  # a family of two, not three
    assert confirm.level == pytest.approx(1 - 0.05 / 2)  # the interval the verdict read
    assert confirm.ci == pytest.approx((d.at(0.975).lo, d.at(0.975).hi))
    assert explore.p_adjusted is None and explore.verdict is Verdict.REPRODUCES
    assert explore.level is None and explore.ci == pytest.approx((d.lo, d.hi))
    assert confirm.verdict is Verdict.REPRODUCES and confirm.estimate == pytest.approx(16 / 24)
    # identical systems on 12 questions: no variation at all, which is no reproduction
    assert same.verdict is Verdict.NO_VARIATION


def test_an_entry_carries_the_declaration():
    (e,) = paired_entries(
        "03", "d2l", [PairedClaim("E>C@R20", "a", "b", 1)],
        {"a": [1] * 24, "b": [1] * 8 + [None] * 16}, queries(12),
    )  # fmt: skip
    c = claim("E>C@R20")
    assert (e.statement, e.chapter, e.role, e.population) == (
        c.statement, c.chapter, c.role, c.population,
    )  # fmt: skip
    assert e.method == ledger.PAIRED_METHOD and e.stand_in is None
    row = render.view([e]).iloc[0]
    assert row["chapter"] == c.chapter and row["here"] == "+8/−0 of 12 questions"
    assert row["estimate [CI]"].startswith("+0.667 [")


def test_a_count_a_value_and_a_fixed_verdict():
    holds = count_entry("A-destroys", notebook="02", benchmark="d2l", holds=True, here="8 of 32")
    fails = count_entry("A-destroys", notebook="02", benchmark="d2l", holds=False, here="0")
    assert (holds.verdict, fails.verdict) == (Verdict.REPRODUCES, Verdict.CONTRADICTED)
    assert holds.reason == claim("A-destroys").rule
    v = value_entry("bluffs@0.675", notebook="06", benchmark="d2l", estimate=0.4,
                    interval=(0.23, 0.58), method="wilson", here="12 of 30")  # fmt: skip
    assert v.verdict is Verdict.INCONCLUSIVE and v.margin == claim("bluffs@0.675").margin
    f = fixed_entry("identity", notebook="06", benchmark="d2l",
                    verdict=Verdict.BY_CONSTRUCTION, reason="why", holds=False)  # fmt: skip
    assert f.verdict is Verdict.CONTRADICTED


def test_a_ledger_writes_and_reads_back_the_same(tmp_path):
    entries = [
        value_entry("bluffs@0.675", notebook="06", benchmark="d2l", estimate=0.4,
                    interval=(0.23, 0.58), method="wilson", here="12 of 30"),
        count_entry("A-destroys", notebook="02", benchmark="d2l", holds=False, here="0 of 32"),
    ]  # fmt: skip
    path = Ledger(entries).write(tmp_path / "claims.json")
    assert Ledger.read(path).entries == entries
    assert path.read_text().count('"verdict": "inconclusive"') == 1
