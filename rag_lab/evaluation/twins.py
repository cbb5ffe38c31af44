"""Unanswerable twins: a refusal cutoff calibrated without hand-written negatives.

For every answerable query its **twin** is the same query against the index with every chunk
that holds its needle removed (:func:`rag_lab.metrics.relevant_chunks`): now unanswerable,
with the near-miss material of its own document still present. On a distance matrix that is
dropping those columns; the nearest remaining chunk is what the gate sees. A twin that the
gate lets through (anything strictly under the cutoff) is a bluff.

The question is the unit: the phrasings of one question (one or more) share its passages, so
their twins lose the same chunks and succeed or fail together. A **question bluffs** at a
cutoff when the twin of any of its phrasings passes the gate; questions are then independent
trials, and an exact binomial (Clopper–Pearson) bound over questions is valid, conservative
for the query rate (which can only be lower).

Calibration splits the *questions* (never the phrasings of one question) into two halves with
a fixed seed (:func:`split_questions`). On the first half it chooses the largest swept cutoff
whose question bluff rate is at most :data:`TARGET` (:func:`choose_cutoff`); on the other
half, and only there, it reports the observed rate with its exact one-sided upper bound and
the answerable queries that cutoff refuses. The choosing half is never scored: the scorer
never receives it (:func:`calibrate`).

Twins are kept apart from the hand-written negatives: each has its own curve, never pooled.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rag_lab import dense, gate
from rag_lab.evaluation import chapter
from rag_lab.evaluation.jsonable import frame_json
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, count_entry
from rag_lab.evaluation.refusal import CUTOFF_STEP, Matrices, cutoffs
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Query
from rag_lab.stats import clopper_pearson_upper, clustered_wilson

TARGET = 0.10
"""The stated target: at most this share of questions' twins let through by the gate."""
SPLIT_SEED = 0
"""The seed of the split of questions into the choosing and the scored half."""
LEVEL = 0.95
"""The confidence of the one-sided upper bound on the held-out bluff rate."""


# --- twins ------------------------------------------------------------------------------


def twin_nearest(answerable: np.ndarray, relevant: Sequence[set[int]]) -> np.ndarray:
    """Per answerable query, its twin's distance to the nearest chunk that remains once every
    chunk holding its needle is removed (``inf`` when nothing remains)."""
    out = np.empty(len(answerable))
    for i, (row, rel) in enumerate(zip(answerable, relevant, strict=True)):
        keep = _remaining(row.shape[0], rel)
        out[i] = row[keep].min() if keep.size else np.inf
    return out


def twin_kept(
    row: np.ndarray, relevant: set[int], cutoff: float | None, k: int = gate.MAX_KEPT
) -> gate.Kept:
    """What the gate keeps for one twin: :func:`rag_lab.gate.gate` on the index without the
    chunks in ``relevant``, positions given in the full index."""
    keep = _remaining(row.shape[0], relevant)
    kept = gate.gate(row[keep], cutoff, k)
    return gate.Kept(tuple(int(keep[i]) for i in kept.positions), kept.distances)


def _remaining(n: int, removed: set[int]) -> np.ndarray:
    return np.setdiff1d(np.arange(n), np.fromiter(removed, dtype=int, count=len(removed)))


@dataclass(frozen=True)
class Twins:
    """Each answerable query's own nearest distance and its twin's, in query order."""

    nearest: np.ndarray
    """The query's distance to its nearest chunk: what the gate compares for the query."""
    twin: np.ndarray
    """Its twin's distance to the nearest chunk left (:func:`twin_nearest`)."""
    removed: tuple[int, ...]
    """Chunks removed for each twin (0: no chunk holds the needle whole; the twin is the
    query itself)."""
    queries: tuple[str, ...]
    clusters: tuple[str, ...]
    """The question each query asks: the unit of every rate."""

    @classmethod
    def of(
        cls,
        answerable: np.ndarray,
        relevant: Sequence[set[int]],
        queries: Sequence[str],
        clusters: Sequence[Hashable],
    ) -> Twins:
        return cls(
            answerable.min(axis=1),
            twin_nearest(answerable, relevant),
            tuple(len(r) for r in relevant),
            tuple(queries),
            tuple(str(c) for c in clusters),
        )

    def subset(self, questions: frozenset[str]) -> Twins:
        """The queries of ``questions`` only."""
        mask = np.array([c in questions for c in self.clusters], dtype=bool)
        pick = np.flatnonzero(mask)
        return Twins(
            self.nearest[mask],
            self.twin[mask],
            tuple(self.removed[i] for i in pick),
            tuple(self.queries[i] for i in pick),
            tuple(self.clusters[i] for i in pick),
        )


