"""The generalisation plan's bookkeeping: the matched cutoff, the plan's order and stamps, the
bluff rate at the cutoff given; no corpus, no encoder."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import generalisation
from rag_lab.evaluation.ledger import count_entry
from rag_lab.stats import wilson

L6, L3 = generalisation.ENCODERS


def test_the_matched_cutoff_is_the_smallest_refusing_no_more_than_the_reference():
    sweep = pd.DataFrame({"cutoff": [None, 0.4, 0.5, 0.6, 0.7], "refused": [0, 9, 3, 1, 0]})
    gated = SimpleNamespace(sweep=sweep)
    assert generalisation.matched_cutoff(gated, 1) == 0.6
    assert generalisation.matched_cutoff(gated, 3) == 0.5
    assert generalisation.matched_cutoff(gated, 0) == 0.7


def test_the_plan_keeps_its_order_and_stamps_notebook_and_encoder():
    base = count_entry("header-window", notebook="04", benchmark="d2l", holds=True, here="")
    plan = generalisation.PLAN["claims"]
    made = [replace(base, claim=c, benchmark=b) for b in plan for c in reversed(plan[b])]
    planned = generalisation._planned(made, ("d2l", "d2l probes"), L3)
    assert [e.claim for e in planned] == plan["d2l"] + plan["d2l probes"]
    assert {(e.notebook, e.encoder) for e in planned} == {("13", L3)}


def test_the_plan_carries_the_window_claims_on_both_benchmarks_and_both_cutoffs():
    plan = generalisation.PLAN["claims"]
    for claim in ("header-share", "header-window", "overlap-window"):
        assert claim in plan["d2l"] and claim in plan["chroma"]
    assert set(generalisation.CUTOFFS) <= set(plan["d2l"]) and "refused@0.525" not in plan["d2l"]
    assert len(plan["d2l probes"]) == 7


def test_bluffs_are_counted_and_judged_at_the_cutoff_given():
    gated = SimpleNamespace(at=lambda cutoff: {"bluffs": 12, "refused": 9}, negatives=30)
    e = generalisation._bluffs(gated, "bluffs@0.525", 0.615)
    assert (e.claim, e.estimate, e.ci) == ("bluffs@0.525", 0.4, wilson(12, 30))
    assert e.metric == "bluff rate at 0.615"
    assert e.verdict is Verdict.EXCLUDES_CHAPTER_EFFECT  # the chapter's 2 of 30 lies outside
