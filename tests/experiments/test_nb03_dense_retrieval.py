"""Notebook 03's issue-25 helpers: the baseline's reading, what overlap rescues, the pull."""

from __future__ import annotations

import numpy as np

from rag_lab.evaluation import baselines, overlap
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.experiments import nb03_dense_retrieval as nb03
from rag_lab.questions import Query, Question


def queries(n: int) -> list[Query]:
    qs = [Question(f"q{i}", "d", "x" * (50 + 5 * i), "c?", "t?") for i in range(n)]
    return [Query(q, p) for q in qs for p in ("course", "ticket")]


def judged_baseline(ranks, qs):
    return {e.claim: e for e in baselines.entries(ranks, qs)}


def test_baseline_reading_names_the_split_that_reaches_the_chapter():
    qs = queries(32)
    # Long needles always first, short ones always third: overall R@1 is 0.5; the short
    # half's R@1 is 0, its interval [0, …] holds the chapter's 0.094, the long half's does not.
    median = np.median([len(q.needle) for q in qs])
    ranks = [1 if len(q.needle) > median else 3 for q in qs]
    text = nb03.baseline_reading(ranks, qs, 912, judged_baseline(ranks, qs))
    assert text.startswith("- **The chapter's dense baseline is weaker than ours.**")
    assert "5.3× the chapter's" in text  # 0.5 / 0.094
    assert "The chunks do not explain it: 1.03× as many" in text
    assert "Nor does the phrasing" in text
    assert "on the shorter half of the needles the chapter's R@1 lies inside" in text
    assert "about 65 characters" in text


def test_baseline_reading_when_a_phrasing_reaches_the_chapter():
    qs = queries(32)
    # Course wording always first, ticket wording never found: the ticket half's R@1 is 0.
    ranks = [1 if q.phrasing == "course" else None for q in qs]
    text = nb03.baseline_reading(ranks, qs, 912, judged_baseline(ranks, qs))
    assert "The phrasing comes close: on ticket-style queries" in text
    assert "course-style" not in text.split("comes close")[1].split("lies inside")[0]


def test_overlap_reading_counts_the_cut_rescues_and_reads_the_interval():
    ranks = {
        "B": {"embedded": [1, 1] * 16, "quoted": [None, None] * 3 + [1, 1] * 13},
        "D": {"embedded": [1, 1] * 16, "quoted": [1, 1] * 16},
    }
    clusters = [f"q{i}" for i in range(16) for _ in (0, 1)]
    rescued = {"B": ["q0", "q1", "q2"], "D": []}
    judged = {e.claim: e for e in overlap.quoted_entries(ranks, rescued, clusters, 16)}
    destroyed = Destroyed({"A": ("q0", "q1", "q2", "q9"), "B": ("q9",), "C": (), "D": ()}, 16)
    text = nb03.overlap_reading(rescued, judged, 16, destroyed)
    assert "3 of 16 needles lie whole in B's embedded text only" in text
    assert "every needle B keeps whole where A's cuts destroy it" in text
    assert "D hold no needle whole in the overlap alone" in text
    assert "B-rescues-whole: *contradicted*" in text and "D-rescues-whole: *reproduces*" in text
    # Without the full list of A's rescues, the count of what B keeps is given instead.
    other = Destroyed({"A": ("q0", "q1", "q2", "q8"), "B": (), "C": (), "D": ()}, 16)
    assert "(4 needles B keeps whole where A's cuts destroy them)" in nb03.overlap_reading(
        rescued, judged, 16, other
    )


def test_pull_reading_says_when_the_mechanism_is_not_shown():
    docs = ["x", "x", "y", "y", "z", "z"]
    up = overlap.Pull("B", docs, np.full(6, 0.6) + np.arange(6) * 0.01, np.full(6, 0.5))
    flat = overlap.Pull("D", docs, np.array([0.5, 0.6, 0.4, 0.5, 0.6, 0.4]), np.full(6, 0.5))
    judged = {e.claim: e for e in overlap.pull_entries([up, flat])}
    text = nb03.pull_reading([up, flat], judged)
    assert "B vs A +0.125" in text and "(*reproduces*)" in text
    assert "D vs C" in text and "(*contradicted*)" in text
    assert text.endswith("the mechanism is not shown for D.")
    both = nb03.pull_reading([up], {"B-overlap-pulls": judged["B-overlap-pulls"]})
    assert "Every interval lies above zero" in both


def test_tables_fit_and_format():
    ranks = {"B": {"embedded": [1, 2, None, 3], "quoted": [1, None, None, 3]}}
    table = nb03.quoted_table(ranks).frame
    assert list(table.index.unique()) == ["B"] and table["k"].tolist() == [1, 5, 20]
    assert table["R@k quoted"].tolist() == ["0.250", "0.500", "0.500"]
    docs = ["x", "x", "y", "y"]
    pull = overlap.Pull("F", docs, np.array([0.7, 0.7, 0.8, 0.6]), np.full(4, 0.5))
    frame = nb03.pull_table([pull]).frame
    assert frame.loc["F vs E", "cos with"] == "0.700" and frame.loc["F vs E", "chunks"] == 4
