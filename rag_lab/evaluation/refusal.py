"""The refusal gate measured: distances of answerable and unanswerable queries, the sweep.

Everything is measured on cosine distance ``1 − q·c`` between unit vectors. Choosing a cutoff
needs queries that *should* get nothing back (negatives): for each cutoff the sweep counts
the negatives still answered (bluffs), the answerable queries refused, and those answered
without their needle (:func:`rag_lab.gate.sweep`); a stated price of a bluff in refusals then
picks the cheapest cutoff (:func:`rag_lab.gate.cheapest_cutoff`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from rag_lab import dense, gate
from rag_lab.evaluation import chapter
from rag_lab.evaluation.jsonable import frame_json
from rag_lab.evaluation.lab import Lab
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Negative, Query

CUTOFF_STEP = 0.005
"""Resolution of the gate sweep."""
SWEEP = (0.30, 0.90)
"""The cutoffs swept, in cosine distance."""
BLUFF_COST = 3.0
"""One bluff (a negative answered) costs as much as this many answerable questions refused."""


@dataclass(frozen=True)
class Matrices:
    """Cosine distances of every answerable query and every negative to every chunk."""

    answerable: np.ndarray
    """Queries × chunks."""
    negative: np.ndarray
    """Negatives × chunks."""
    relevant: list[set[int]]
    """Per query, the positions of the chunks holding its needle."""


def distance_matrices(lab: Lab, strategy: str = "E") -> Matrices:
    """The three inputs of every table and figure of this notebook, on one chunking."""
    index = lab.index(strategy)
    return Matrices(
        dense.cosine_distance_matrix(
            lab.encoder.encode([q.text for q in lab.queries]), index.vectors
        ),
        dense.cosine_distance_matrix(
            lab.encoder.encode([n.query for n in lab.negatives]), index.vectors
        ),
        relevant_chunks(index.chunks, lab.queries),
    )


def cutoffs(step: float = CUTOFF_STEP) -> list[float | None]:
    """No cutoff, then :data:`SWEEP` in steps of ``step`` (rounded to 3 decimals)."""
    lo, hi = SWEEP
    return [None, *(float(c) for c in np.round(np.arange(lo, hi + 1e-4, step), 3))]


def cheapest_line(cheapest: pd.Series, bluff_cost: float) -> str:
    return (
        f"cheapest cutoff at {bluff_cost:g} refusals per bluff: {cheapest['cutoff']:.3f} "
        f"({int(cheapest['bluffs'])} bluffs, {int(cheapest['refused'])} refused, "
        f"cost {cheapest['cost']:g})"
    )


@dataclass(frozen=True)
class Distances:
    """Per answerable query: distance to its needle's nearest chunk; per negative: nearest."""

    needle: np.ndarray
    """For each answerable query, the distance to the nearest chunk containing its needle."""
    nearest: np.ndarray
    """For each answerable query, the distance to its nearest chunk: what the gate compares."""
    negative: np.ndarray
    """For each negative, the distance to its nearest chunk."""


def distances(
    answerable: np.ndarray, relevant: Sequence[set[int]], negatives: np.ndarray
) -> Distances:
    """Summarise full distance matrices (queries × chunks) into the three distributions."""
    needle = np.array(
        [
            row[sorted(rel)].min() if rel else np.nan
            for row, rel in zip(answerable, relevant, strict=True)
        ]
    )
    return Distances(needle, answerable.min(axis=1), negatives.min(axis=1))


def overlap_table(d: Distances, queries: Sequence[Query], negs: Sequence[Negative]) -> pd.DataFrame:
    """Worst in-domain (needle) distance vs best out-of-domain distance, per phrasing and
    over all of them (``both`` for the chapter's two, else ``all``)."""
    rows = []
    best_out = int(np.argmin(d.negative))
    names = list(dict.fromkeys(q.phrasing for q in queries))
    every = "both" if len(names) == 2 else "all"
    for phrasing in [*names, every]:
        mask = np.array([phrasing in (every, q.phrasing) for q in queries])
        worst = int(np.nanargmax(np.where(mask, d.needle, -np.inf)))
        rows.append(
            {
                "phrasing": phrasing,
                "worst in-domain": round(float(d.needle[worst]), 3),
                "query": queries[worst].id,
                "best out-of-domain": round(float(d.negative[best_out]), 3),
                "negative": negs[best_out].id,
                "overlap": bool(d.needle[worst] > d.negative[best_out]),
                "in-domain above best out-of-domain": int(
                    (d.needle[mask] >= d.negative[best_out]).sum()
                ),
                "negatives below worst in-domain": int((d.negative < d.needle[worst]).sum()),
            }
        )
    return pd.DataFrame(rows).set_index("phrasing")


def bluff_table(
    answerable: np.ndarray,
    relevant: Sequence[set[int]],
    negatives: np.ndarray,
    at: Sequence[float | None] = (None, chapter.CUTOFF, chapter.STRICT_CUTOFF),
) -> pd.DataFrame:
    """Our outcomes at a few cutoffs beside the chapter's, counts out of their totals."""
    ours = gate.sweep(answerable, relevant, negatives, at)
    m, p = len(answerable), len(negatives)
    rows = []
    for _, r in ours.iterrows():
        c = None if pd.isna(r["cutoff"]) else float(r["cutoff"])
        rows.append(
            {
                "cutoff": "none" if c is None else f"{c:.3f}",
                "bluffs": f"{int(r['bluffs'])}/{p}",
                "refused": f"{int(r['refused'])}/{m}",
                "answered without needle": f"{int(r['answered without needle'])}/{m}",
                "chapter bluffs": _chapter_count(chapter.BLUFFS, c, chapter.NEGATIVES),
                "chapter refused": _chapter_count(
                    chapter.REFUSED_ANSWERABLE, c, chapter.CORPUS["queries"]
                ),
            }
        )
    return pd.DataFrame(rows).set_index("cutoff")


