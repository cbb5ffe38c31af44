"""Notebook 06: the identity ``1 − cos = ‖a − b‖²/2`` on unit vectors, what breaks without
normalisation, and the gate's distances (:mod:`rag_lab.evaluation.refusal`) as tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_lab import gate
from rag_lab.chunking import Chunk
from rag_lab.evaluation import chapter
from rag_lab.evaluation.identifiers import classify
from rag_lab.evaluation.refusal import GAP, Refusal
from rag_lab.evaluation.twins import Calibration
from rag_lab.experiments.present import Table
from rag_lab.questions import Negative

HEADLINE = (
    "distances-overlap",
    "bluffs@0.675",
    "bluffs@0.525",
    "refused@0.525",
    "literal-match-bluff",
    "0.675-uncalibrated",
)


def identity_table(vectors: np.ndarray, gap: float) -> pd.DataFrame:
    """The first two vectors' norms, distances and gap, then ``gap`` over all pairs."""
    a, b = np.asarray(vectors[:2], np.float64)
    l2, cos = np.linalg.norm(a - b), a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    pair = {"‖a‖": np.linalg.norm(a), "‖b‖": np.linalg.norm(b), "L2": l2, "L2²/2": l2 * l2 / 2}
    pair |= {"1 − cos": 1 - cos, GAP: abs(l2 * l2 / 2 - (1 - cos))}
    rows = ["chunks 0 and 1", f"max, {len(vectors)} × {len(vectors)}"]
    return pd.DataFrame([pair, {GAP: gap}], index=pd.Index(rows, name="pair"))


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
            row = {"negative": negs[qi].id, "rank": rank, "distance": negatives[qi, ci]}
            chunk = f"{c.doc_id} > {c.section or '(intro)'}"
            rows.append(row | {"chunk": chunk, "kind": kind, "shared": shared})
    return Table(pd.DataFrame(rows), shorten={"chunk": 38, "shared": 20})


def overlap_view(gated: Refusal) -> Table:
    """:attr:`Refusal.overlap`, its headers shortened to fit a page."""
    short = ["worst in", "query", "best out", "negative", "overlap"]
    return Table(gated.overlap.set_axis([*short, "answers farther", "negatives nearer"], axis=1))


def price_table(gated: Refusal, prices: Sequence[float] = (1.0, 3.0, 10.0)) -> Table:
    """The cheapest cutoff at each price of a bluff, the run's own price among them."""
    prices = sorted({*prices, gated.bluff_cost})
    frame = pd.DataFrame([gate.cheapest_cutoff(gated.sweep, p) for p in prices])
    frame.index = pd.Index([f"{p:g}" for p in prices], name="refusals per bluff")
    return Table(frame[["cutoff", "bluffs", "refused", "cost"]].convert_dtypes())


def twins_beside_negatives(c: Calibration, gated: Refusal) -> Table:
    """Twins bluffed beside hand-written negatives bluffed (never pooled), at both cutoffs."""
    rows = {}
    for name, h in (("the twins", c.held_out), ("the chapter", c.chapter)):
        bluffs = int(gated.at(h.cutoff)["bluffs"])
        rows[name] = {"cutoff": h.cutoff, "twins bluffed": f"{h.bluffed}/{h.questions}"}
        rows[name] |= {"twin rate": h.rate, "negatives bluffed": f"{bluffs}/{gated.negatives}"}
        rows[name] |= {"negative rate": bluffs / gated.negatives}
    return Table(pd.DataFrame.from_dict(rows, orient="index").rename_axis("set by"))


def twin_distance_table(c: Calibration) -> Table:
    """The quartiles of each query's distance to its nearest chunk, and of its twin's."""
    frame = pd.DataFrame({"the query": c.twins.nearest, "its twin": c.twins.twin})
    quartiles = frame.quantile([0.25, 0.5, 0.75]).T.set_axis(["25 %", "median", "75 %"], axis=1)
    return Table(quartiles.rename_axis("nearest chunk of"))
