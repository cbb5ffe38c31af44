"""Uncertainty for small query sets: intervals, paired exact sign tests, Holm's correction.

With 64 queries a Recall@k of 0.59 is known only to about ±0.12, and two systems are
best compared on the same queries: only the queries where exactly one of them hits carry
information about which is better (McNemar's design, tested exactly).

The chapter treats its 64 queries as 64 independent trials, and :func:`wilson` with
:func:`paired` reproduce that. But they are 32 questions asked twice: two phrasings of
one question succeed or fail together more often than two questions do. The
question-level counterparts take the *question* as the unit, whatever its number of
phrasings (a question file may give each question one, two, three or more):

- :func:`clustered_wilson`: a rate's interval with the questions as the sample;
- :func:`paired_difference`: the difference of two systems by question, with its interval;
- :func:`cluster_paired`: the sign test over questions, each scored by its number of
  hits (0, 1 or 2 for two phrasings), counting the questions where one system's count is higher.

Their coverage is checked by simulation (``tests/test_stats_coverage.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
"""The significance level every reading in the lab uses."""


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(lo, hi)`` for ``k`` successes in ``n`` trials.

    Wilson (1927), *Probable inference, the law of succession, and statistical
    inference*, JASA 22; statsmodels' ``proportion_confint(method="wilson")``, with the
    closed end exactly 0 or 1 at k = 0 or k = n.

    >>> [round(x, 3) for x in wilson(38, 64)]   # the chapter's A at R@20
    [0.471, 0.705]
    """
    _check_count(k, n, level)
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    # At the boundaries the library's end is 0 (or 1) only up to rounding.
    return (0.0 if k == 0 else float(lo)), (1.0 if k == n else float(hi))


def clopper_pearson_upper(k: int, n: int, level: float = 0.95) -> float:
    """The exact one-sided upper confidence bound for a rate, ``k`` successes in ``n`` trials.

    Clopper & Pearson (1934), *Biometrika* 26: the largest ``p`` under which seeing ``k`` or
    fewer successes still has probability at least ``1 − level``; the ``level`` quantile of
    Beta(k + 1, n − k) (scipy). At ``k = n`` the bound is 1.

    >>> round(clopper_pearson_upper(0, 16), 4)   # the rule of three: about 3/n
    0.1707
    """
    _check_count(k, n, level)
    if k == n:
        return 1.0
    from scipy.stats import beta

    return float(beta.ppf(level, k + 1, n - k))


