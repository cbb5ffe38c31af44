"""Distances and the refusal threshold: the identity, the two distributions, the bluff curve.

Everything is measured on cosine distance ``1 − q·c`` between unit vectors, which for
unit vectors equals half the squared Euclidean distance: ``‖a − b‖² = 2 − 2 a·b``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from rag_lab import dense, gate
from rag_lab.chunking import Chunk
from rag_lab.experiments import chapter, plots, tables
from rag_lab.experiments.lab import Lab
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Negative, Query
from rag_lab.stats import wilson
from rag_lab.text import counted, longest_common_run, words

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


# --- the two distributions -----------------------------------------------------------


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
    """Worst in-domain (needle) distance vs best out-of-domain distance, per phrasing."""
    rows = []
    best_out = int(np.argmin(d.negative))
    for phrasing in ("course", "ticket", "both"):
        mask = np.array([phrasing in ("both", q.phrasing) for q in queries])
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


def histogram_figure(d: Distances, negs: Sequence[Negative], strategy: str):
    """Answerable queries against negatives, drawn as outlines so the overlap stays visible.

    Two panels share the x axis: on top, each answerable query's distance to its needle's
    chunk (what a cutoff must keep) and to its nearest chunk of any kind (what the gate
    actually compares); below, each negative's distance to its nearest chunk, by kind.
    """
    import matplotlib.pyplot as plt

    bins = np.arange(0.1, 1.0001, 0.025)
    kinds = np.array([n.kind for n in negs])
    outline = {"histtype": "step", "lw": 1.6}
    with plots.style():
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 5.2), sharex=True)
        top.hist(
            d.needle,
            bins=bins,
            color="#1565c0",
            **outline,
            label=f"to the needle's chunk (n = {len(d.needle)})",
        )
        top.hist(
            d.nearest,
            bins=bins,
            color="#1565c0",
            ls=":",
            **outline,
            label="to the nearest chunk, the distance the gate uses",
        )
        for kind, color in (("uncovered", "#e65100"), ("offtopic", "#ffb74d")):
            values = d.negative[kinds == kind]
            bottom.hist(
                values,
                bins=bins,
                color=color,
                **outline,
                label=f"{kind} negatives: nearest chunk (n = {len(values)})",
            )
        worst_in, best_out = np.nanmax(d.needle), d.negative.min()
        for ax in (top, bottom):
            ax.axvspan(best_out, worst_in, color="#9e9e9e", alpha=0.15, lw=0)
            ax.axvline(worst_in, color="#1565c0", ls="--", lw=0.9)
            ax.axvline(best_out, color="#e65100", ls="--", lw=0.9)
            ax.set_ylabel("queries")
            ax.legend(loc="upper left", fontsize=8)
        top.set_title(
            f"Strategy {strategy}: answerable queries (top), negatives (bottom)\nshaded: the "
            f"overlap, from the best negative ({best_out:.3f}) to the worst answer "
            f"({worst_in:.3f})",
            fontsize=9,
        )
        bottom.set_xlabel("cosine distance (1 − cos)")
        fig.tight_layout()
    return fig


# --- the bluff curve -------------------------------------------------------------------


def bluff_figure(
    table: pd.DataFrame,
    n_answerable: int,
    n_negatives: int,
    chosen: float | None = None,
):
    """Bluffs and refusals as the cutoff sweeps: counts as steps with Wilson 95 % bands, the
    chapter's three reported points, and the cutoff this notebook picks (``chosen``)."""
    import matplotlib.pyplot as plt

    t = table[table["cutoff"].notna()]
    with plots.style():
        fig, ax = plt.subplots(figsize=(7.5, 4.2))
        lines = (
            (
                "bluffs",
                n_negatives,
                "#e65100",
                "-",
                f"negatives answered: bluffs (of {n_negatives})",
            ),
            ("refused", n_answerable, "#1565c0", "-", f"answerable refused (of {n_answerable})"),
            (
                "answered without needle",
                n_answerable,
                "#6a1b9a",
                "--",
                f"answered without the needle (of {n_answerable})",
            ),
        )
        for column, total, color, style, label in lines:
            counts = t[column].to_numpy(dtype=int)
            bands = np.array([wilson(int(k), total) for k in counts])
            ax.step(
                t["cutoff"],
                counts / total,
                where="post",
                color=color,
                ls=style,
                lw=1.5,
                label=label,
            )
            if style == "-":
                ax.fill_between(
                    t["cutoff"],
                    bands[:, 0],
                    bands[:, 1],
                    step="post",
                    color=color,
                    alpha=0.12,
                    lw=0,
                )
        for cutoff, bluffs in chapter.BLUFFS.items():
            x = t["cutoff"].min() if cutoff is None else cutoff
            ax.plot(
                x,
                bluffs / chapter.NEGATIVES,
                "o",
                mfc="white",
                mec="#e65100",
                ms=6,
                label="the chapter's bluffs" if cutoff is None else None,
            )
        for cutoff, refused in chapter.REFUSED_ANSWERABLE.items():
            ax.plot(
                cutoff,
                refused / chapter.CORPUS["queries"],
                "s",
                mfc="white",
                mec="#1565c0",
                ms=6,
                label="the chapter's refusals",
            )
        if chosen is not None:
            ax.axvline(chosen, color="k", lw=0.9, ls=":")
            ax.text(chosen, 1.02, f"chosen here: {chosen:.3f}", ha="center", fontsize=7)
        ax.set_xlabel("cutoff (cosine distance; keep ≤ 4 chunks strictly below it)")
        ax.set_ylabel("share of queries (bands: Wilson 95 %)")
        ax.set_ylim(0, 1.08)
        ax.set_title(
            "The bluff curve: every cutoff trades bluffs for refusals\n"
            "open marks: the chapter's points (its no-cutoff point at the left edge)",
            fontsize=9,
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, fontsize=8)
        fig.tight_layout()
    return fig


