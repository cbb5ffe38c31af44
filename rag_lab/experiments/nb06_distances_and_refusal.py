"""Notebook 06: the identity, what the gate's distances say, and the chapter's claims.

Everything is measured on cosine distance ``1 − q·c`` between unit vectors, which for
unit vectors equals half the squared Euclidean distance: ``‖a − b‖² = 2 − 2 a·b``. The
distributions and the sweep are :func:`rag_lab.evaluation.refusal.refusal`'s; this module adds
the identity, what breaks without normalisation, the kinds of failure and what each cutoff
costs, as tables and figures; the claims are judged by the ledger and worded by
:mod:`rag_lab.claims.render`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from rag_lab import gate
from rag_lab.chunking import Chunk
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, claims, plots, twins
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.twins import Calibration
from rag_lab.experiments.present import Table
from rag_lab.experiments.probes import classify
from rag_lab.questions import Negative
from rag_lab.stats import clustered_wilson, wilson

HEADLINE = (
    "distances-overlap",
    "bluffs@0.675",
    "bluffs@0.525",
    "refused@0.525",
    "literal-match-bluff",
    "0.675-uncalibrated",
)
"""The claims this notebook opens with: the overlap, the chapter's rates at its two cutoffs,
the literal-match bluff, and the chapter's cutoff against the twin-calibrated one."""

PRICES = (1.0, 3.0, 10.0)
"""Prices of a bluff, in refused answerable queries, that the cost figure compares."""


# --- the identity ---------------------------------------------------------------------


def identity_pair(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Norms, L2, L2²/2, 1 − cos and their difference for two vectors."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    l2 = float(np.linalg.norm(a64 - b64))
    cos = float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))
    return {
        "‖a‖": float(np.linalg.norm(a64)),
        "‖b‖": float(np.linalg.norm(b64)),
        "L2": l2,
        "L2²/2": l2 * l2 / 2,
        "1 − cos": 1 - cos,
        "|L2²/2 − (1 − cos)|": abs(l2 * l2 / 2 - (1 - cos)),
    }


def identity_all_pairs(vectors: np.ndarray) -> float:
    """max |L2²/2 − (1 − cos)| over all pairs of rows, computed in float32 as an index would."""
    v = np.asarray(vectors, np.float32)
    dots = v @ v.T
    sq = np.sum(v * v, axis=1)
    l2_sq = sq[:, None] + sq[None, :] - 2 * dots
    norms = np.sqrt(sq)
    cos = dots / (norms[:, None] * norms[None, :])
    return float(np.max(np.abs(l2_sq / 2 - (1 - cos))))


def length_dependence(raw: np.ndarray, lengths: Sequence[int]) -> dict[str, float]:
    """How unnormalised vectors break the identity and tie a distance to text length.

    Returns the spread of norms, the identity's worst error on these vectors, and the
    Spearman correlation between a text's length and its vector's norm.
    """
    norms = np.linalg.norm(np.asarray(raw, np.float64), axis=1)
    rho = sps.spearmanr(lengths, norms).statistic
    return {
        "norm min": float(norms.min()),
        "norm max": float(norms.max()),
        "max |L2²/2 − (1 − cos)|": identity_all_pairs(raw),
        "Spearman(length, norm)": float(rho),
    }


def unnormalized_sample(lab: Lab, chunks: Sequence[Chunk]) -> pd.Series:
    """:func:`length_dependence` on ``chunks`` embedded without the final Normalize layer."""
    raw = lab.encoder.encode_unnormalized([c.text for c in chunks])
    return pd.Series(length_dependence(raw, [len(c.text) for c in chunks]))


# --- failure kinds (:data:`rag_lab.experiments.probes.KINDS`) -------------------------


def closest_negatives(
    negatives: np.ndarray,
    negs: Sequence[Negative],
    chunks: Sequence[Chunk],
    n: int = 5,
    per_query: int = 2,
) -> pd.DataFrame:
    """The ``n`` negatives nearest to the corpus, each with its nearest chunks and a kind."""
    nearest = negatives.min(axis=1)
    rows = []
    for qi in np.argsort(nearest, kind="stable")[:n]:
        for rank, ci in enumerate(np.argsort(negatives[qi], kind="stable")[:per_query], 1):
            c = chunks[ci]
            kind, evidence = classify(negs[qi].query, c.content)
            rows.append(
                {
                    "negative": negs[qi].id,
                    "query": negs[qi].query,
                    "rank": rank,
                    "distance": round(float(negatives[qi, ci]), 3),
                    "chunk": f"{c.doc_id} > {c.section or '(intro)'}",
                    "kind": kind,
                    "shared": evidence,
                }
            )
    return pd.DataFrame(rows)