def _check_count(k: int, n: int, level: float) -> None:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test p-value for ``wins`` against ``losses`` (ties dropped):
    scipy's ``binomtest(wins, wins + losses, 0.5)``. No discordant pairs gives 1.0.

    >>> round(sign_test(18, 3), 4)   # the chapter's E against A at R@20
    0.0015
    """
    if wins < 0 or losses < 0:
        raise ValueError(f"counts must be >= 0, got wins={wins}, losses={losses}")
    if wins + losses == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(wins, wins + losses, 0.5).pvalue)


@dataclass(frozen=True)
class Paired:
    """System A against system B on the same queries at one cutoff.

    ``wins``: A hits and B misses; ``losses``: A misses and B hits; ``ties``:
    both hit or both miss. ``p`` is the sign test on wins against losses.
    """

    wins: int
    losses: int
    ties: int

    @property
    def p(self) -> float:
        return sign_test(self.wins, self.losses)

    def __str__(self) -> str:
        return f"+{self.wins}/\N{MINUS SIGN}{self.losses}, p = {self.p:#.2g}"


def paired(hits_a: Sequence[bool], hits_b: Sequence[bool]) -> Paired:
    """Count wins, losses and ties of A over B from per-query hits (same query order)."""
    a = np.asarray(hits_a, dtype=bool)
    b = np.asarray(hits_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two 1-D hit vectors of equal length, got {a.shape} and {b.shape}")
    wins = int((a & ~b).sum())
    losses = int((~a & b).sum())
    return Paired(wins=wins, losses=losses, ties=len(a) - wins - losses)


BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def cluster_bootstrap(
    hits: Sequence[bool],
    clusters: Sequence[Hashable],
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile interval of the hit rate, resampling whole clusters with replacement.

    Kept for comparison, not used by the lab's tables: over 32 clusters it under-covers near
    0 and 1, where few clusters vary (0.87 where :func:`clustered_wilson` keeps 0.95,
    ``tests/test_stats_coverage.py``).

    Field & Welsh (2007), *Bootstrapping clustered data*, JRSS B 69(3): as many clusters
    drawn with replacement, the rate recomputed over them; numpy's PCG64 with ``seed``.

    >>> cluster_bootstrap([True, True, False, False], ["q1", "q1", "q2", "q2"])
    (0.0, 1.0)
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    per_hits, per_size = _sums(np.asarray(hits, dtype=bool).astype(np.float64), clusters)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(per_hits), size=(resamples, len(per_hits)))
    rates = per_hits[draws].sum(axis=1) / per_size[draws].sum(axis=1)
    lo, hi = np.quantile(rates, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def bootstrap_mean(
    values: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile interval of the mean of independent ``values`` (one per question).

    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13: draw ``len(values)``
    values with replacement ``resamples`` times; the interval is the ``(1 - level)/2`` and
    ``(1 + level)/2`` quantiles of the means. Seeded like :func:`cluster_bootstrap`.

    >>> bootstrap_mean([0.5, 0.5, 0.5])
    (0.5, 0.5)
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or len(v) == 0:
        raise ValueError(f"need a non-empty list of values, got shape {v.shape}")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def bootstrap_interaction(
    first: Sequence[float],
    second: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """A difference of two means over independent groups of questions, with its percentile
    interval: ``mean(first) − mean(second)``, each group resampled on its own.

    For an interaction: ``first`` holds one paired difference per question of one kind
    (BM25's hits minus dense's on identifier questions), ``second`` the same on the other
    kind; the estimate is how much larger the gap is on the first. Seeded like
    :func:`cluster_bootstrap`; returns ``(estimate, lo, hi)``.

    >>> bootstrap_interaction([1.0, 1.0], [0.0, 0.0])
    (1.0, 1.0, 1.0)
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    a, b = (np.asarray(v, dtype=np.float64) for v in (first, second))
    if a.ndim != 1 or b.ndim != 1 or not len(a) or not len(b):
        raise ValueError(f"need two non-empty lists of values, got {a.shape}, {b.shape}")
    rng = np.random.default_rng(seed)
    da = a[rng.integers(0, len(a), size=(resamples, len(a)))].mean(axis=1)
    db = b[rng.integers(0, len(b), size=(resamples, len(b)))].mean(axis=1)
    lo, hi = np.quantile(da - db, [(1 - level) / 2, (1 + level) / 2])
    return float(a.mean() - b.mean()), float(lo), float(hi)


def per_question(values: Sequence[float], clusters: Sequence[Hashable]) -> np.ndarray:
    """The mean of ``values`` within each cluster (a question's phrasings), in order of first
    appearance."""
    sums, sizes = _sums(np.asarray(values, dtype=np.float64), clusters)
    return sums / sizes


def cluster_paired(
    hits_a: Sequence[bool], hits_b: Sequence[bool], clusters: Sequence[Hashable]
) -> Paired:
    """A against B over clusters: a win is a cluster where A has more hits than B.

    Each cluster (a question) is scored by its number of hits under each system; clusters
    with equal counts are ties. The exact sign test then runs over the clusters whose
    counts differ, one independent trial per question.

    >>> r = cluster_paired([1, 1, 0, 1], [0, 0, 0, 1], ["q1", "q1", "q2", "q2"])
    >>> (r.wins, r.losses, r.ties)
    (1, 0, 1)
    """
    a, _ = _sums(np.asarray(hits_a, dtype=bool).astype(np.float64), clusters)
    b, _ = _sums(np.asarray(hits_b, dtype=bool).astype(np.float64), clusters)
    if len(hits_a) != len(hits_b):
        raise ValueError(f"need equal lengths, got {len(hits_a)} and {len(hits_b)}")
    wins, losses = int((a > b).sum()), int((a < b).sum())
    return Paired(wins=wins, losses=losses, ties=len(a) - wins - losses)


