"""Notebook 04's fusion and interaction helpers: the RRF check, the tables that fit a page,
the figure's rows, and the reading of each new claim in the ledger's words."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from rag_lab.chunking import Chunk
from rag_lab.evaluation.fusion import FusionRuns
from rag_lab.evaluation.ledger import EXPLORATORY, Direction, Entry
from rag_lab.evaluation.retrieval import systems_of
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
from rag_lab.questions import Query, Question

N = 8
CLUSTERS = [f"q{i // 2}" for i in range(N)]
HYBRID = [1, 2, None, 3, 1, 5, 2, 1]


def systems(hybrid=HYBRID):
    ranks = {"dense": [1, 3, 4, None, 2, 1, 9, 1], "BM25": [2, 1, None, 3, 7, 8, 1, 4]}
    return systems_of({**ranks, "hybrid": list(hybrid)}, CLUSTERS)


def runs(rrf60=HYBRID):
    same = list(HYBRID)
    ranks = {f"RRF k={k}": same for k in (10, 20, 40, 100)}
    ranks["RRF k=60"] = list(rrf60)
    ranks["min-max"] = [1, 1, 2, 3, 1, 2, 2, 1]
    ranks["z-score"] = same
    return FusionRuns(ranks, {"min-max": [0.7] * 4, "z-score": [0.65] * 4}, 4)


def test_rrf_60_must_be_the_hybrid_query_by_query():
    nb04.check_rrf_is_hybrid(runs(), systems())
    moved = list(HYBRID)
    moved[2] = 40
    with pytest.raises(AssertionError, match="differs from the hybrid on 1 queries"):
        nb04.check_rrf_is_hybrid(runs(moved), systems())


def test_first_hits_need_the_needle_whole():
    def chunk(i, text):
        return Chunk("d", i, text, text, "", 0, len(text))

    index = SimpleNamespace(chunks=[chunk(0, "the kv cache grows"), chunk(1, "kv")])
    q = Query(Question("q1", "d", "kv cache", "what grows?", "t"), "course")
    hits = nb04.first_hits(index, [q])
    assert hits([np.array([1, 0])]) == [2]  # chunk 1 holds half the needle: not a hit
    assert hits([np.array([0, 1])]) == [1]


def test_fusion_table_fits_and_shows_every_run():
    table = nb04.fusion_table(runs(), CLUSTERS)
    assert list(table.frame.index) == list(runs().ranks)
    assert list(table.frame.columns) == ["R@1", "R@4", "R@8", "MRR"]
    assert table.frame.loc["min-max", "R@4"].startswith("1.000 [")
    assert "8 queries" in table.caption and "4 questions" in table.caption
    assert "other 3 folds" in table.caption


def test_weights_wrap_within_a_page():
    wide = FusionRuns({}, {"min-max": [0.65] * 12, "z-score": [0.7] * 12}, 12)
    lines = nb04.weights_text(wide).splitlines()
    assert len(lines) > 1 and all(len(line) <= 100 for line in lines)


def test_fusion_figure_has_a_row_per_run_and_both_retrievers():
    import matplotlib.pyplot as plt

    fig = nb04.fusion_figure(runs(), systems())
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["dense", "BM25", *runs().ranks]
    plt.close(fig)


def test_interaction_table_signs_its_gaps():
    queries = [Query(Question(f"p{i}", "d", "n", "c", "t"), ph) for i in range(3)
               for ph in ("course", "ticket")]  # fmt: skip
    probe = {"BM25": [1, 1, 1, 1, 9, 9], "dense": [9, 9, 9, 9, 9, 9]}
    table = nb04.interaction_table(probe, queries, systems())
    assert table.frame.loc[4, "identifier gap"] == "+0.667"
    assert table.frame.loc[4, "questions"] == "3 + 4"


def entry(direction, verdict, ci, estimate=0.0, claim="a>b@R4"):
    return Entry(
        "04", claim, "d2l", "a beats b", direction, "R@4", verdict,
        estimate=estimate, ci=ci, family=EXPLORATORY,
        margin=0.10 if direction is Direction.SAME else None,
    )  # fmt: skip


def test_claim_bullet_reads_the_interval_honestly():
    undecided = nb04.claim_bullet(entry(Direction.BETTER, Verdict.INCONCLUSIVE, (-0.1, 0.2)))
    assert "includes zero: this design cannot tell, which is not evidence of none" in undecided
    assert undecided.endswith("Verdict: inconclusive.")
    apart = nb04.claim_bullet(entry(Direction.BETTER, Verdict.INCONCLUSIVE, (0.01, 0.2)))
    assert "excludes zero" in apart and "cannot confirm" in apart
    shown = nb04.claim_bullet(entry(Direction.BETTER, Verdict.REPRODUCES, (0.05, 0.2)))
    assert "lies above zero" in shown and "Verdict: reproduces." in shown
    same = nb04.claim_bullet(entry(Direction.SAME, Verdict.REPRODUCES, (-0.05, 0.04)))
    assert "within ±0.10" in same and "reproduces (margin ±0.10)" in same
    wide = nb04.claim_bullet(entry(Direction.SAME, Verdict.INCONCLUSIVE, (-0.15, 0.04)))
    assert "reaches past ±0.10" in wide and "not evidence of either" in wide


def test_reading_reads_each_claim_once():
    # An interval apart from zero with an inconclusive verdict: read by _intervals, unless a
    # bullet of ``read`` already names the claim.
    e = replace(entry(Direction.BETTER, Verdict.INCONCLUSIVE, (0.01, 0.2)), p=0.2)
    plain = nb04.reading(systems(), judged=[e])
    assert "Intervals that exclude zero" in plain
    read = nb04.fusion_reading([e])
    once = nb04.reading(systems(), judged=[e], read=read)
    assert "Intervals that exclude zero" not in once and once.count("**a>b@R4**") == 1


def test_fusion_reading_shows_the_other_cutoffs_unjudged():
    e = entry(Direction.BETTER, Verdict.INCONCLUSIVE, (-0.1, 0.2), claim="min-max>RRF@R4")
    lines = nb04.fusion_reading([e], runs(), CLUSTERS)
    assert len(lines) == 2 and lines[0].startswith("- **min-max>RRF@R4**")
    # At R@1 min-max wins query 1 (rank 1 against RRF's 2), half of question q0, and ties the
    # rest: +0.5 / 4 questions. z-score is RRF's own ranks.
    assert "shown, not judged" in lines[1]
    assert "min-max R@1 +0.125" in lines[1] and "z-score R@8 +0.000" in lines[1]
    assert "R@4" not in lines[1]