def bluffs_at(
    negatives: np.ndarray,
    negs: Sequence[Negative],
    chunks: Sequence[Chunk],
    cutoff: float = chapter.CUTOFF,
    per_query: int = 2,
) -> pd.DataFrame:
    """Every negative the gate lets through at ``cutoff`` (a bluff), nearest first, each with
    its nearest chunks and a kind (:func:`classify`)."""
    n = int((negatives.min(axis=1) < cutoff).sum())
    return closest_negatives(negatives, negs, chunks, n=n, per_query=per_query)


# --- tables that fit a page ------------------------------------------------------------------


def identity_table(pair: dict[str, float], all_pairs: float | None = None, n: int = 0) -> Table:
    """:func:`identity_pair` as one row: the two norms, both distances and their gap; given
    ``all_pairs`` (:func:`identity_all_pairs` over ``n`` vectors), a second row with that
    largest gap alone."""

    def cell(v: float) -> str:
        return f"{v:.9f}" if v > 1e-4 else f"{v:.2e}"

    rows = {"chunks 0 and 1": {k: cell(v) for k, v in pair.items()}}
    gap = "|L2²/2 − (1 − cos)|"
    if all_pairs is not None:
        rows[f"max, {n} × {n}"] = {k: cell(all_pairs) if k == gap else "–" for k in pair}
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("pair"),
        caption="Two chunk vectors of the index: their norms, L2 distance, half its square "
        "and the cosine distance"
        + (f"; then the largest gap over every pair of the first {n} chunks" if n else ""),
    )


def unnormalized_table(u: pd.Series) -> Table:
    """:func:`unnormalized_sample` as a two-column table."""
    frame = pd.DataFrame({"value": [f"{v:.3f}" for v in u.to_numpy()]}, index=u.index)
    return Table(frame.rename_axis("without the Normalize layer"))


def overlap_view(gated: Refusal) -> Table:
    """:attr:`Refusal.overlap` with short headers and its units (queries, negatives)."""
    o = gated.overlap
    frame = pd.DataFrame(
        {
            "farthest answer": [
                f"{d:.3f} ({q})" for d, q in zip(o["worst in-domain"], o["query"], strict=True)
            ],
            "nearest negative": [
                f"{d:.3f} ({n})"
                for d, n in zip(o["best out-of-domain"], o["negative"], strict=True)
            ],
            "overlap": o["overlap"],
            "answers farther": o["in-domain above best out-of-domain"],
            "negatives nearer": o["negatives below worst in-domain"],
        },
        index=o.index,
    )
    return Table(
        frame,
        caption="Per wording: the answerable query farthest from its needle's chunk against "
        "the negative nearest to any chunk (cosine distance); answers farther: answerable "
        "queries beyond that negative; negatives nearer: negatives within that answer",
    )


def outcomes_view(gated: Refusal) -> Table:
    """:attr:`Refusal.at_chapter`: counts out of their totals at no cutoff and the chapter's
    two, beside the chapter's own."""
    return Table(
        gated.at_chapter.rename(columns={"answered without needle": "without needle"}),
        caption="Bluffs: negatives answered; refused: answerable queries refused; without "
        "needle: answerable queries answered with no chunk that holds the needle",
    )


def price_table(gated: Refusal, prices: Sequence[float] = PRICES) -> Table:
    """The cheapest cutoff at each price of a bluff (:func:`rag_lab.gate.cheapest_cutoff`),
    the notebook's own price among them: its bluffs, refusals and cost."""
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


def bluffs_view(failures: pd.DataFrame) -> Table:
    """:func:`bluffs_at` as a table: each bluff's two nearest chunks and what they share."""
    return Table(
        failures.drop(columns="query"),
        caption=f"Every negative under {chapter.CUTOFF}, nearest first: its two nearest chunks, "
        "their cosine distance and what the negative shares with each",
        shorten={"chunk": 38, "shared": 20},
    )


