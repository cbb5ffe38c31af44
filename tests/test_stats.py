"""stats: Wilson intervals and the exact sign test, by hand and by property."""

from __future__ import annotations

from statistics import NormalDist

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_lab.stats import Paired, cluster_bootstrap, cluster_paired, holm, paired, sign_test, wilson

Z95 = NormalDist().inv_cdf(0.975)  # 1.959964...


def test_wilson_at_k_zero():
    # p = 0: centre = half = (z²/2n) / (1 + z²/n), so lo = 0 and hi = z² / (n + z²).
    lo, hi = wilson(0, 10)
    assert lo == 0.0
    assert hi == pytest.approx(Z95**2 / (10 + Z95**2), rel=1e-14)
    assert hi == pytest.approx(0.2775, abs=5e-5)


def test_wilson_at_k_equals_n():
    lo, hi = wilson(10, 10)
    assert hi == 1.0
    assert lo == pytest.approx(10 / (10 + Z95**2), rel=1e-14)


def test_wilson_in_the_middle():
    # k = n/2: centre = 1/2 exactly, half = z / (1 + z²/n) * sqrt(1/4n + z²/4n²).
    n = 64
    half = Z95 / (1 + Z95**2 / n) * (1 / (4 * n) + Z95**2 / (4 * n**2)) ** 0.5
    assert wilson(32, n) == pytest.approx((0.5 - half, 0.5 + half), rel=1e-14)


def test_wilson_level():
    assert wilson(5, 10, 0.99)[0] < wilson(5, 10, 0.95)[0] < wilson(5, 10, 0.5)[0]


@pytest.mark.parametrize(
    ("k", "n", "level", "message"),
    [
        (0, 0, 0.95, "n must be >= 1"),
        (11, 10, 0.95, "0 <= k <= n"),
        (-1, 10, 0.95, "0 <= k <= n"),
        (1, 10, 1.0, "level"),
        (1, 10, 0.0, "level"),
    ],
)
def test_wilson_bad_arguments(k, n, level, message):
    with pytest.raises(ValueError, match=message):
        wilson(k, n, level)


def test_sign_test_by_hand():
    assert sign_test(0, 0) == 1.0  # no discordant pair, no evidence
    assert sign_test(1, 0) == 1.0  # 2 * P(X <= 0) = 2 * 1/2
    assert sign_test(5, 0) == 0.0625  # 2 * 1/32
    assert sign_test(3, 3) == 1.0
    # n = 21: P(X <= 3) = (1 + 21 + 210 + 1330) / 2**21
    assert sign_test(18, 3) == 2 * 1562 / 2**21
    # n = 14: P(X <= 2) = (1 + 14 + 91) / 2**14
    assert sign_test(2, 12) == 2 * 106 / 2**14


def test_sign_test_bad_arguments():
    with pytest.raises(ValueError, match=">= 0"):
        sign_test(-1, 3)


def test_paired_counts():
    a = [True, True, False, False, True, False]
    b = [False, True, True, False, False, False]
    result = paired(a, b)
    assert (result.wins, result.losses, result.ties) == (2, 1, 3)
    assert result.p == sign_test(2, 1)
    assert str(result) == "+2/\N{MINUS SIGN}1, p = 1.0"


def test_paired_str_matches_the_chapter():
    assert str(Paired(wins=18, losses=3, ties=43)) == "+18/−3, p = 0.0015"
    assert str(Paired(wins=9, losses=7, ties=48)) == "+9/−7, p = 0.80"


def test_paired_length_mismatch():
    with pytest.raises(ValueError, match="equal length"):
        paired([True], [True, False])


counts = st.integers(0, 200)


@given(counts, counts)
def test_sign_test_symmetric_and_in_unit_interval(wins, losses):
    p = sign_test(wins, losses)
    assert p == sign_test(losses, wins)
    assert 0 < p <= 1


@given(counts, counts)
def test_sign_test_one_more_win_is_stronger_evidence(wins, losses):
    if wins >= losses:
        assert sign_test(wins + 1, losses) <= sign_test(wins, losses)


@given(
    st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.floats(0.5, 0.999),
)
def test_wilson_contains_the_estimate_inside_unit_interval(kn, level):
    k, n = kn
    lo, hi = wilson(k, n, level)
    assert 0 <= lo <= k / n <= hi <= 1
    assert lo < hi


def test_cluster_paired_counts_questions_not_queries():
    # q1: a 2 hits, b 0 (a win); q2: 1 and 1 (a tie, though the phrasings differ); q3: 0 and 1.
    clusters = ["q1", "q2", "q3", "q1", "q2", "q3"]
    a = [True, True, False, True, False, False]
    b = [False, False, True, False, True, False]
    r = cluster_paired(a, b, clusters)
    assert (r.wins, r.losses, r.ties) == (1, 1, 1)
    assert r.p == 1.0


def test_cluster_bootstrap_is_fixed_by_its_seed_and_brackets_the_rate():
    hits = [True] * 10 + [False] * 10
    clusters = [f"q{i % 10}" for i in range(20)]  # each question hit in one phrasing
    first = cluster_bootstrap(hits, clusters)
    assert first == cluster_bootstrap(hits, clusters)
    # Every question has exactly one hit in two: every resample has rate 1/2.
    assert first == (0.5, 0.5)
    lo, hi = cluster_bootstrap([True] * 6 + [False] * 14, [f"q{i}" for i in range(20)])
    assert lo < 0.3 < hi


def test_holm_by_hand():
    # Sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04 -> monotone 0.03, 0.06, 0.06.
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    with pytest.raises(ValueError):
        holm([1.5])
