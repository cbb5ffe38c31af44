"""Notebook 06: the identity ``1 − cos = ‖a − b‖²/2`` on unit vectors, what breaks without
normalisation, and the gate's distances (:mod:`rag_lab.evaluation.refusal`) as tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from rag_lab import gate
from rag_lab.chunking import Chunk
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, hypotheses, twins
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.twins import Calibration
from rag_lab.experiments.present import Table
from rag_lab.experiments.probes import classify
from rag_lab.questions import Negative
from rag_lab.stats import ALPHA

HEADLINE = (
    "distances-overlap",
    "bluffs@0.675",
    "bluffs@0.525",
    "refused@0.525",
    "literal-match-bluff",
    "0.675-uncalibrated",
)
PRICES = (1.0, 3.0, 10.0)
"""Prices of a bluff, in refused answerable queries, that the price table compares."""
GAP = "|L2²/2 − (1 − cos)|"


def identity_all_pairs(vectors: np.ndarray) -> float:
    """max |L2²/2 − (1 − cos)| over all pairs of rows, computed in float32 as an index would."""
    v = np.asarray(vectors, np.float32)
    dots = v @ v.T
    sq = np.sum(v * v, axis=1)
    norms = np.sqrt(sq)
    cos = dots / (norms[:, None] * norms[None, :])
    return float(np.max(np.abs((sq[:, None] + sq[None, :] - 2 * dots) / 2 - (1 - cos))))


def identity_table(vectors: np.ndarray, gap: float) -> Table:
    """The first two vectors' norms, distances and gap, then ``gap`` over all pairs."""
    a, b = np.asarray(vectors[:2], np.float64)
    l2, cos = np.linalg.norm(a - b), a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    pair = {"‖a‖": np.linalg.norm(a), "‖b‖": np.linalg.norm(b), "L2": l2}
    pair |= {"L2²/2": l2 * l2 / 2, "1 − cos": 1 - cos, GAP: abs(l2 * l2 / 2 - (1 - cos))}
    n = len(vectors)

    def cell(v: float) -> str:
        return f"{v:.9f}" if v > 1e-4 else f"{v:.2e}"

    rows = {
        "chunks 0 and 1": {k: cell(v) for k, v in pair.items()},
        f"max, {n} × {n}": {k: cell(gap) if k == GAP else "–" for k in pair},
    }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("pair"),
        caption="Two chunk vectors of the index: their norms, L2 distance, half its square "
        f"and the cosine distance; then the largest gap over every pair of the first {n} chunks",
    )


def length_dependence(raw: np.ndarray, lengths: Sequence[int]) -> Table:
    """Unnormalised vectors: norm spread, the identity's worst gap, Spearman(length, norm)."""
    norms = np.linalg.norm(np.asarray(raw, np.float64), axis=1)
    values = {
        "norm min": norms.min(),
        "norm max": norms.max(),
        f"max {GAP}": identity_all_pairs(raw),
        "Spearman(length, norm)": sps.spearmanr(lengths, norms).statistic,
    }
    index = pd.Index(values, name="without the Normalize layer")
    return Table(pd.DataFrame({"value": [f"{v:.3f}" for v in values.values()]}, index=index))


def bluffs_table(
    negatives: np.ndarray,
    negs: Sequence[Negative],
    chunks: Sequence[Chunk],
    cutoff: float = chapter.CUTOFF,
    per_query: int = 2,
) -> Table:
    """Every negative under ``cutoff``, nearest first, with its nearest chunks."""
    nearest = negatives.min(axis=1)
    rows = []
    for qi in np.argsort(nearest, kind="stable")[: int((nearest < cutoff).sum())]:
        for rank, ci in enumerate(np.argsort(negatives[qi], kind="stable")[:per_query], 1):
            c = chunks[ci]
            kind, shared = classify(negs[qi].query, c.content)
            rows.append(
                {
                    "negative": negs[qi].id,
                    "rank": rank,
                    "distance": round(float(negatives[qi, ci]), 3),
                    "chunk": f"{c.doc_id} > {c.section or '(intro)'}",
                    "kind": kind,
                    "shared": shared,
                }
            )
    return Table(
        pd.DataFrame(rows),
        caption=f"Every negative under {cutoff}, nearest first: its two nearest chunks, "
        "their cosine distance and what the negative shares with each",
        shorten={"chunk": 38, "shared": 20},
    )


def overlap_view(gated: Refusal) -> Table:
    """:attr:`Refusal.overlap` with short headers and its units (queries, negatives)."""
    o = gated.overlap
    frame = pd.DataFrame(
        {
            "farthest answer": o["worst in-domain"].map("{:.3f} (".format) + o["query"] + ")",
            "nearest negative": o["best out-of-domain"].map("{:.3f} (".format)
            + o["negative"]
            + ")",
            "overlap": o["overlap"],
            "answers farther": o["in-domain above best out-of-domain"],
            "negatives nearer": o["negatives below worst in-domain"],
        }
    )
    return Table(
        frame,
        caption="Per wording: the answerable query farthest from its needle's chunk against "
        "the negative nearest to any chunk (cosine distance); answers farther: answerable "
        "queries beyond that negative; negatives nearer: negatives within that answer",
    )


