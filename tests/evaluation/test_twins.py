from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta

from rag_lab.evaluation import chapter, twins
from rag_lab.evaluation.twins import Twins
from rag_lab.stats import clopper_pearson_upper

# --- a twin never keeps a chunk that holds its needle ----------------------------------------


@st.composite
def matrices(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 6))
    rows = draw(
        st.lists(
            st.lists(st.floats(0.0, 2.0, allow_nan=False), min_size=n, max_size=n),
            min_size=m,
            max_size=m,
        )
    )
    relevant = [draw(st.sets(st.integers(0, n - 1), max_size=n)) for _ in range(m)]
    return np.array(rows), relevant


@settings(max_examples=200, deadline=None)
@given(matrices(), st.one_of(st.none(), st.floats(0.0, 2.5)))
def test_a_twin_never_keeps_a_chunk_that_holds_its_needle(data, cutoff):
    answerable, relevant = data
    nearest = twins.twin_nearest(answerable, relevant)
    for row, rel, near in zip(answerable, relevant, nearest, strict=True):
        kept = twins.twin_kept(row, rel, cutoff)
        assert not rel.intersection(kept.positions)
        # the gate sees the nearest remaining chunk: the index without the needle's columns
        rest = np.delete(row, sorted(rel))
        assert near == (rest.min() if rest.size else np.inf)
        assert kept.refused == (cutoff is not None and not near < cutoff) or not rest.size
        assert list(kept.distances) == [float(row[p]) for p in kept.positions]


def test_a_twin_by_hand():
    # chunk 0 holds the needle (0.20); the nearest chunk left is 2 at 0.35
    row = np.array([0.20, 0.50, 0.35, 0.80])
    assert twins.twin_nearest(row[None, :], [{0}]).tolist() == [0.35]
    assert twins.twin_kept(row, {0}, 0.40).positions == (2,)
    assert twins.twin_kept(row, {0}, 0.35).refused  # strictly under the cutoff is kept
    assert twins.twin_kept(row, {0}, None).positions == (2, 1, 3)


# --- the split and the choice ----------------------------------------------------------------


def _twins(rng, questions=20):
    clusters = [f"q{i:02d}" for i in range(questions)] * 2
    queries = [f"{c}/{p}" for p in ("course", "ticket") for c in clusters[:questions]]
    return Twins(
        rng.uniform(0.2, 0.7, 2 * questions),
        rng.uniform(0.25, 0.8, 2 * questions),
        (1,) * (2 * questions),
        tuple(queries),
        tuple(clusters),
    )


def test_the_split_keeps_the_phrasings_of_a_question_together_and_is_seeded():
    clusters = [f"q{i}" for i in range(7)] * 2
    choose, score = twins.split_questions(clusters, seed=3)
    assert not choose & score and choose | score == set(clusters)
    assert (len(choose), len(score)) == (3, 4)
    assert twins.split_questions(clusters, seed=3) == (choose, score)
    assert twins.split_questions(list(reversed(clusters)), seed=3) == (choose, score)
    with pytest.raises(ValueError, match="at least 2 questions"):
        twins.split_questions(["q1", "q1"])


def test_choose_cutoff_by_hand():
    # four questions, one phrasing each; twins at 0.40, 0.50, 0.60, 0.70
    t = Twins(
        np.zeros(4), np.array([0.40, 0.50, 0.60, 0.70]), (1,) * 4, tuple("abcd"), tuple("abcd")
    )
    cuts = [None, 0.40, 0.45, 0.50, 0.55, 0.65, 0.75]
    assert twins.choose_cutoff(t, 0.25, cuts) == (0.50, True)  # 0.50 lets 1 of 4 through
    assert twins.choose_cutoff(t, 0.0, cuts) == (0.40, True)
    assert twins.choose_cutoff(
        Twins(*(np.zeros(4),) * 2, (1,) * 4, tuple("abcd"), tuple("abcd")), 0.1, cuts
    ) == (0.40, False)
    # a question bluffs when either phrasing's twin passes
    two = Twins(np.zeros(2), np.array([0.3, 0.9]), (1, 1), ("a/c", "a/t"), ("a", "a"))
    assert twins.questions_bluffed(two, 0.5) == {"a": True}


def test_the_half_used_to_choose_is_never_scored():
    rng = np.random.default_rng(1)
    t = _twins(rng)
    base = twins.calibrate(t)
    chosen = set(base.chosen_on)
    scored = set(t.clusters) - chosen
    assert {q.split("/")[0] for q in base.held_out.refused} <= scored
    assert base.held_out.questions == len(scored) == base.chapter.questions
    on_scored = np.array([c in scored for c in t.clusters])
    for seed in range(5):  # any data on the scored half: the same cutoff
        other = np.random.default_rng(100 + seed)
        moved = Twins(
            np.where(on_scored, other.uniform(0, 1, t.nearest.size), t.nearest),
            np.where(on_scored, other.uniform(0, 1, t.twin.size), t.twin),
            t.removed,
            t.queries,
            t.clusters,
        )
        again = twins.calibrate(moved)
        assert (again.cutoff, again.chosen_on) == (base.cutoff, base.chosen_on)
    # while the choosing half's data does move it
    far = Twins(t.nearest, np.where(on_scored, t.twin, 5.0), t.removed, t.queries, t.clusters)
    assert twins.calibrate(far).cutoff > base.cutoff


def test_score_counts_questions_and_refusals():
    t = Twins(
        np.array([0.3, 0.6, 0.5, 0.2]),
        np.array([0.4, 0.7, 0.8, 0.9]),
        (1, 1, 1, 1),
        ("a/c", "a/t", "b/c", "b/t"),
        ("a", "a", "b", "b"),
    )
    h = twins.score(t, 0.55)
    assert (h.bluffed, h.questions, h.refused) == (1, 2, ("a/t",))
    assert h.upper == pytest.approx(beta.ppf(0.95, 2, 1))


# --- the exact upper bound ------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 16, 32, 100, 472, 3000])
def test_the_upper_bound_is_scipys_beta_quantile(n):
    for k in sorted({0, 1, n // 3, n // 2, n - 1} - {n}):
        for level in (0.9, 0.95, 0.99):
            assert clopper_pearson_upper(k, n, level) == pytest.approx(
                beta.ppf(level, k + 1, n - k), abs=1e-9
            )
    assert clopper_pearson_upper(n, n) == 1.0


def test_the_upper_bound_refuses_bad_input():
    for k, n, level in ((0, 0, 0.95), (3, 2, 0.95), (-1, 2, 0.95), (1, 2, 1.0)):
        with pytest.raises(ValueError):
            clopper_pearson_upper(k, n, level)


def test_the_entry_judges_the_chapters_cutoff_against_the_target():
    rng = np.random.default_rng(2)
    c = twins.calibrate(_twins(rng))
    (entry,) = twins.entries(c)
    assert entry.claim == "0.675-uncalibrated"
    assert (entry.verdict.value == "reproduces") == (c.chapter.rate > c.target)
    assert entry.estimate == c.chapter.rate
    # the target is the run's: the metric names it, the claims file does not
    assert entry.metric.endswith(f"against a {c.target:.0%} target")
    assert c.chapter.cutoff == chapter.CUTOFF
