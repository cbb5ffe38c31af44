"""The renderer on hand-made entries: each kind of claim in each form, the method named
beside its interval, a stand-in flagged, a fixed verdict's reason given."""

from __future__ import annotations

from rag_lab.claims import render
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import (
    PairedClaim,
    count_entry,
    fixed_entry,
    paired_entries,
    value_entry,
)


def _paired():
    ranks = {"a": [1] * 24, "b": [1] * 8 + [None] * 16}
    clusters = [f"q{i}" for i in range(12) for _ in range(2)]
    (e,) = paired_entries("03", "d2l", [PairedClaim("E>A@R20", "a", "b", 1)], ranks, clusters)
    return e


def test_a_paired_entry_in_every_form():
    e = _paired()
    assert render.interval(e).startswith("+0.667 [")
    assert render.method(e) == "t over questions, two pseudo-questions"
    assert render.p_text(e) == f"{e.p:#.2g} ({e.p_adjusted:#.2g})"
    line = render.entry_line(e)
    assert line.startswith("- **E>A@R20** (boundaries with a header beat blind cuts): by ")
    assert "(t over questions, two pseudo-questions)" in line
    assert "the chapter: +18/−3, p = 0.0015" in line and line.endswith("**Reproduces**.")
    row = render.view([e]).iloc[0]
    assert row["verdict"] == "reproduces" and row["here"] == "+8/−0 of 12 questions"


def test_a_value_a_count_and_a_fixed_verdict():
    v = value_entry("bluffs@0.675", notebook="06", benchmark="d2l", estimate=0.4,
                    interval=(0.23, 0.58), method="clustered_wilson", here="12 of 30")  # fmt: skip
    assert render.interval(v) == "0.400 [0.230, 0.580]"
    # interval (0.23, 0.58): half-width 0.175 is 1.96 standard errors; 80 % power at 0.05
    # needs (1.96 + 0.84) of them: 0.25
    assert render.verdict_text(v) == "inconclusive (margin ±0.05; detects ±0.25 with 80 % power)"
    assert "rate 0.400 [0.230, 0.580] (Wilson over questions)" in render.entry_line(v)
    c = count_entry("A-destroys", notebook="02", benchmark="d2l", holds=True, here="4 of 32")
    assert render.evidence(c) == "4 of 32" and render.interval(c) == "–"
    f = fixed_entry("colbert", notebook="05", benchmark="d2l", verdict=Verdict.NOT_TESTABLE,
                    reason="no checkpoint here")  # fmt: skip
    assert render.verdict_text(f) == "not testable here: no checkpoint here"
    assert render.finding_line(f).endswith("*Not testable here*: no checkpoint here.")


def test_a_stand_in_is_flagged_in_every_line():
    e = count_entry("cross-cost", notebook="05", benchmark="d2l", holds=True, here="1258 ms")
    assert e.stand_in
    assert "[stand-in: " in render.finding_line(e)
    assert "[stand-in: " in render.entry_line(e)


def test_what_qualifies_a_paired_verdict_is_shown():
    ranks = {"a": [1] * 24, "b": [1] * 8 + [None] * 16, "c": [1] * 24}
    clusters = [f"q{i}" for i in range(12) for _ in range(2)]
    claims = [PairedClaim("E>A@R20", "a", "b", 1), PairedClaim("hybrid=dense@R4", "a", "c", 1)]
    e, same = paired_entries("03", "d2l", claims, ranks, clusters)
    # a confirmatory family of two: the interval shown is the one at 1 − 0.05/2
    assert render.method(e) == "t over questions, two pseudo-questions, 97.5 %"
    assert render.verdict_text(same) == "no variation (every question's difference is 0)"
    assert not same.verdict.tested and not same.verdict.agrees


def test_an_unbounded_ratio_reads_as_infinite_and_survives_the_ledger_file(tmp_path):
    from rag_lab.claims.judge import IntervalRecord
    from rag_lab.evaluation.ledger import Ledger, entry

    e = entry("BM25-doubles-dense@R1", notebook="04", benchmark="d2l",
              record=IntervalRecord(3.0, (0.0, float("inf")), "fieller_questions"),
              estimate=3.0, ci=(0.0, float("inf")), method="fieller_questions")  # fmt: skip
    assert e.verdict is Verdict.INCONCLUSIVE
    assert render.interval(e) == "3.000 [0.000, ∞]"
    Ledger([e]).write(tmp_path / "l.json")
    (back,) = Ledger.read(tmp_path / "l.json").entries
    assert back.ci == (0.0, float("inf")) and render.interval(back) == render.interval(e)


def test_a_ceiling_moves_the_comparison_to_shares_of_the_headroom():
    from dataclasses import replace

    e = replace(_paired(), verdict=Verdict.INCONCLUSIVE, ceiling=0.125, share=(-0.41, 0.88),
                chapter_share=0.476)  # fmt: skip
    assert render.verdict_text(e) == (
        "inconclusive (the chapter's effect is out of reach: at most +0.125; as shares of the "
        "headroom, ours [-0.41, +0.88], the chapter's +0.48)"
    )