def outcomes_view(gated: Refusal) -> Table:
    """:attr:`Refusal.at_chapter`: outcomes at no cutoff and the chapter's two, beside its own."""
    return Table(
        gated.at_chapter.rename(columns={"answered without needle": "without needle"}),
        caption="Bluffs: negatives answered; refused: answerable queries refused; without "
        "needle: answerable queries answered with no chunk that holds the needle",
    )


def price_table(gated: Refusal, prices: Sequence[float] = PRICES) -> Table:
    """The cheapest cutoff at each price of a bluff, the run's own price among them."""
    rows = {}
    for price in sorted({*prices, gated.bluff_cost}):
        best = gate.cheapest_cutoff(gated.sweep, price)
        rows[f"{price:g}"] = {
            "cheapest cutoff": f"{best['cutoff']:.3f}",
            "bluffs": f"{int(best['bluffs'])}/{gated.negatives}",
            "refused": f"{int(best['refused'])}/{gated.answerable}",
            "cost": f"{best['cost']:g}",
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("refusals per bluff"),
        caption="The cutoff of the sweep with the least cost, price × bluffs + refused, at each "
        f"price of a bluff (this run's: {gated.bluff_cost:g}); ties go to the smaller cutoff",
    )


def twins_view(c: Calibration) -> Table:
    """The twin-calibrated cutoff and the chapter's, scored on the held-out questions only."""
    return Table(
        twins.held_out_view(c),
        caption=f"Scored on the {c.held_out.questions} held-out questions "
        f"({c.held_out.queries} queries); chosen on the other {len(c.chosen_on)}. Bluffed: "
        f"questions whose twin passes; upper: exact one-sided bound (Clopper–Pearson); "
        "refused: answerable queries, 95 % by question",
    )


def twins_beside_negatives(c: Calibration, gated: Refusal) -> Table:
    """Twins bluffed beside hand-written negatives bluffed (never pooled), at both cutoffs."""
    rows = {}
    for name, h in (("the twins", c.held_out), ("the chapter", c.chapter)):
        bluffs = int(gated.at(h.cutoff)["bluffs"])
        rows[name] = {
            "cutoff": f"{h.cutoff:.3f}",
            "twins bluffed": f"{h.bluffed}/{h.questions}",
            "twin rate": round(h.rate, 3),
            "negatives bluffed": f"{bluffs}/{gated.negatives}",
            "negative rate": round(bluffs / gated.negatives, 3),
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("set by"),
        caption="Twins bluffed: held-out questions whose twin passes the gate; negatives "
        "bluffed: hand-written negatives that pass it, on their own curve",
    )


def twin_distance_table(c: Calibration) -> Table:
    """The quartiles of each query's distance to its nearest chunk, and of its twin's."""
    quartiles = np.quantile([c.twins.nearest, c.twins.twin], [0.25, 0.5, 0.75], axis=1).T
    frame = pd.DataFrame(
        quartiles,
        index=pd.Index(["the query", "its twin"], name="nearest chunk of"),
        columns=["25 %", "median", "75 %"],
    )
    return Table(
        frame,
        caption=f"Cosine distance to the nearest chunk, over the {len(c.twins.nearest)} "
        "answerable queries: the query's, and its twin's once every chunk holding the needle "
        "is removed",
    )


def entries(
    identity_unit: float,
    gated: Refusal,
    traps: pd.DataFrame,
    calibrated: Calibration,
    raw: np.ndarray,
    lengths: Sequence[int],
) -> list[Entry]:
    """This notebook's part of the ledger; the literal-match bluff is judged on the traps."""
    at = {"notebook": "06", "benchmark": "d2l"}
    landed = traps[traps["passes"] & traps["holds rare term"]]
    return [
        fixed_entry(
            "identity",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            reason="an identity of unit vectors (‖a − b‖² = 2 − 2 a·b); measured, the float32 "
            f"error is {identity_unit:.1e}",
            here=f"max error {identity_unit:.1e}",
        ),
        *hypotheses.refusal_entries(gated, "06", "d2l"),
        _length_norm(raw, lengths),
        count_entry(
            "literal-match-bluff",
            **at,
            holds=len(landed) > 0,
            here=", ".join(f"{i} at {d:.3f}" for i, d in landed["distance"].items()) or "none",
        ),
        *twins.entries(calibrated, "06", "d2l"),
    ]


def _length_norm(raw: np.ndarray, lengths: Sequence[int]) -> Entry:
    """Spearman's test of independence of text length and unnormalised vector norm."""
    norms = np.linalg.norm(np.asarray(raw, np.float64), axis=1)
    rho, p = sps.spearmanr(lengths, norms)
    return count_entry(
        "length-norm",
        notebook="06",
        benchmark="d2l",
        holds=bool(p < ALPHA),
        here=f"Spearman {rho:+.3f} over {len(lengths)} chunks, p = {p:.1e}",
        estimate=float(rho),
    )