def cluster_paired_values(
    values_a: Sequence[float], values_b: Sequence[float], clusters: Sequence[Hashable]
) -> Paired:
    """:func:`cluster_paired` for real values per query (a reciprocal rank): a win is a
    question whose values sum higher under A than under B.

    >>> r = cluster_paired_values([1.0, 0.5, 0.2], [0.5, 0.5, 0.2], ["q1", "q1", "q2"])
    >>> (r.wins, r.losses, r.ties)
    (1, 0, 1)
    """
    if len(values_a) != len(values_b):
        raise ValueError(f"need equal lengths, got {len(values_a)} and {len(values_b)}")
    a, _ = _sums(np.asarray(values_a, dtype=np.float64), clusters)
    b, _ = _sums(np.asarray(values_b, dtype=np.float64), clusters)
    # A reciprocal rank is exact in binary only for powers of two: compare at 12 digits.
    diff = np.round(a - b, 12)
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    return Paired(wins=wins, losses=losses, ties=len(a) - wins - losses)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values for a family of tests, in the input order.

    Holm (1979), *A simple sequentially rejective multiple test procedure*, Scand. J.
    Statist. 6(2); statsmodels' ``multipletests(method="holm")``. Rejecting where the
    adjusted p is under α controls the family-wise error rate at α.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or ((p < 0) | (p > 1)).any():
        raise ValueError("p-values must be a 1-D sequence in [0, 1]")
    if len(p) == 0:
        return []
    from statsmodels.stats.multitest import multipletests

    adjusted = multipletests(p, method="holm")[1]
    # 15 significant digits: clean decimals (0.03, not 0.030000000000000002), and tiny p-values
    # kept (rounding to 15 decimals would print 1e-24 as 0.0).
    return [float(f"{v:.15g}") for v in adjusted]


# --- intervals that fit a clustered design ---------------------------------------------------


def clustered_wilson(
    hits: Sequence[bool], clusters: Sequence[Hashable], level: float = 0.95
) -> tuple[float, float]:
    """Wilson's interval for a hit rate over clustered queries, the clusters as the sample.

    The rate is the share of all queries hit; the sample size is the number of clusters
    (questions), as if each question's phrasings always succeeded or failed together: the
    design effect at its largest (Kish 1965, §8.2, with intra-class correlation 1).
    Estimating the design effect instead under-covers near 0 and 1, where few questions
    differ; this bound keeps 95 % coverage there and costs width only when phrasings are
    nearly independent (both checked by simulation in ``tests/test_stats_coverage.py``).
    With one query per cluster it is Wilson's interval.

    >>> lo, hi = clustered_wilson([1, 1, 0, 0] * 4, [f"q{i // 2}" for i in range(16)])
    >>> round(lo, 3), round(hi, 3)   # Wilson on 16 independent queries: [0.280, 0.720]
    (0.215, 0.785)
    """
    h = np.asarray(hits, dtype=bool)
    sums, _ = _sums(h.astype(np.float64), clusters)
    return _wilson_real(float(h.mean()), float(len(sums)), level)


