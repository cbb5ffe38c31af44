"""Notebook 04: dense, BM25 and their fusion on one chunking, worded against the chapter.

The measures are :func:`rag_lab.evaluation.retrieval.systems`'s (a
:class:`~rag_lab.evaluation.retrieval.Systems` record); this module lays the record out in
tables that fit a page, draws where each query's needle lands under dense and BM25, and
reads the record (its recall figure is :func:`rag_lab.evaluation.figures.systems_figure`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.evaluation import chapter, claims, plots
from rag_lab.evaluation.ledger import Direction, Entry
from rag_lab.evaluation.recall import KS
from rag_lab.evaluation.retrieval import TWO_BY_TWO_KS, Systems
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.experiments import probes
from rag_lab.experiments.present import Table
from rag_lab.experiments.timing import CONDITION, Latency, cost_table
from rag_lab.metrics import Ranks, hits_at, paired_at
from rag_lab.questions import Query

HEADLINE = (
    "BM25>dense@R1",
    "hybrid>BM25@R4",
    "hybrid=dense@R4",
    "hybrid-every-column",
    "hybrid>dense@R8:identifiers",
)
"""The claims this notebook opens with: the chapter's top-1 and fusion claims on its
questions, and fusion on the identifier probes."""

SYSTEMS = {
    "dense": "cosine distance between all-MiniLM-L6-v2 vectors",
    "BM25": "Robertson–Zaragoza, k1 = 1.2, b = 0.75",
    "hybrid": "reciprocal rank fusion of the two, k = 60",
}
"""The three retrievers, as the text above a table names them."""


def entries(systems: Systems) -> list[Entry]:
    """The chapter's claims about dense, BM25 and hybrid: this notebook's part of the ledger."""
    return claims.system_entries(systems, "04", "d2l")


def legend() -> str:
    """The retrievers in one line, for the text above a table: ``**dense** cosine … · …``."""
    return " · ".join(f"**{name}** {what}" for name, what in SYSTEMS.items())


# --- tables that fit a page -----------------------------------------------------------------


def recall_tables(systems: Systems) -> tuple[Table, Table]:
    """Recall@k of each retriever with the design's interval; then MRR and what the chapter's
    table shows: Wilson's interval over the queries, and the queries missed."""
    n, questions = systems.recall.rows[0].n, len(set(systems.clusters))
    view = systems.recall.view(intervals="by question")
    recall = Table(
        view[[f"R@{k}" for k in systems.recall.ks]].rename_axis("retriever"),
        caption=f"Recall@k over {n} queries, 95 % interval with the {questions} questions as "
        "the sample",
    )
    per_query = systems.recall.view(intervals="per query")
    chapter_view = pd.DataFrame(
        {
            "MRR": view["MRR"],
            "R@1 per query": per_query["R@1"],
            "R@20 per query": per_query["R@20"],
            "queries missed": view["no hit"],
        },
        index=view.index,
    ).rename_axis("retriever")
    return recall, Table(
        chapter_view,
        caption=f"MRR, and as the chapter tabulates recall: Wilson's interval over the {n} "
        "queries; queries missed: no chunk in the whole ranking holds the needle",
    )


def agreement_table(systems: Systems, ks: Sequence[int] = TWO_BY_TWO_KS) -> Table:
    """Per k, the queries both retrievers find within k, each one alone, and neither; and the
    questions behind the queries only one finds."""
    rows = {}
    clusters = np.asarray(systems.clusters)
    for k in ks:
        d, b = hits_at(systems.ranks["dense"], k), hits_at(systems.ranks["BM25"], k)
        rows[f"R@{k}"] = {
            "both": int((d & b).sum()),
            "dense only": int((d & ~b).sum()),
            "BM25 only": int((~d & b).sum()),
            "neither": int((~d & ~b).sum()),
            "questions, dense only": len(set(clusters[d & ~b])),
            "questions, BM25 only": len(set(clusters[~d & b])),
        }
    n, questions = len(clusters), len(set(clusters))
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("within"),
        caption=f"Queries (of {n}) each retriever finds within k; the last two columns count "
        f"the questions (of {questions}) behind the queries only one finds",
    )


