"""The refusal threshold: keep at most four chunks, and only those closer than a cutoff.

A retriever always returns something; the gate is the one part of the pipeline that can
say no. Its cutoff is a cosine distance, and choosing it needs queries that *should* get
nothing back: :func:`sweep` counts, for each cutoff, the negatives still answered (bluffs),
the answerable queries refused, and the answerable queries answered without their needle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rag_lab.ranking import order

if TYPE_CHECKING:  # pandas is imported by the sweep only: `rag-lab ask` needs none of it
    import pandas as pd

MAX_KEPT = 4
"""Chunks passed to the generator at most."""
CUTOFF = 0.675
"""The chapter's cutoff (cosine distance; strictly under it is kept): the default of
``rag-lab ask`` and of every notebook that does not sweep it."""


@dataclass(frozen=True)
class Kept:
    """What the gate lets through for one query: chunk positions nearest first."""

    positions: tuple[int, ...]
    distances: tuple[float, ...]

    @property
    def refused(self) -> bool:
        return not self.positions


def gate(distances: np.ndarray, cutoff: float | None, k: int = MAX_KEPT) -> Kept:
    """The ``k`` nearest chunks whose cosine distance is strictly under ``cutoff``.

    ``cutoff=None`` means no threshold: the top ``k`` always pass. Ties in distance
    keep chunk order.
    """
    top = order(np.asarray(distances, dtype=np.float64), descending=False)[:k]
    if cutoff is not None:
        top = top[distances[top] < cutoff]
    return Kept(tuple(int(i) for i in top), tuple(float(distances[i]) for i in top))


def outcomes(
    answerable: np.ndarray,
    relevant: Sequence[set[int]],
    negatives: np.ndarray,
    cutoff: float | None,
    k: int = MAX_KEPT,
) -> dict[str, int]:
    """Counts at one cutoff.

    ``answerable`` (m, n) and ``negatives`` (p, n) are cosine distances from each query to
    every chunk; ``relevant[i]`` holds the chunks that contain query i's needle.
    """
    kept = [gate(row, cutoff, k) for row in answerable]
    refused = sum(g.refused for g in kept)
    without = sum(
        not g.refused and not relevant[i].intersection(g.positions) for i, g in enumerate(kept)
    )
    bluffs = sum(not gate(row, cutoff, k).refused for row in negatives)
    return {
        "bluffs": bluffs,
        "refused": refused,
        "answered without needle": without,
        "answered with needle": len(kept) - refused - without,
    }


def sweep(
    answerable: np.ndarray,
    relevant: Sequence[set[int]],
    negatives: np.ndarray,
    cutoffs: Sequence[float | None],
    k: int = MAX_KEPT,
) -> pd.DataFrame:
    """:func:`outcomes` for each cutoff, one row each (``None`` is the no-threshold row)."""
    import pandas as pd

    rows = [{"cutoff": c, **outcomes(answerable, relevant, negatives, c, k)} for c in cutoffs]
    return pd.DataFrame(rows)


def cheapest_cutoff(table: pd.DataFrame, bluff_cost: float) -> pd.Series:
    """The sweep row minimising ``bluff_cost × bluffs + refused``.

    ``bluff_cost`` says how many refused answerable questions one bluff is worth.
    Among equal costs, the smallest cutoff wins (the more cautious gate).
    """
    cost = bluff_cost * table["bluffs"] + table["refused"]
    finite = table.assign(cost=cost)[table["cutoff"].notna()]
    best = finite.sort_values(["cost", "cutoff"], kind="stable").iloc[0]
    return best