@dataclass(frozen=True)
class Difference:
    """A paired difference in hit rate, ``a`` minus ``b``, by question, with its interval.

    ``estimate`` is the mean over questions of each question's difference (its queries hit
    by a, minus by b, over its queries: the difference in recall when every question has
    as many phrasings); ``lo``, ``hi`` bound it at ``level``; ``se`` is the standard error
    the interval uses, over ``clusters`` questions; ``centre`` is the mean the interval is
    centred on (the questions with the two pseudo-questions). :attr:`p` is the t test this
    interval inverts, so the interval at ``1 − α`` excludes 0 exactly when ``p < α``.
    """

    estimate: float
    lo: float
    hi: float
    se: float
    queries: int
    clusters: int
    level: float = 0.95
    centre: float = 0.0

    @property
    def df(self) -> int:
        return self.clusters + 1  # the questions and the two pseudo-questions, minus one

    @property
    def p(self) -> float:
        """The two-sided t test of no difference that the interval inverts."""
        from scipy import stats

        return float(2 * stats.t.sf(abs(self.centre) / self.se, self.df))

    def at(self, level: float) -> Difference:
        """The same difference with its interval at ``level`` (e.g. ``1 − α/m`` for a
        Bonferroni family of ``m``)."""
        from scipy import stats

        half = float(stats.t.ppf(0.5 + level / 2, self.df)) * self.se
        lo, hi = max(-1.0, self.centre - half), min(1.0, self.centre + half)
        return dataclasses.replace(self, lo=lo, hi=hi, level=level)

    def excludes(self, value: float) -> bool:
        return not self.lo <= value <= self.hi

    def within(self, margin: float) -> bool:
        """The whole interval inside ``[-margin, +margin]``."""
        return -margin <= self.lo and self.hi <= margin

    def detectable(self, alpha: float = ALPHA, power: float = 0.8) -> float:
        """The smallest true difference a two-sided t-test over the questions at ``alpha``
        would detect with ``power`` on this design: ``(t(1 − α/2) + t(power)) · se``, with
        the standard error observed here (Cohen 1988, ch. 2, for a paired mean)."""
        from scipy import stats

        return float((stats.t.ppf(1 - alpha / 2, self.df) + stats.t.ppf(power, self.df)) * self.se)

    def __str__(self) -> str:
        return f"{self.estimate:+.3f} [{self.lo:+.3f}, {self.hi:+.3f}]"


def paired_difference(
    hits_a: Sequence[bool],
    hits_b: Sequence[bool],
    clusters: Sequence[Hashable],
    level: float = 0.95,
) -> Difference:
    """The difference in hit rate of ``a`` over ``b`` on the same queries, by question.

    Each question contributes one difference (its queries hit by a minus by b, over its
    queries), so the questions are the independent units. The interval is Student's t over
    those differences after adding two pseudo-questions, one won and one lost by a single
    query: the clustered analogue of Agresti & Min's (2005, *Simple improved confidence
    intervals for comparing matched proportions*, Stat. Med. 24) half a pair in each cell,
    which keeps the interval from collapsing to a point when few questions differ. Its
    coverage on clustered binary data with a known difference is checked by simulation in
    ``tests/test_stats_coverage.py`` (at least 0.94 in every scenario; more near 0 and 1).

    >>> d = paired_difference([1, 1, 1, 0] * 4, [0, 0, 1, 0] * 4, [f"q{i // 2}" for i in range(16)])
    >>> str(d), d.clusters
    ('+0.500 [-0.006, +0.806]', 8)
    """
    a = np.asarray(hits_a, dtype=bool)
    b = np.asarray(hits_b, dtype=bool)
    return paired_mean_difference(a, b, clusters, level)


