"""How many answers blind cuts destroy, from the needles' lengths alone.

A blind cut falls every ``size`` characters, looking at nothing, so where a needle of ``L``
characters sits relative to the cuts is as good as uniform. A cut lands strictly inside it
with probability ``(L − 1) / size``. An overlap of ``o`` characters starts the next chunk's
embedded text ``o`` characters before the cut, so a needle the cut splits is still held whole
by the next chunk when it begins at most ``o`` characters before the cut: of the ``L − 1``
places a cut can split it, ``o`` are rescued. Hence

    P(destroyed) = max(0, L − 1 − o) / size          (L ≤ size + 1)

and the general statement: **an overlap of o characters protects exactly the needles of at
most o + 1 characters**; a longer one it protects only with probability ``o / (L − 1)``.
The expected count over a question set is the sum of these probabilities; the count is a sum
of independent Bernoulli trials (a Poisson binomial), whose central 95 % range says whether an
observed count is what the geometry predicts.

>>> round(destroy_probability(131, 512), 4), round(destroy_probability(131, 512, 64), 4)
(0.2539, 0.1289)
>>> destroy_probability(65, 512, 64)
0.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from rag_lab.chunking import OVERLAP, TARGET


def destroy_probability(length: int, size: int = TARGET, overlap: int = 0) -> float:
    """The chance a blind cut every ``size`` characters destroys a needle of ``length``
    characters, with ``overlap`` characters of the previous chunk before each chunk."""
    if length < 1 or size < 1 or overlap < 0:
        raise ValueError(f"need length ≥ 1, size ≥ 1, overlap ≥ 0; got {length}, {size}, {overlap}")
    return min(1.0, max(0, length - 1 - overlap) / size)


def protected_length(overlap: int = OVERLAP) -> int:
    """The longest needle an overlap of ``overlap`` characters always keeps whole."""
    return overlap + 1


@dataclass(frozen=True)
class Expected:
    """Destroyed needles predicted by the geometry, against those counted."""

    expected: float
    low: int
    high: int
    """The central 95 % range of the count (Poisson binomial)."""
    observed: int
    n: int
    overlap: int

    @property
    def agrees(self) -> bool:
        return self.low <= self.observed <= self.high

    def __str__(self) -> str:
        return (
            f"{self.observed} of {self.n} observed, {self.expected:.1f} expected "
            f"(95 % range {self.low}–{self.high})"
        )


def expected_destroyed(
    lengths: Sequence[int], observed: int, size: int = TARGET, overlap: int = 0
) -> Expected:
    """The geometry's prediction for needles of ``lengths`` beside the ``observed`` count."""
    p = np.array([destroy_probability(int(n), size, overlap) for n in lengths])
    low, high = poisson_binomial_range(p)
    return Expected(float(p.sum()), low, high, observed, len(p), overlap)


def poisson_binomial_range(p: np.ndarray, level: float = 0.95) -> tuple[int, int]:
    """The central ``level`` range of a sum of independent Bernoulli(p_i): the smallest
    count with cumulative probability above (1 − level)/2 and the smallest with cumulative
    probability at least (1 + level)/2, from the exact distribution (convolution).

    >>> poisson_binomial_range(np.full(10, 0.5))
    (2, 8)
    """
    dist = np.array([1.0])
    for pi in np.asarray(p, dtype=np.float64):
        dist = np.convolve(dist, [1.0 - pi, pi])
    cdf = np.cumsum(dist)
    tail = (1.0 - level) / 2
    low = int(np.searchsorted(cdf, tail, side="right"))
    high = int(np.searchsorted(cdf, 1.0 - tail - 1e-12, side="left"))
    return low, high


def implied_length(destroyed: float, n: int, size: int = TARGET, overlap: int = 0) -> float:
    """The needle length (the same for all ``n``) at which the geometry expects
    ``destroyed`` of them destroyed: ``1 + overlap + size · destroyed / n``. The chapter's 4
    of 32 under blind cuts implies needles of about 65 characters."""
    return 1 + overlap + size * destroyed / n


def expected_table(lengths: Sequence[int], destroyed: Mapping[str, int]) -> pd.DataFrame:
    """A (no overlap) and B (:data:`~rag_lab.chunking.OVERLAP`): the counts in ``destroyed``
    beside :func:`expected_destroyed` from the needles' ``lengths``, and whether each agrees."""
    rows = {}
    for s, overlap in {"A": 0, "B": OVERLAP}.items():
        e = expected_destroyed(lengths, destroyed[s], overlap=overlap)
        rows[s] = asdict(e) | {"agrees": e.agrees}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("strategy")


def entries(
    lengths: Sequence[int],
    destroyed: dict[str, int],
    notebook: str,
    benchmark: str,
    size: int = TARGET,
    overlap: int = OVERLAP,
) -> list:
    """The geometry as claims: A's and B's counts against their predicted 95 % ranges (a
    count reproduces the geometry when it lies in the range), and the general statement,
    true by the geometry, with how many needles here are longer than it protects."""
    from rag_lab.claims.verdicts import Verdict
    from rag_lab.evaluation import chapter
    from rag_lab.evaluation.ledger import count_entry, fixed_entry

    at = {"notebook": notebook, "benchmark": benchmark}
    blind = expected_destroyed(lengths, destroyed["A"], size, 0)
    kept = expected_destroyed(lengths, destroyed["B"], size, overlap)
    protected = protected_length(overlap)
    longer = sum(int(n) > protected for n in lengths)
    implied = implied_length(chapter.DESTROYED_BY_BLIND, chapter.CORPUS["questions"], size)
    return [
        count_entry(
            "geometry-A", **at, holds=blind.agrees, here=str(blind), estimate=blind.observed
        ),
        count_entry("geometry-B", **at, holds=kept.agrees, here=str(kept), estimate=kept.observed),
        fixed_entry(
            "overlap-protects-short",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            reason=f"P(destroyed) = max(0, L − 1 − {overlap})/{size}; the chapter's "
            f"{chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']} under blind cuts "
            f"implies needles of about {implied:.0f} characters",
            here=f"{longer} of {len(lengths)} longer than {protected}, median "
            f"{float(np.median(lengths)):.0f} chars",
        ),
    ]
