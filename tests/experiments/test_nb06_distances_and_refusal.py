from __future__ import annotations

import numpy as np

from rag_lab.evaluation import refusal
from rag_lab.experiments import nb06_distances_and_refusal as dr
from rag_lab.questions import Negative, Query, Question


def test_identity_on_unit_and_raw_vectors():
    a, b = np.array([1.0, 0.0]), np.array([0.6, 0.8])
    pair = dr.identity_pair(a, b)
    # ‖a − b‖² = 0.16 + 0.64 = 0.8, so L2²/2 = 0.4 = 1 − 0.6.
    assert np.isclose(pair["L2²/2"], 0.4) and np.isclose(pair["1 − cos"], 0.4)
    assert dr.identity_all_pairs(np.stack([a, b])) < 1e-6
    raw = np.stack([a * 3, b])  # same directions, one longer
    # ‖3a − b‖² = 5.76 + 0.64 = 6.4, half is 3.2, while 1 − cos is still 0.4.
    assert np.isclose(dr.identity_all_pairs(raw), 2.8, atol=1e-5)


def test_length_dependence_reports_norm_spread_and_rank_correlation():
    raw = np.array([[1.0, 0], [0, 2.0], [3.0, 0]])
    out = dr.length_dependence(raw, [10, 20, 30])
    assert (out["norm min"], out["norm max"]) == (1.0, 3.0)
    assert out["Spearman(length, norm)"] == 1.0


def test_distances_and_overlap():
    answerable = np.array([[0.2, 0.6, 0.9], [0.5, 0.3, 0.7]])
    relevant = [{1}, {2}]
    negatives = np.array([[0.65, 0.8, 0.9]])
    d = refusal.distances(answerable, relevant, negatives)
    assert d.needle.tolist() == [0.6, 0.7]
    q = Question("q1", "d", "n", "c", "t")
    queries = [Query(q, "course"), Query(Question("q2", "d", "m", "c2", "t2"), "course")]
    table = refusal.overlap_table(d, queries, [Negative("n1", "offtopic", "x")])
    both = table.loc["both"]
    assert (both["worst in-domain"], both["query"], both["best out-of-domain"]) == (
        0.7,
        "q2/course",
        0.65,
    )
    assert bool(both["overlap"]) and both["in-domain above best out-of-domain"] == 1


def test_failure_kinds():
    assert dr.classify(
        "what is the capital of france", "…asking what is the capital of France needs no reasoning"
    ) == ("literal match", "what is the capital of france")
    assert dr.classify("does weight decay touch the kv cache", "Weight decay adds a penalty.") == (
        "near miss",
        "decay, weight",
    )
    assert dr.classify("how do i bake bread", "Tensors hold numbers.") == ("semantic only", "")


def test_rates_read_each_interval_against_the_chapter():
    from types import SimpleNamespace as NS

    def rate(claim, ci, chapter, verdict):
        interval = f"{sum(ci) / 2:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
        return NS(
            claim=claim,
            interval=interval,
            ci=ci,
            chapter_effect=chapter,
            verdict=NS(label=verdict),
            margin=0.1,
        )

    text = dr._rates(
        [
            rate("wide", (0.10, 0.50), 0.33, "inconclusive"),
            rate("narrow", (0.00, 0.12), 0.20, "contradicted"),
            NS(claim="count", interval="", ci=None, chapter_effect=None, verdict=None, margin=None),
        ]
    )
    assert text.startswith(
        "- **Rates beside the chapter's.** wide 0.300 [0.100, 0.500] holds "
        "the chapter's 0.330 (*inconclusive*); narrow 0.060 [0.000, 0.120] "
        "excludes the chapter's 0.200 (*contradicted*)."
    )
    assert "count" not in text  # a count has no interval to read
    assert "1 of these intervals are wider than the ±0.10" in text
    assert "which is not evidence that they differ" in text