def twins_view(c: Calibration) -> Table:
    """:func:`rag_lab.evaluation.twins.held_out_view`: the twin-calibrated cutoff and the
    chapter's, scored on the held-out questions only."""
    return Table(
        twins.held_out_view(c),
        caption=f"Scored on the {c.held_out.questions} held-out questions "
        f"({c.held_out.queries} queries); chosen on the other {len(c.chosen_on)}. Bluffed: "
        f"questions whose twin passes; upper: exact one-sided bound (Clopper–Pearson); "
        "refused: answerable queries, 95 % by question",
    )


def twins_beside_negatives(c: Calibration, gated: Refusal) -> Table:
    """At the twin-calibrated cutoff and the chapter's: the held-out questions whose twin
    passes, beside the hand-written negatives that pass (two kinds, never pooled)."""
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
    """Every query's distance to its nearest chunk, and its twin's to the nearest chunk left
    (both halves): the quartiles."""
    quartiles = {"25 %": 0.25, "median": 0.5, "75 %": 0.75}
    frame = pd.DataFrame(
        [
            {name: float(np.quantile(v, q)) for name, q in quartiles.items()}
            for v in (c.twins.nearest, c.twins.twin)
        ],
        index=["the query", "its twin"],
    )
    return Table(
        frame.rename_axis("nearest chunk of"),
        caption=f"Cosine distance to the nearest chunk, over the {len(c.twins.nearest)} "
        "answerable queries: the query's, and its twin's once every chunk holding the needle "
        "is removed",
    )


# --- what each cutoff costs ------------------------------------------------------------------