def twins_of_matrices(m: Matrices, queries: Sequence[Query]) -> Twins:
    """The twins of ``queries`` from distance matrices already computed
    (:func:`rag_lab.evaluation.refusal.distance_matrices`)."""
    return Twins.of(
        m.answerable, m.relevant, [q.id for q in queries], [q.question.id for q in queries]
    )


def twins_of(lab: Lab, strategy: str = "E") -> Twins:
    """The twins of every answerable query of ``lab`` on chunking ``strategy``."""
    index = lab.index(strategy)
    answerable = dense.cosine_distance_matrix(
        lab.encoder.encode([q.text for q in lab.queries]), index.vectors
    )
    return Twins.of(
        answerable,
        relevant_chunks(index.chunks, lab.queries),
        [q.id for q in lab.queries],
        [q.question.id for q in lab.queries],
    )


# --- the bluff curve ----------------------------------------------------------------------


def questions_bluffed(t: Twins, cutoff: float | None) -> dict[str, bool]:
    """Per question, whether the twin of any of its phrasings passes the gate at ``cutoff``."""
    passes = np.ones(len(t.twin), bool) if cutoff is None else t.twin < cutoff
    out: dict[str, bool] = {}
    for c, p in zip(t.clusters, passes, strict=True):
        out[c] = out.get(c, False) or bool(p)
    return out


def bluff_curve(t: Twins, cuts: Sequence[float | None]) -> pd.DataFrame:
    """Per cutoff: twins let through (queries), questions bluffed (any phrasing), and their
    shares, and the answerable queries refused."""
    n_q = len(set(t.clusters))
    rows = []
    for c in cuts:
        bluffed = sum(questions_bluffed(t, c).values())
        twins = len(t.twin) if c is None else int((t.twin < c).sum())
        refused = 0 if c is None else int((t.nearest >= c).sum())
        rows.append(
            {
                "cutoff": c,
                "twins answered": twins,
                "questions bluffed": bluffed,
                "twin bluff rate": twins / len(t.twin),
                "question bluff rate": bluffed / n_q,
                "refused": refused,
            }
        )
    return pd.DataFrame(rows)


# --- calibration --------------------------------------------------------------------------


def split_questions(
    clusters: Sequence[Hashable], seed: int = SPLIT_SEED
) -> tuple[frozenset[str], frozenset[str]]:
    """The questions in two disjoint halves, (choose, score), by a seeded permutation of their
    sorted ids: every phrasing of a question falls in the same half. With an odd count the
    scored half has the extra question."""
    ids = sorted({str(c) for c in clusters})
    if len(ids) < 2:
        raise ValueError(f"calibration needs at least 2 questions, got {len(ids)}")
    order = np.random.default_rng(seed).permutation(len(ids))
    half = len(ids) // 2
    return (
        frozenset(ids[i] for i in order[:half]),
        frozenset(ids[i] for i in order[half:]),
    )


def choose_cutoff(
    t: Twins, target: float = TARGET, cuts: Sequence[float | None] | None = None
) -> tuple[float, bool]:
    """(cutoff, met): the largest swept cutoff whose question bluff rate on ``t`` is at most
    ``target``; when none is, the smallest swept cutoff and ``met=False``."""
    swept = [c for c in (cutoffs() if cuts is None else cuts) if c is not None]
    n_q = len(set(t.clusters))
    ok = [c for c in swept if sum(questions_bluffed(t, c).values()) / n_q <= target]
    return (max(ok), True) if ok else (min(swept), False)


@dataclass(frozen=True)
class HeldOut:
    """A cutoff scored on the held-out questions only."""

    cutoff: float
    questions: int
    bluffed: int
    """Held-out questions whose twin (of any phrasing) passes the gate."""
    upper: float
    """Exact one-sided upper bound on the question bluff rate (Clopper–Pearson, ``LEVEL``)."""
    queries: int
    refused: tuple[str, ...]
    """The held-out answerable queries the cutoff refuses (nothing strictly under it)."""
    refused_ci: tuple[float, float]
    """95 % interval of the refused share, the questions as the sample (clustered Wilson)."""

    @property
    def rate(self) -> float:
        return self.bluffed / self.questions

    def to_json(self) -> dict[str, Any]:
        return {
            "cutoff": self.cutoff,
            "questions": self.questions,
            "questions bluffed": self.bluffed,
            "bluff rate": self.rate,
            "upper bound": self.upper,
            "queries": self.queries,
            "refused": list(self.refused),
            "refused interval": list(self.refused_ci),
        }


def score(t: Twins, cutoff: float, level: float = LEVEL) -> HeldOut:
    """``cutoff`` on the queries of ``t`` (the held-out half): its question bluff rate with
    the exact upper bound, and the answerable queries it refuses."""
    bluffed = sum(questions_bluffed(t, cutoff).values())
    n_q = len(set(t.clusters))
    refused = t.nearest >= cutoff
    return HeldOut(
        cutoff,
        n_q,
        bluffed,
        clopper_pearson_upper(bluffed, n_q, level),
        len(t.nearest),
        tuple(q for q, r in zip(t.queries, refused, strict=True) if r),
        clustered_wilson(refused, t.clusters),
    )