def paired_mean_difference(
    values_a: Sequence[float],
    values_b: Sequence[float],
    clusters: Sequence[Hashable],
    level: float = 0.95,
) -> Difference:
    """:func:`paired_difference` for values in [0, 1] per query (a reciprocal rank, say):
    the mean over questions of each question's mean difference, with the same interval and
    the same two pseudo-questions of one query's worth. On hits it is
    :func:`paired_difference`.

    >>> str(paired_mean_difference([1.0, 0.5], [0.5, 0.5], ["q1", "q2"]))
    '+0.250 [-1.000, +1.000]'
    """
    from scipy import stats

    a = np.asarray(values_a, dtype=np.float64)
    b = np.asarray(values_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError(f"need two 1-D hit vectors of equal length, got {a.shape}, {b.shape}")
    sums, sizes = _sums(a - b, clusters)
    per_question = sums / sizes
    one_query = 1 / float(np.mean(sizes))  # a single query's worth of a question
    padded = np.concatenate([per_question, [one_query, -one_query]])
    n = len(padded)
    se = float(padded.std(ddof=1) / np.sqrt(n))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * se
    centre = float(padded.mean())
    lo, hi = max(-1.0, centre - half), min(1.0, centre + half)
    return Difference(float(per_question.mean()), lo, hi, se, len(a), len(sums), level, centre)


def _sums(values: np.ndarray, clusters: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    if len(values) != len(clusters) or values.ndim != 1 or len(values) == 0:
        raise ValueError(
            f"need one cluster per value, got {len(values)} values, {len(clusters)} clusters"
        )
    ids = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    index = np.array([ids[c] for c in clusters])
    return (
        np.bincount(index, weights=values, minlength=len(ids)),
        np.bincount(index, minlength=len(ids)).astype(np.float64),
    )


def wilson_share(p: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson's interval for a share ``p`` observed on an (effective) sample of size ``n``:
    :func:`clustered_wilson` from counts, with ``n`` the number of clusters.

    >>> wilson_share(0.5, 16) == clustered_wilson([1, 1, 0, 0] * 8, [i // 2 for i in range(32)])
    True
    """
    return _wilson_real(p, float(n), level)


def _wilson_real(p: float, n: float, level: float) -> tuple[float, float]:
    """:func:`wilson` for a real-valued ``n`` (an effective sample size): statsmodels'
    Wilson interval takes a real count ``p · n``."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(p * n, n, alpha=1 - level, method="wilson")
    lo = 0.0 if p == 0 else float(lo)
    hi = 1.0 if p == 1 else float(hi)
    return max(0.0, lo), min(1.0, hi)


def ratio_of_means(
    values_a: Sequence[float],
    values_b: Sequence[float],
    clusters: Sequence[Hashable],
    level: float = 0.95,
) -> tuple[float, tuple[float, float]]:
    """The ratio of a's mean to b's over the same queries, by question, with Fieller's
    interval (Fieller 1954, *Some problems in interval estimation*, JRSS B 16): the ``ρ``
    where ``mean(a) − ρ·mean(b)`` is within Student's t of 0, its variance from the
    questions' means and their covariance. When b's mean is not itself distinguishable from
    0 the set is unbounded, and reported as ``(0, inf)``, every ratio two shares can have.

    >>> est, (lo, hi) = ratio_of_means([1, 1, 0, 1, 1, 1], [1, 0, 0, 0, 1, 0], [0, 0, 1, 1, 2, 2])
    >>> round(est, 2), lo, hi
    (2.5, 0.0, inf)
    >>> est, (lo, hi) = ratio_of_means([1, 0] * 20, [1, 0, 0, 0] * 10, range(40))
    >>> round(est, 2), round(lo, 2), round(hi, 2)
    (2.0, 1.35, 3.88)
    """
    from scipy import stats

    sa, sizes = _sums(np.asarray(values_a, dtype=np.float64), clusters)
    sb, _ = _sums(np.asarray(values_b, dtype=np.float64), clusters)
    a, b = sa / sizes, sb / sizes
    n, ma, mb = len(a), a.mean(), b.mean()
    estimate = float(ma / mb) if mb else float("inf")
    if n < 2:  # one question: no variance, no interval
        return estimate, (0.0, float("inf"))
    (vaa, vab), (_, vbb) = np.cov(a, b, ddof=1) / n
    t2 = float(stats.t.ppf(0.5 + level / 2, n - 1)) ** 2
    qa, qb, qc = mb**2 - t2 * vbb, -2 * (ma * mb - t2 * vab), ma**2 - t2 * vaa
    disc = qb**2 - 4 * qa * qc
    if qa <= 0:  # the set is unbounded: reported as all ratios a share can take
        return estimate, (0.0, float("inf"))
    root = np.sqrt(disc)
    return estimate, (float((-qb - root) / (2 * qa)), float((-qb + root) / (2 * qa)))
