"""Uncertainty for small query sets: Wilson intervals and the paired exact sign test.

With 64 queries a Recall@k of 0.59 is known only to about ±0.12, and two
systems are best compared on the same queries: only the queries where exactly
one of them hits carry information about which is better (McNemar's design,
tested exactly). Both functions are exact or closed-form; nothing is simulated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np

ALPHA = 0.05
"""The significance level every reading in the lab uses."""


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(lo, hi)`` for ``k`` successes in ``n`` trials.

    Wilson (1927), *Probable inference, the law of succession, and statistical
    inference*, JASA 22. With ``p = k/n`` and ``z`` the normal quantile for a
    two-sided ``level``::

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z / (1 + z²/n) * sqrt(p(1 - p)/n + z²/4n²)

    Unlike the normal (Wald) interval it stays inside [0, 1] and does not
    collapse to a point at k = 0 or k = n; there the closed end is exactly 0 or 1.
    Requires ``n >= 1``, ``0 <= k <= n`` and ``0 < level < 1``.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = k / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    # At the boundaries centre - half (or + half) is 0 (or 1) only up to rounding.
    lo = 0.0 if k == 0 else centre - half
    hi = 1.0 if k == n else centre + half
    return lo, hi


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test p-value for ``wins`` against ``losses`` (ties dropped).

    Under H0 each discordant pair goes either way with probability 1/2, so with
    ``X ~ Bin(wins + losses, 1/2)``: ``p = min(1, 2 P(X <= min(wins, losses)))``.
    Computed as an exact fraction and rounded once. No discordant pairs gives 1.0.
    """
    if wins < 0 or losses < 0:
        raise ValueError(f"counts must be >= 0, got wins={wins}, losses={losses}")
    n = wins + losses
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1))
    return min(1.0, float(Fraction(2 * tail, 2**n)))


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

    @property
    def significant_win(self) -> bool:
        """A wins more often than it loses, and the sign test says so at :data:`ALPHA`."""
        return self.wins > self.losses and self.p < ALPHA

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