@dataclass(frozen=True)
class Calibration:
    """The twin-calibrated cutoff on strategy ``strategy``, scored on the other half, beside
    the chapter's cutoff scored on the same half."""

    strategy: str
    target: float
    seed: int
    level: float
    chosen_on: tuple[str, ...]
    """The questions the cutoff was chosen on (never scored)."""
    cutoff: float
    met: bool
    """Whether some swept cutoff met the target on the choosing half."""
    held_out: HeldOut
    chapter: HeldOut
    """The chapter's cutoff on the same held-out questions."""
    curve: pd.DataFrame
    """:func:`bluff_curve` over every query (both halves): for showing, not for choosing."""
    no_needle_chunk: int
    """Queries none of whose chunks holds the needle whole: their twin is the query."""
    twins: Twins
    """Every query's own nearest distance and its twin's (both halves)."""
    step: float = CUTOFF_STEP

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "target": self.target,
            "seed": self.seed,
            "level": self.level,
            "chosen on": list(self.chosen_on),
            "cutoff": self.cutoff,
            "target met": self.met,
            "held out": self.held_out.to_json(),
            "chapter cutoff": self.chapter.to_json(),
            "queries without a needle chunk": self.no_needle_chunk,
            "median distance": {
                "query": float(np.median(self.twins.nearest)),
                "twin": float(np.median(self.twins.twin)),
            },
            "curve": frame_json(self.curve),
        }

    def line(self) -> str:
        """The calibrated cutoff and its held-out bound in one sentence (no full stop)."""
        h = self.held_out
        chosen = (
            f"The largest cutoff with at most {self.target:.0%} of {len(self.chosen_on)} "
            f"questions' twins answered is {self.cutoff:.3f}"
            if self.met
            else f"No cutoff meets {self.target:.0%} on {len(self.chosen_on)} questions; the "
            f"smallest swept is {self.cutoff:.3f}"
        )
        return (
            f"{chosen}: on the {h.questions} held-out questions {h.bluffed} bluff "
            f"({h.rate:.3f}, exact {self.level:.0%} upper bound {h.upper:.3f}) and "
            f"{len(h.refused)} of {h.queries} answerable queries are refused"
        )


def calibrate(
    t: Twins,
    strategy: str = "E",
    target: float = TARGET,
    seed: int = SPLIT_SEED,
    level: float = LEVEL,
    step: float = CUTOFF_STEP,
) -> Calibration:
    """Choose on one half of the questions, score on the other (module docstring)."""
    choose, scored = split_questions(t.clusters, seed)
    # The choice sees only the choosing half; the scorer only the other.
    cutoff, met = choose_cutoff(t.subset(choose), target, cutoffs(step))
    held = t.subset(scored)
    return Calibration(
        strategy,
        target,
        seed,
        level,
        tuple(sorted(choose)),
        cutoff,
        met,
        score(held, cutoff, level),
        score(held, chapter.CUTOFF, level),
        bluff_curve(t, cutoffs(step)),
        sum(r == 0 for r in t.removed),
        t,
        step,
    )


def calibration(lab: Lab, strategy: str = "E", target: float = TARGET) -> Calibration:
    """:func:`calibrate` on the twins of ``lab``'s queries on ``strategy``."""
    return calibrate(twins_of(lab, strategy), strategy, target)


# --- showing it -----------------------------------------------------------------------------

NOTE = (
    "Each answerable query's twin is the same query with every chunk holding its needle "
    "removed from the index; a question bluffs when the twin of either phrasing passes the "
    "gate. The questions are split in two halves (seed {seed}); the cutoff is the largest "
    "swept whose question bluff rate on the first half is at most {target:.0%}; the table "
    "scores it, and the chapter's cutoff, on the other half only: bluffs with the exact "
    "one-sided {level:.0%} upper bound over questions (Clopper–Pearson), and answerable "
    "queries refused with a 95 % interval by question."
)