# --- failure kinds -------------------------------------------------------------------

_STOP = frozenset(
    "a an and are as at be but by can do does for from how i if in into is it its me my "
    "of on or should so that the their them then there these this to up use using was "
    "what when where which while who why will with without you your".split()
)


def classify(query: str, content: str, literal_words: int = 4) -> tuple[str, str]:
    """(kind, evidence) for a negative and a chunk it lands near.

    ``literal match``: the chunk contains a run of at least ``literal_words`` consecutive
    words of the query; ``near miss``: they share content words but no such run;
    ``semantic only``: they share no content word.
    """
    qw, cw = words(query), words(content)
    run = longest_common_run(qw, cw)
    if len(run) >= literal_words:
        return "literal match", " ".join(run)
    shared = sorted({w for w in qw if w not in _STOP} & set(cw))
    if shared:
        return "near miss", ", ".join(shared)
    return "semantic only", ""


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


def reading(
    identity_unit: float,
    unnormalized: dict[str, float],
    overlap: pd.DataFrame,
    sweep_table: pd.DataFrame,
    cheapest: pd.Series,
    bluff_cost: float,
    failures: pd.DataFrame,
    n_answerable: int,
    n_negatives: int,
) -> str:
    """A plain-language verdict on the chapter's distance and threshold claims."""
    both = overlap.loc["both"]

    def at(c: float | None) -> pd.Series:
        if c is None:
            return sweep_table[sweep_table["cutoff"].isna()].iloc[0]
        return sweep_table.loc[(sweep_table["cutoff"] - c).abs().idxmin()]

    none, hi, lo = at(None), at(chapter.CUTOFF), at(chapter.STRICT_CUTOFF)
    kinds = failures.drop_duplicates("negative").groupby("kind")["negative"].apply(list)
    lines = [
        f"- **Identity.** On the index's unit vectors, max |L2²/2 − (1 − cos)| over all pairs "
        f"is {identity_unit:.1e}, floating-point noise (the chapter: "
        f"{chapter.IDENTITY_MAX_DIFF:.1e}). Without normalisation norms range from "
        f"{unnormalized['norm min']:.2f} to {unnormalized['norm max']:.2f}, the identity is off "
        f"by up to {unnormalized['max |L2²/2 − (1 − cos)|']:.1f}, and a text's norm follows its "
        f"length (Spearman ρ = {unnormalized['Spearman(length, norm)']:+.2f}).",
        f"- **Overlap.** The worst in-domain query ({both['query']}) is "
        f"{both['worst in-domain']:.3f} from its answer; the best out-of-domain one "
        f"({both['negative']}) is {both['best out-of-domain']:.3f} from a chunk (the chapter: "
        f"{chapter.WORST_IN_DOMAIN} and {chapter.BEST_OUT_OF_DOMAIN}). "
        + (
            "The distributions overlap, so no cutoff is right for both."
            if both["overlap"]
            else "Here they do not overlap: some cutoff separates them."
        ),
        f"- **Bluffs.** With no cutoff, {int(none['bluffs'])} of {n_negatives} negatives get an "
        f"answer (the chapter: {chapter.BLUFFS[None]} of {chapter.NEGATIVES}). At "
        f"{chapter.CUTOFF}: {counted(int(hi['bluffs']), 'bluff')} and "
        f"{counted(int(hi['refused']), 'refusal')} (the chapter: "
        f"{chapter.BLUFFS[chapter.CUTOFF]} bluffs). At {chapter.STRICT_CUTOFF}: "
        f"{counted(int(lo['bluffs']), 'bluff')}, {int(lo['refused'])} of {n_answerable} "
        f"answerable queries refused (the chapter: {chapter.BLUFFS[chapter.STRICT_CUTOFF]} and "
        f"{chapter.REFUSED_ANSWERABLE[chapter.STRICT_CUTOFF]}).",
        f"- **A cutoff is a price.** If one bluff costs as much as {bluff_cost:g} refusals, the "
        f"cheapest cutoff here is {cheapest['cutoff']:.3f}: "
        f"{counted(int(cheapest['bluffs']), 'bluff')} and "
        f"{counted(int(cheapest['refused']), 'refusal')}. Change the price and the cutoff moves.",
    ]
    found = "; ".join(f"{kind}: {', '.join(ids)}" for kind, ids in kinds.items())
    n_bluffs = failures["negative"].nunique()
    literal = "literal match" in kinds.index
    lines.append(
        f"- **Failure kinds of every bluff at {chapter.CUTOFF}** ({n_bluffs} negatives, each "
        f"judged on its two nearest chunks) — {found or 'none'}. "
        + (
            "Both of the chapter's kinds appear."
            if literal and "near miss" in kinds.index
            else "Literal matches appear."
            if literal
            else "No bluff matches a passage literally, so the chapter's literal-match failure "
            "is not observed here; but none of these negatives was built to trigger it, so "
            "this is an absence of evidence, not evidence of absence."
        )
    )
    claims = tables.count_claims(
        [
            (
                "cosine distance = L2²/2 on unit vectors",
                f"max error {chapter.IDENTITY_MAX_DIFF:.1e}",
                f"max error {identity_unit:.1e}",
                "reproduces" if identity_unit < 1e-5 else "does not reproduce",
            ),
            (
                "in-domain and out-of-domain distances overlap",
                f"worst in {chapter.WORST_IN_DOMAIN}, best out {chapter.BEST_OUT_OF_DOMAIN}",
                f"worst in {both['worst in-domain']:.3f}, best out "
                f"{both['best out-of-domain']:.3f}",
                "reproduces" if both["overlap"] else "does not reproduce",
            ),
            (
                "without a cutoff every negative is answered",
                f"{chapter.BLUFFS[None]} of {chapter.NEGATIVES}",
                f"{int(none['bluffs'])} of {n_negatives}",
                "reproduces" if int(none["bluffs"]) == n_negatives else "does not reproduce",
            ),
            (
                f"a cutoff of {chapter.CUTOFF} still bluffs",
                f"{chapter.BLUFFS[chapter.CUTOFF]} of {chapter.NEGATIVES}",
                f"{int(hi['bluffs'])} of {n_negatives}",
                "reproduces" if int(hi["bluffs"]) > 0 else "does not reproduce",
            ),
            (
                f"{chapter.STRICT_CUTOFF} trades bluffs for refusals",
                f"{chapter.BLUFFS[chapter.STRICT_CUTOFF]} bluffs, "
                f"{chapter.REFUSED_ANSWERABLE[chapter.STRICT_CUTOFF]} refused",
                f"{int(lo['bluffs'])} bluffs, {int(lo['refused'])} refused",
                "reproduces"
                if int(lo["bluffs"]) < int(hi["bluffs"]) and int(lo["refused"]) > int(hi["refused"])
                else "does not reproduce",
            ),
        ]
    )
    return "\n".join(lines) + "\n\n" + claims


def _chapter_count(table: dict, cutoff: float | None, total: int) -> str:
    value = table.get(cutoff)
    return "" if value is None else f"{value}/{total}"