def found_by_one(systems: Systems, queries: Sequence[Query], k: int = 8) -> pd.DataFrame:
    """The queries that exactly one of dense and BM25 finds within ``k``, with all three ranks
    and ``found by`` (which of the two finds it)."""
    ranks = systems.ranks
    found = pd.DataFrame(
        {
            "query": [q.id for q in queries],
            "text": [q.text for q in queries],
            "dense rank": ranks["dense"],
            "BM25 rank": ranks["BM25"],
            "hybrid rank": ranks["hybrid"],
        }
    )
    dense_hit, bm25_hit = hits_at(ranks["dense"], k), hits_at(ranks["BM25"], k)
    found["found by"] = np.where(dense_hit, "dense", "BM25")
    return found[dense_hit != bm25_hit].sort_values("query").set_index("query")


def found_by_one_summary(systems: Systems, queries: Sequence[Query], k: int = 8) -> Table:
    """The queries only one retriever finds within ``k``, summed up: how many, over how many
    questions, how far the other one ranks them, and whether the fusion keeps them."""
    found = found_by_one(systems, queries, k)
    question = {q.id: q.question.id for q in queries}
    rows = {}
    for finder, other in (("dense", "BM25"), ("BM25", "dense")):
        part = found[found["found by"] == finder]
        other_ranks = part[f"{other} rank"].dropna()
        hybrid = part["hybrid rank"]
        rows[f"{finder} only"] = {
            "queries": len(part),
            "questions": len({question[i] for i in part.index}),
            "the other's median rank": f"{other_ranks.median():.0f}" if len(other_ranks) else "–",
            f"hybrid within {k}": int((hybrid.notna() & (hybrid <= k)).sum()),
        }
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("found by")
    return Table(
        frame,
        caption=f"Queries found within {k} by one retriever and not the other: where the other "
        f"ranks their needle, and how many the hybrid still ranks within {k}",
    )


def found_by_one_examples(
    systems: Systems, queries: Sequence[Query], k: int = 8, each: int = 3
) -> Table:
    """The ``each`` queries per side that the other retriever ranks worst: what kind of
    wording one retriever finds and the other loses."""
    found = found_by_one(systems, queries, k)
    picked = []
    for finder, other in (("dense", "BM25"), ("BM25", "dense")):
        part = found[found["found by"] == finder]
        worst = part[f"{other} rank"].fillna(np.inf).sort_values(ascending=False, kind="stable")
        picked.append(part.loc[worst.index[:each]])
    shown = pd.concat(picked)[["found by", "dense rank", "BM25 rank", "hybrid rank", "text"]]
    return Table(
        shown.astype({c: "Int64" for c in ("dense rank", "BM25 rank", "hybrid rank")}),
        caption=f"The {each} queries of each side that the other retriever ranks lowest "
        "(rank of the first chunk holding the needle)",
        shorten={"text": 40},
    )


def paired_table(systems: Systems) -> Table:
    """Every comparison of the family: the difference by question with its interval, the
    question-level test, the chapter's per-query test, the chapter's result."""
    return Table(
        systems.paired.view(chapter.paired_reference).rename(columns={"questions": "won/lost"}),
        caption="a − b in Recall@k; won/lost: the questions a wins and loses; p: their sign "
        "test, unadjusted",
    )


def costs(latencies: Sequence[Latency], shorten: int | None = None, note: str = "") -> Table:
    """What each stage costs per query, beside the chapter's figures (the stage's name held
    to ``shorten`` characters: wrapped in HTML, cut in plain text; ``note`` ends the caption)."""
    table = cost_table(latencies)
    digits = {"median ms": 3, "p90 ms": 3, "× cheapest": 1, "chapter ms": 2, "chapter ×": 1}
    for column, places in digits.items():
        table[column] = ["–" if v != v else f"{v:,.{places}f}" for v in table[column]]
    return Table(
        table,
        shorten={"index": shorten} if shorten else {},
        caption=f"ms per query, timed {CONDITION}; p90: the 90th percentile; × cheapest: the "
        "median over the cheapest stage's" + (f"; {note}" if note else ""),
    )


# --- where each query's needle lands --------------------------------------------------------