def held_out_view(c: Calibration) -> pd.DataFrame:
    """The calibrated cutoff and the chapter's, each scored on the held-out questions."""
    rows = {}
    calibrated = f"calibrated for {c.target:.0%}" if c.met else f"smallest ({c.target:.0%} not met)"
    for name, h in ((calibrated, c.held_out), ("the chapter's", c.chapter)):
        lo, hi = h.refused_ci
        rows[name] = {
            "cutoff": f"{h.cutoff:.3f}",
            "questions bluffed": f"{h.bluffed}/{h.questions}",
            "bluff rate": round(h.rate, 3),
            f"upper {c.level:.0%}": round(h.upper, 3),
            "refused": f"{len(h.refused)}/{h.queries}",
            "refused 95 %": f"[{lo:.3f}, {hi:.3f}]",
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("held-out half")


def curve_figure(c: Calibration, negatives: pd.DataFrame | None = None, n_negatives: int = 0):
    """The twin bluff curve: for each swept cutoff the share of questions whose twin passes
    the gate (solid) and of twins (dashed), over every question, beside the hand-written
    negatives' bluff share when given (``negatives``: :func:`rag_lab.gate.sweep`'s table,
    a curve of its own, never pooled) and the answerable queries refused. Dotted: the
    target; the calibrated cutoff's held-out rate is a dot with its exact upper bound; the
    chapter's cutoff dashed, its held-out rate a black cross."""
    import matplotlib.pyplot as plt

    from rag_lab.evaluation import plots

    t = c.curve[c.curve["cutoff"].notna()]
    n_q = len(set(c.chosen_on)) + c.held_out.questions
    n_twins = int(c.curve["twins answered"].iloc[0]) if c.curve["cutoff"].isna().any() else 0
    ink, mid = plots.NEUTRAL["ink"], plots.NEUTRAL["mid"]
    with plots.style():
        fig, ax = plt.subplots(figsize=(8.0, 4.6))
        ax.step(
            t["cutoff"],
            t["question bluff rate"],
            where="post",
            lw=1.6,
            color=plots.ROLE_COLORS["other"],
            label=f"questions whose twin passes (of {n_q})",
        )
        ax.step(
            t["cutoff"],
            t["twin bluff rate"],
            where="post",
            lw=1.0,
            ls="--",
            color=plots.ROLE_COLORS["other"],
            label=f"twins that pass (of {n_twins})",
        )
        if negatives is not None and n_negatives:
            s = negatives[negatives["cutoff"].notna()]
            ax.step(
                s["cutoff"],
                s["bluffs"] / n_negatives,
                where="post",
                lw=1.6,
                color=plots.ROLE_COLORS["negative"],
                label=f"hand-written negatives answered (of {n_negatives})",
            )
        ax.step(
            t["cutoff"],
            t["refused"] / max(n_twins, 1),
            where="post",
            lw=1.2,
            color=plots.ROLE_COLORS["answerable"],
            label=f"answerable queries refused (of {n_twins})",
        )
        ax.axhline(c.target, color=mid, lw=0.8, ls=":", label=f"target {c.target:.0%}")
        h, ch = c.held_out, c.chapter
        ax.errorbar(
            [h.cutoff],
            [h.rate],
            yerr=[[0.0], [h.upper - h.rate]],
            fmt="o",
            ms=5,
            color=ink,
            capsize=3,
            label=f"calibrated {h.cutoff:.3f}: held-out {h.bluffed}/{h.questions}, "
            f"upper {c.level:.0%} {h.upper:.2f}",
        )
        ax.plot(
            [ch.cutoff],
            [ch.rate],
            **plots.CHAPTER_MARK,
            label=f"the chapter's {ch.cutoff}: held-out {ch.bluffed}/{ch.questions}",
        )
        ax.axvline(chapter.CUTOFF, color=mid, lw=0.8, ls="--")
        ax.text(chapter.CUTOFF, 1.02, f" the chapter's {chapter.CUTOFF}", fontsize=7)
        ax.set_ylim(-0.02, 1.08)
        ax.set_xlabel("cutoff (cosine distance; strictly under it is kept)")
        ax.set_ylabel("share")
        ax.set_title(
            f"Strategy {c.strategy}: unanswerable twins against the cutoff ({n_q} questions, "
            f"{n_twins} twins; chosen on {len(c.chosen_on)} questions, scored on "
            f"{h.questions})",
            fontsize=9,
        )
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        fig.tight_layout()
    return fig


def entries(c: Calibration, notebook: str = "06", benchmark: str = "d2l") -> list[Entry]:
    """The chapter's "without negatives there is no threshold, only a number", judged on
    twins: its 0.675 against the bluff target on the held-out questions (the run's target,
    named in the metric)."""
    h, ch = c.held_out, c.chapter
    return [
        count_entry(
            "0.675-uncalibrated",
            notebook=notebook,
            benchmark=benchmark,
            holds=ch.rate > c.target,
            here=f"{ch.bluffed}/{ch.questions} at {chapter.CUTOFF} (upper {ch.upper:.2f}); "
            f"calibrated {c.cutoff:.3f}{'' if c.met else ' (target not met)'}: "
            f"{h.bluffed}/{h.questions} (upper {h.upper:.2f})",
            estimate=ch.rate,
            metric=f"held-out question twin bluff rate at {chapter.CUTOFF} against a "
            f"{c.target:.0%} target",
        )
    ]