def cost_figure(gated: Refusal, step: float = 0.05, prices: Sequence[float] = PRICES):
    """What each cutoff costs, in two panels. Left: for each cutoff swept, the share of
    answerable queries refused against the share of negatives answered (bluffs), a line
    through every cutoff and, every ``step``, a point with both 95 % intervals (refusals:
    the questions as the sample; bluffs: Wilson over the negatives); the chapter's points are
    black crosses; the grey line is every pair as costly as the cheapest cutoff at the
    notebook's price. Right: the cost, price × bluffs + refused, against the cutoff for each
    of ``prices``, each minimum marked."""
    import matplotlib.pyplot as plt

    sweep = gated.sweep[gated.sweep["cutoff"].notna()].reset_index(drop=True)
    m, p = gated.answerable, gated.negatives
    x = sweep["refused"].to_numpy() / m
    y = sweep["bluffs"].to_numpy() / p
    ink, mid = plots.NEUTRAL["ink"], plots.NEUTRAL["mid"]
    every = np.isclose((sweep["cutoff"] / step) % 1, 0, atol=1e-6) | np.isclose(
        (sweep["cutoff"] / step) % 1, 1, atol=1e-6
    )
    with plots.style():
        fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.9), width_ratios=(1.1, 1))
        left.plot(x, y, color=mid, lw=1.0, zorder=1)
        labels: dict[tuple[float, float], list[str]] = {}
        for i in np.flatnonzero(every):
            row = sweep.iloc[i]
            labels.setdefault((x[i], y[i]), []).append(f"{row['cutoff']:.2f}")
            rx = clustered_wilson(gated.refused_at(row), gated.clusters)
            by = wilson(int(row["bluffs"]), p)
            left.errorbar(
                x[i],
                y[i],
                xerr=[[x[i] - rx[0]], [rx[1] - x[i]]],
                yerr=[[y[i] - by[0]], [by[1] - y[i]]],
                fmt="o",
                ms=4,
                color=plots.ROLE_COLORS["answerable"],
                ecolor=plots.NEUTRAL["faint"],
                elinewidth=0.8,
                zorder=3,
            )
        for (px, py), cut in labels.items():  # cutoffs with the same outcome share a label
            left.annotate(
                ", ".join(cut), (px, py), xytext=(5, 4), textcoords="offset points", fontsize=7
            )
        best = gated.cheapest
        bx, by_ = best["refused"] / m, best["bluffs"] / p
        left.plot(
            bx,
            by_,
            "o",
            ms=11,
            mfc="none",
            mec=ink,
            mew=1.2,
            zorder=4,
            label=f"cheapest at {gated.bluff_cost:g} refusals per bluff: {best['cutoff']:.3f}",
        )
        # Every (refused, bluffs) as costly as the cheapest: price × p × y + m × x = cost.
        grid = np.linspace(0, 1, 50)
        left.plot(
            grid,
            (best["cost"] - m * grid) / (gated.bluff_cost * p),
            color=ink,
            lw=0.7,
            ls=":",
            label="as costly as the cheapest",
        )
        chapter_points = [
            (chapter.REFUSED_ANSWERABLE.get(c), b, c) for c, b in chapter.BLUFFS.items()
        ]
        shown = [(r, b, c) for r, b, c in chapter_points if r is not None or c is None]
        for i, (r, b, c) in enumerate(shown):
            left.plot(
                (r or 0) / chapter.CORPUS["queries"],
                b / chapter.NEGATIVES,
                **plots.CHAPTER_MARK,
                zorder=5,
                label="the chapter's points" if i == 0 else None,
            )
            left.annotate(
                "the chapter, no cutoff" if c is None else f"the chapter, {c}",
                ((r or 0) / chapter.CORPUS["queries"], b / chapter.NEGATIVES),
                xytext=(6, -10),
                textcoords="offset points",
                fontsize=7,
            )
        left.set_xlim(-0.02, 1.0)
        left.set_ylim(-0.02, 1.05)
        left.set_xlabel(f"answerable queries refused (share of {m}; bars: 95 %, by question)")
        left.set_ylabel(f"negatives answered: bluffs (share of {p}; bars: Wilson 95 %)")
        left.set_title(
            f"Each cutoff's bluffs against its refusals (labelled every {step:g})", fontsize=9
        )
        left.legend(loc="upper right", fontsize=7.5)

        styles = dict(zip(prices, ("--", "-", "-."), strict=False))
        for price in prices:
            cost = price * sweep["bluffs"] + sweep["refused"]
            chosen = price == gated.bluff_cost
            right.plot(
                sweep["cutoff"],
                cost,
                color=ink if chosen else mid,
                lw=1.6 if chosen else 1.0,
                ls=styles.get(price, "-"),
                label=f"{price:g} {'refusal' if price == 1 else 'refusals'} per bluff",
            )
            i = int(np.argmin(cost.to_numpy()))
            right.plot(
                sweep["cutoff"].iloc[i], cost.iloc[i], "o", color=ink if chosen else mid, ms=5
            )
        right.axvline(chapter.CUTOFF, color=mid, lw=0.8, ls="--")
        right.text(
            chapter.CUTOFF,
            right.get_ylim()[1],
            f" the chapter's {chapter.CUTOFF}",
            va="top",
            fontsize=7,
        )
        right.set_xlabel("cutoff (cosine distance)")
        right.set_ylabel("cost: price × bluffs + refused (queries)")
        right.set_title(
            f"The cost of each cutoff at {len(prices)} prices of a bluff (dot: the cheapest)",
            fontsize=9,
        )
        right.legend(loc="upper left", fontsize=7.5)
        fig.suptitle(
            f"Strategy {gated.strategy}: what each cutoff costs ({m} answerable queries, "
            f"{len(set(gated.clusters))} questions; {p} negatives)",
            fontsize=10,
        )
        fig.tight_layout()
    return fig


def entries(
    identity_unit: float, gated: Refusal, traps: pd.DataFrame, calibrated: Calibration
) -> list[Entry]:
    """The chapter's distance and threshold claims: this notebook's part of the ledger. The
    literal-match failure is judged on the probes' trap negatives (``traps``,
    :func:`rag_lab.experiments.probes.trap_table`), which are built to trigger it; the
    chapter's cutoff on the unanswerable twins (``calibrated``,
    :func:`rag_lab.evaluation.twins.calibrate`)."""
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
        *claims.refusal_entries(gated, "06", "d2l"),
        count_entry(
            "literal-match-bluff",
            **at,
            holds=len(landed) > 0,
            here=", ".join(f"{i} at {d:.3f}" for i, d in landed["distance"].items()) or "none",
        ),
        *twins.entries(calibrated, "06", "d2l"),
    ]
