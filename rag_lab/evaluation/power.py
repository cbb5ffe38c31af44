"""How many questions you need: what a paired question-level test of Recall@k can detect.

For two configurations scored on the same ``n`` questions, each question contributes one
difference ``d_i`` (its queries hit by a minus by b, over its queries), and the test is
Student's t over the ``n + 2`` differences with the two pseudo-questions of
:func:`rag_lab.stats.paired_difference`. With ``σ`` the standard deviation of those
differences, the smallest true difference it detects at two-sided ``α`` with power ``1 − β``
is (Cohen 1988, ch. 2, for a paired mean)::

    δ(n) = (t_{1−α/2, n+1} + t_{1−β, n+1}) · σ / √(n + 2)

which at the file's own ``n`` is :meth:`rag_lab.stats.Difference.detectable` of the
comparison measured. The questions needed for a stated ``δ`` are the smallest ``n`` with
``δ(n) ≤ δ``, ``σ`` held at what this design shows.

``σ`` is the design's, observed: for each k, the median over the chapter's comparisons
between chunkings (:data:`rag_lab.evaluation.chapter.STRATEGY_PAIRS`, real changes of
configuration measured on these questions) of ``se · √(n + 2)``. A change that moves fewer
questions has a smaller ``σ`` and is detected at a smaller δ; one that moves more, a larger.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rag_lab.evaluation.chapter import STRATEGY_PAIRS
from rag_lab.metrics import Ranks, hits_at
from rag_lab.stats import ALPHA, paired_difference

POWER = 0.8
TARGET = 0.05
"""The stated difference in Recall@k whose questions needed every report gives."""
MAX_QUESTIONS = 1_000_000


def detectable(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """``δ(n)`` of the module's formula: the smallest difference detected with ``power``.

    >>> round(detectable(0.3, 30), 3)   # (2.040 + 0.853) · 0.3 / √32
    0.153
    """
    from scipy import stats

    if n < 1:
        raise ValueError(f"need at least one question, got {n}")
    df = n + 1
    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * sd / math.sqrt(n + 2))


def questions_needed(
    sd: float, difference: float = TARGET, alpha: float = ALPHA, power: float = POWER
) -> int:
    """The smallest ``n`` with ``δ(n) ≤ difference`` (a bisection: ``δ`` falls with ``n``).

    >>> questions_needed(0.3, 0.1535)
    30
    """
    if difference <= 0:
        raise ValueError(f"the difference must be positive, got {difference}")
    if detectable(sd, 1, alpha, power) <= difference:
        return 1
    lo, hi = 1, 2
    while detectable(sd, hi, alpha, power) > difference:
        lo, hi = hi, hi * 2
        if hi > MAX_QUESTIONS:
            return MAX_QUESTIONS
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if detectable(sd, mid, alpha, power) > difference else (lo, mid)
    return hi


@dataclass(frozen=True)
class Power:
    """Per k: the design's σ, the difference it detects with 80 % power, the questions a
    stated difference needs."""

    questions: int
    target: float
    ks: tuple[int, ...]
    sd: tuple[float, ...]
    detectable: tuple[float, ...]
    needed: tuple[int, ...]
    pairs: tuple[tuple[str, str], ...]

    def view(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "σ per question": [round(s, 3) for s in self.sd],
                f"detectable at {self.questions} questions": [round(d, 3) for d in self.detectable],
                f"questions for ±{self.target:.2f}": list(self.needed),
            },
            index=pd.Index([f"R@{k}" for k in self.ks], name="metric"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "alpha": ALPHA,
            "power": POWER,
            "target difference": self.target,
            "pairs": [list(p) for p in self.pairs],
            "by k": [
                {"k": k, "sd": s, "detectable": d, "questions needed": n}
                for k, s, d, n in zip(self.ks, self.sd, self.detectable, self.needed, strict=True)
            ],
        }


def power(
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
    ks: Sequence[int],
    target: float = TARGET,
    pairs: Sequence[tuple[str, str]] = STRATEGY_PAIRS,
) -> Power:
    """:class:`Power` from the first-hit ranks of the chunkings on these questions."""
    pairs = tuple(p for p in pairs if p[0] in ranks and p[1] in ranks)
    if not pairs:
        raise ValueError("no comparison between chunkings to observe the design's spread on")
    n = len(dict.fromkeys(clusters))
    sds, found, needed = [], [], []
    for k in ks:
        per_pair = []
        for a, b in pairs:
            d = paired_difference(hits_at(ranks[a], k), hits_at(ranks[b], k), clusters)
            per_pair.append(d.se * math.sqrt(d.clusters + 2))
        sd = float(np.median(per_pair))
        sds.append(sd)
        found.append(detectable(sd, n))
        needed.append(questions_needed(sd, target))
    return Power(n, target, tuple(ks), tuple(sds), tuple(found), tuple(needed), pairs)