@dataclass(frozen=True)
class Refusal:
    """The gate on one chunking: the three distributions, the sweep, the cheapest cutoff."""

    strategy: str
    distances: Distances
    overlap: pd.DataFrame
    """:func:`overlap_table`: worst in-domain against best out-of-domain, per phrasing."""
    sweep: pd.DataFrame
    """:func:`rag_lab.gate.sweep` over :func:`cutoffs`: counts per cutoff."""
    cheapest: pd.Series
    """The sweep's row minimising ``bluff_cost × bluffs + refused``."""
    bluff_cost: float
    at_chapter: pd.DataFrame
    """:func:`bluff_table`: outcomes at no cutoff and the chapter's two, beside its own."""
    answerable: int
    negatives: int
    negative_kinds: tuple[str, ...]
    """Each negative's kind (``uncovered``, ``offtopic``), in the order of ``distances``."""
    clusters: tuple[str, ...] = ()
    """The question each answerable query asks."""

    def refused_at(self, row: pd.Series) -> np.ndarray:
        """Per answerable query, whether the gate refuses it at the sweep ``row``'s cutoff
        (nothing strictly under the cutoff), in query order."""
        return self.distances.nearest >= row["cutoff"]

    @property
    def cheapest_cutoff(self) -> float:
        return float(self.cheapest["cutoff"])

    def at(self, cutoff: float | None) -> pd.Series:
        """The sweep's row nearest ``cutoff`` (None: the no-cutoff row)."""
        t = self.sweep
        if cutoff is None:
            return t[t["cutoff"].isna()].iloc[0]
        return t.loc[(t["cutoff"] - cutoff).abs().idxmin()]

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "kept at most": gate.MAX_KEPT,
            "distances": frame_json(self.overlap),
            "bluff cost": self.bluff_cost,
            "cheapest": {
                "cutoff": self.cheapest_cutoff,
                **{
                    k: int(self.cheapest[k])
                    for k in ("bluffs", "refused", "answered without needle")
                },
                "cost": float(self.cheapest["cost"]),
            },
            "sweep": frame_json(self.sweep),
        }


def refusal(
    lab: Lab, strategy: str = "E", bluff_cost: float = BLUFF_COST, step: float = CUTOFF_STEP
) -> Refusal:
    """Distances, sweep (every ``step`` over :data:`SWEEP`) and the cheapest cutoff on
    ``strategy``; needs negatives."""
    m = distance_matrices(lab, strategy)
    return refusal_of(m, lab.queries, lab.negatives, strategy, bluff_cost, step)


def refusal_of(
    m: Matrices,
    queries: Sequence[Query],
    negs: Sequence[Negative],
    strategy: str = "E",
    bluff_cost: float = BLUFF_COST,
    step: float = CUTOFF_STEP,
) -> Refusal:
    """:func:`refusal` from distance matrices already computed."""
    d = distances(m.answerable, m.relevant, m.negative)
    sweep = gate.sweep(m.answerable, m.relevant, m.negative, cutoffs(step))
    return Refusal(
        strategy,
        d,
        overlap_table(d, queries, negs),
        sweep,
        gate.cheapest_cutoff(sweep, bluff_cost),
        bluff_cost,
        bluff_table(m.answerable, m.relevant, m.negative),
        len(queries),
        len(negs),
        tuple(n.kind for n in negs),
        tuple(q.question.id for q in queries),
    )


def _chapter_count(table: dict, cutoff: float | None, total: int) -> str:
    value = table.get(cutoff)
    return "" if value is None else f"{value}/{total}"


# --- the identity behind the distance, and what breaks without normalisation --------------

GAP = "|L2²/2 − (1 − cos)|"


def identity_all_pairs(vectors: np.ndarray) -> float:
    """max |L2²/2 − (1 − cos)| over all pairs of rows, computed in float32 as an index would."""
    v = np.asarray(vectors, np.float32)
    dots = v @ v.T
    sq = np.sum(v * v, axis=1)
    norms = np.sqrt(sq)
    cos = dots / (norms[:, None] * norms[None, :])
    return float(np.max(np.abs((sq[:, None] + sq[None, :] - 2 * dots) / 2 - (1 - cos))))


def length_dependence(raw: np.ndarray, lengths: Sequence[int]) -> pd.Series:
    """Unnormalised vectors: norm spread, the identity's worst gap, Spearman(length, norm)."""
    norms = np.linalg.norm(np.asarray(raw, np.float64), axis=1)
    values = {"norm min": norms.min(), "norm max": norms.max()}
    values |= {f"max {GAP}": identity_all_pairs(raw)}
    values |= {"Spearman(length, norm)": sps.spearmanr(lengths, norms).statistic}
    return pd.Series(values, name="without the Normalize layer")
