"""The refusal gate's distances, the identity behind them and their claims, on vectors built
here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rag_lab.evaluation import hypotheses, refusal
from rag_lab.questions import Negative, Query, Question


def test_identity_on_unit_and_raw_vectors():
    a, b = np.array([1.0, 0.0]), np.array([0.6, 0.8])
    assert refusal.identity_all_pairs(np.stack([a, b])) < 1e-6
    raw = np.stack([a * 3, b])  # same directions, one longer
    # ‖3a − b‖² = 5.76 + 0.64 = 6.4, half is 3.2, while 1 − cos is still 0.4.
    assert np.isclose(refusal.identity_all_pairs(raw), 2.8, atol=1e-5)


def test_length_dependence_reports_norm_spread_and_rank_correlation():
    raw = np.array([[1.0, 0], [0, 2.0], [3.0, 0]])
    out = refusal.length_dependence(raw, [10, 20, 30])
    assert (out["norm min"], out["norm max"]) == (1.0, 3.0)
    assert out["Spearman(length, norm)"] == pytest.approx(1.0)


def test_distances_and_overlap():
    answerable = np.array([[0.2, 0.6, 0.9], [0.5, 0.3, 0.7]])
    relevant = [{1}, {2}]
    negatives = np.array([[0.65, 0.8, 0.9]])
    d = refusal.distances(answerable, relevant, negatives)
    assert d.needle.tolist() == [0.6, 0.7]
    q = Question("q1", "d", "n", "c", "t")
    queries = [Query(q, "course"), Query(Question("q2", "d", "m", "c2", "t2"), "course")]
    table = refusal.overlap_table(d, queries, [Negative("n1", "offtopic", "x")])
    both = table.iloc[-1]  # every phrasing together ("all": these queries are all "course")
    assert (both["worst in-domain"], both["query"], both["best out-of-domain"]) == (
        0.7,
        "q2/course",
        0.65,
    )
    assert bool(both["overlap"]) and both["in-domain above best out-of-domain"] == 1


def test_the_identity_and_the_literal_trap_are_judged_on_the_run(monkeypatch):

    from rag_lab.claims import claim
    from rag_lab.claims.verdicts import Verdict

    # the refusal rates and the twins are judged by their own modules, tested there
    monkeypatch.setattr(hypotheses, "refusal_entries", lambda *a: [])
    monkeypatch.setattr(hypotheses.twins, "entries", lambda *a: [])
    traps = pd.DataFrame(
        {"passes": [True, True, False], "holds rare term": [True, False, True]},
        index=pd.Index(["t1", "t2", "t3"], name="id"),
    ).assign(distance=[0.661, 0.6, 0.7])
    raw, lengths = np.arange(1.0, 7.0).reshape(3, 2), [1, 2, 3]
    identity, _, literal = hypotheses.distance_entries(8.3e-7, None, traps, None, raw, lengths)
    assert (identity.claim, identity.verdict) == ("identity", Verdict.BY_CONSTRUCTION)
    assert identity.here == "max error 8.3e-07" and "8.3e-07" in identity.reason
    assert (literal.claim, literal.verdict) == ("literal-match-bluff", Verdict.REPRODUCES)
    assert literal.here == "t1 at 0.661" and literal.reason == claim(literal.claim).rule
    none = hypotheses.distance_entries(
        8.3e-7, None, traps.assign(passes=False), None, raw, lengths
    )[2]
    assert none.verdict is Verdict.CONTRADICTED and none.here == "none"


def test_length_norm_is_judged_by_spearman_s_test(monkeypatch):
    from rag_lab.claims.verdicts import Verdict

    monkeypatch.setattr(hypotheses, "refusal_entries", lambda *a: [])
    monkeypatch.setattr(hypotheses.twins, "entries", lambda *a: [])
    traps = pd.DataFrame({"passes": [False], "holds rare term": [False], "distance": [0.7]})

    def length_norm(raw, lengths):
        return hypotheses.distance_entries(8.3e-7, None, traps, None, raw, lengths)[1]

    lengths = list(range(10, 60))
    grows = np.outer(np.array(lengths, float), np.ones(4))  # the norm grows with the length
    e = length_norm(grows, lengths)
    assert e.claim == "length-norm" and e.verdict is Verdict.REPRODUCES
    assert e.estimate == pytest.approx(1.0)
    flat = np.ones((50, 4)) + np.random.default_rng(0).normal(0, 1e-3, (50, 4))
    assert length_norm(flat, lengths).verdict is Verdict.CONTRADICTED