def rank_figure(systems: Systems, k: int = 8, seed: int = 0):
    """Each query's first-hit rank under dense (x) against BM25 (y), log scales, with lines at
    ``k``: the quadrants are the two-by-two table; a filled dot is a query the hybrid finds
    within ``k``. Points at equal ranks are spread a little (seeded) so each one shows."""
    import matplotlib.pyplot as plt

    ranks = systems.ranks
    ceiling = max(r for name in ranks for r in ranks[name] if r is not None)
    missing = any(r is None for name in ("dense", "BM25") for r in ranks[name])
    # A query never hit sits past the deepest rank, on a line of its own.
    never = 10 ** (np.ceil(np.log10(ceiling)) + 0.5) if missing else ceiling
    top, bottom = never * 1.8, 0.45

    def position(values: Ranks) -> np.ndarray:
        return np.array([never if r is None else r for r in values], dtype=float)

    x, y = position(ranks["dense"]), position(ranks["BM25"])
    rng = np.random.default_rng(seed)
    jx, jy = (v * 10 ** rng.uniform(-0.06, 0.06, len(v)) for v in (x, y))
    kept = hits_at(ranks["hybrid"], k)
    color = plots.SYSTEM_COLORS["hybrid"]
    d, b = hits_at(ranks["dense"], k), hits_at(ranks["BM25"], k)
    quadrants = {
        "both": (d & b, (0.8, bottom * 1.08), "left", "bottom"),
        "dense only": (d & ~b, (0.8, top * 0.9), "left", "top"),
        "BM25 only": (~d & b, (top * 0.9, bottom * 1.08), "right", "bottom"),
        "neither": (~d & ~b, (top * 0.9, top * 0.9), "right", "top"),
    }
    with plots.style():
        fig, ax = plt.subplots(figsize=(7.2, 5.6))
        ax.scatter(
            jx[kept],
            jy[kept],
            s=26,
            color=color,
            lw=0.6,
            edgecolor=color,
            zorder=3,
            label=f"the hybrid finds it within {k} ({int(kept.sum())})",
        )
        ax.scatter(
            jx[~kept],
            jy[~kept],
            s=26,
            facecolor="none",
            edgecolor=plots.NEUTRAL["ink"],
            lw=0.8,
            zorder=3,
            label=f"the hybrid does not ({int((~kept).sum())})",
        )
        for line in (ax.axvline, ax.axhline):
            line(k + 0.5, color=plots.NEUTRAL["ink"], lw=0.8, ls="--")
        ax.plot([bottom, top], [bottom, top], color=plots.NEUTRAL["faint"], lw=0.8)
        for name, (mask, (tx, ty), ha, va) in quadrants.items():
            ax.text(
                tx,
                ty,
                f"{name}: {int(mask.sum())}",
                ha=ha,
                va=va,
                fontsize=8,
                color=plots.NEUTRAL["ink"],
                fontweight="bold",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(bottom, top)
        ax.set_ylim(bottom, top)
        ticks = [t for t in (1, 10, 100, 1000, 10000) if t <= ceiling]
        labels = [str(t) for t in ticks]
        if missing:
            ticks, labels = [*ticks, never], [*labels, "never"]
        ax.set_xticks(ticks, labels)
        ax.set_yticks(ticks, labels)
        ax.minorticks_off()
        ax.set_xlabel(f"dense: rank of the first chunk holding the needle (log; dashed: {k})")
        ax.set_ylabel(f"BM25: rank of the first chunk holding the needle (log; dashed: {k})")
        n, questions = len(x), len(set(systems.clusters))
        ax.set_title(
            f"Strategy {systems.strategy}: where each query's needle lands, dense against BM25\n"
            f"(n = {n} queries, {questions} questions; a dot is a query, spread a little so "
            "equal ranks show; grey line: equal ranks)",
            fontsize=9,
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2, fontsize=8)
        fig.tight_layout()
    return fig


# --- the reading ----------------------------------------------------------------------------


def reading(
    systems: Systems,
    probe_ranks: Mapping[str, Ranks] | None = None,
    traps: pd.DataFrame | None = None,
    judged: Sequence[Entry] = (),
) -> str:
    """What the tables add to the findings, as Markdown bullets: top-1 and rank 8, the
    different failures, the fusion's point estimates, (given) the identifier probes and the
    literal traps (:func:`rag_lab.experiments.probes.reading`), and how the intervals of
    ``judged`` (the ledger's entries) read beside their verdicts."""
    lines = [_top1(systems), _different_failures(systems), _hybrid_points(systems)]
    if probe_ranks is not None and traps is not None:
        lines += probes.reading(probe_ranks, traps)
    lines += _intervals(judged)
    return "\n".join(lines)


def _top1(s: Systems) -> str:
    r1 = {name: s.recall[name].at(1) for name in s.ranks}
    r8 = {name: s.recall[name].at(8) for name in s.ranks}
    top1 = paired_at(s.ranks["BM25"], s.ranks["dense"], 1)
    ratio = r1["BM25"] / r1["dense"] if r1["dense"] else float("inf")
    return (
        f"- **Top-1.** BM25 R@1 = {r1['BM25']:.3f}, dense {r1['dense']:.3f}: {ratio:.2f}× "
        f"dense's (the chapter: more than double); BM25 vs dense per query {top1}."
        f"\n- **Rank 8.** dense {r8['dense']:.3f}, BM25 {r8['BM25']:.3f}."
    )


def _intervals(judged: Sequence[Entry]) -> list[str]:
    """The paired claims whose interval says more, or less, than their verdict: one that
    excludes zero while the ledger's test (after Holm over its family) does not clear, and a
    no-difference claim whose interval reaches past the margin."""
    paired = [e for e in judged if e.ci is not None and e.direction is not Direction.VALUE]
    apart = [
        e for e in paired if (e.ci[0] > 0 or e.ci[1] < 0) and e.verdict is Verdict.INCONCLUSIVE
    ]
    wide = [
        e
        for e in paired
        if e.direction is Direction.SAME
        and e.margin is not None
        and e.ci[0] <= 0 <= e.ci[1]
        and (e.ci[0] < -e.margin or e.ci[1] > e.margin)
    ]
    lines = []
    if apart:
        listed = "; ".join(f"{e.claim} {e.interval} ({_p(e)})" for e in apart)
        lines.append(
            f"- **Intervals that exclude zero, verdicts that stay inconclusive.** {listed}. Each "
            "interval, read alone, excludes zero; the ledger judges the question-level sign "
            "test (Holm-adjusted within a confirmatory family), which does not clear: this "
            "design cannot confirm these differences, which is not evidence that they are absent."
        )
    for e in wide:
        lines.append(
            f"- **{e.claim}.** {e.interval} by question includes zero, and differences past "
            f"the margin of ±{e.margin:.2f} too: this design cannot tell {e.statement!r} "
            "apart from a difference, which is not evidence of either."
        )
    return lines


def _p(e: Entry) -> str:
    if e.p_adjusted is not None:
        return f"Holm p = {e.p_adjusted:#.2g}"
    return f"p = {e.p:#.2g}, {e.family}"


def _different_failures(s: Systems, k: int = 8) -> str:
    d8, b8 = hits_at(s.ranks["dense"], k), hits_at(s.ranks["BM25"], k)
    h8 = hits_at(s.ranks["hybrid"], k)
    only_d, only_b = d8 & ~b8, ~d8 & b8
    return (
        f"- **Different failures.** At R@{k}, {int(only_d.sum())} queries are found only by "
        f"dense and {int(only_b.sum())} only by BM25: "
        + (
            "they fail on different queries."
            if only_d.any() and only_b.any()
            else "one dominates the other."
        )
        + f" The hybrid keeps {int((only_d & h8).sum())} of the first and "
        f"{int((only_b & h8).sum())} of the second within {k}."
    )


def _hybrid_points(s: Systems) -> str:
    hybrid, dense = s.recall["hybrid"], s.recall["dense"]
    below = [
        f"R@{k} ({hybrid.at(k):.3f} vs {dense.at(k):.3f})" for k in KS if hybrid.at(k) < dense.at(k)
    ]
    return "- **Hybrid against dense, point estimates.** " + (
        f"Fusion is below dense at {', '.join(below)}: adding BM25's ranking pushes down "
        "some chunks dense had found."
        if below
        else "Fusion is at least as good as dense at every k."
    )
