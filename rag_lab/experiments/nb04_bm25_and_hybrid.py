"""Notebook 04: dense, BM25 and their fusion on one chunking, laid out in tables and figures.

The measures are :func:`rag_lab.evaluation.retrieval.systems`'s (a
:class:`~rag_lab.evaluation.retrieval.Systems` record); this module lays the record out in
tables that fit a page and draws where each query's needle lands under dense and BM25 (its
recall figure is :func:`rag_lab.evaluation.figures.systems_figure`). It also shows the
fusions of :mod:`rag_lab.evaluation.fusion` (RRF at other ks, convex combinations of
normalised scores) after checking that its RRF at k = 60 is the hybrid, and the identifier
interaction of :mod:`rag_lab.evaluation.identifiers`. The claims are judged by the ledger and
worded by :mod:`rag_lab.claims.render`; the prose that explains them is the notebook's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.claims import render
from rag_lab.evaluation import chapter, claims, identifiers, paired, plots
from rag_lab.evaluation.fusion import CLAIM_K, OBJECTIVE_K, REFERENCE_K, FusionRuns
from rag_lab.evaluation.ledger import PAIRED_METHOD, Entry
from rag_lab.evaluation.recall import recall_table
from rag_lab.evaluation.retrieval import TWO_BY_TWO_KS, Systems
from rag_lab.experiments.present import Table
from rag_lab.experiments.timing import CONDITION, Latency, cost_table
from rag_lab.metrics import Ranks, first_hit_ranks, hits_at, relevant_chunks
from rag_lab.questions import Query
from rag_lab.search import ChunkIndex
from rag_lab.stats import clustered_wilson

HEADLINE = (
    "BM25>dense@R1",
    "hybrid>BM25@R4",
    "hybrid=dense@R4",
    "hybrid-every-column",
    "hybrid>dense@R8:identifiers",
)
"""The claims this notebook opens with: the chapter's top-1 and fusion claims on its
questions, and fusion on the identifier probes."""


def entries(systems: Systems) -> list[Entry]:
    """The chapter's claims about dense, BM25 and hybrid: this notebook's part of the ledger."""
    return claims.system_entries(systems, "04", "d2l")


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


# --- score fusion against RRF ---------------------------------------------------------------

FUSION_KS = (1, 4, 8)
"""The cutoffs at which the fusions are shown (the claims are judged at R@4 alone)."""


def first_hits(index: ChunkIndex, queries: Sequence[Query]) -> Callable[[list], Ranks]:
    """``rankings → first-hit ranks`` with the lab's relevance on ``index``: a hit is a chunk
    that holds the query's needle whole (:func:`rag_lab.metrics.relevant_chunks`)."""
    relevant = relevant_chunks(index.chunks, queries)
    return lambda rankings: first_hit_ranks(rankings, relevant)


def check_rrf_is_hybrid(runs: FusionRuns, systems: Systems) -> None:
    """Raise AssertionError unless the fusion run's RRF at the chapter's k ranks every query's
    first hit where the hybrid of :func:`~rag_lab.evaluation.retrieval.systems` does: the two
    code paths (scores fused here, rankings fused there) must be one fusion, or comparing the
    convex combinations with "RRF" would compare them with something else."""
    rrf, hybrid = runs.ranks[runs.rrf(REFERENCE_K)], systems.ranks["hybrid"]
    differ = [i for i, (a, b) in enumerate(zip(rrf, hybrid, strict=True)) if a != b]
    if len(rrf) != len(hybrid) or differ:
        raise AssertionError(
            f"RRF k={REFERENCE_K} of the fusion runs differs from the hybrid on "
            f"{len(differ) or 'the number of'} queries (first: {differ[:3]})"
        )


def fusion_table(runs: FusionRuns, clusters: Sequence[Hashable], ks=FUSION_KS) -> Table:
    """Recall@k of every fusion with its interval by question, and MRR."""
    view = recall_table(runs.ranks, ks, clusters).view(intervals="by question")
    n, questions = int(view["n"].iloc[0]), len(set(clusters))
    return Table(
        view.drop(columns=["n", "no hit"]).rename_axis("fusion"),
        caption=f"Recall@k over {n} queries, 95 % interval with the {questions} questions as "
        "the sample; min-max and z-score: w · dense + (1 − w) · BM25 of normalised scores, "
        f"w chosen on the other {runs.folds - 1} folds of questions",
    )


def weights_table(runs: FusionRuns) -> Table:
    """The weight of dense each fold's cross-validation chose, one row per fold, one column
    per normalisation."""
    frame = pd.DataFrame(
        {how: [f"{w:.2f}" for w in ws] for how, ws in runs.weights.items()},
        index=pd.Index(range(1, runs.folds + 1), name="fold"),
    )
    return Table(
        frame,
        caption="The weight w of dense each fold of questions was ranked with, chosen on the "
        f"other {runs.folds - 1} folds for Recall@{OBJECTIVE_K}",
    )


def convex_table(runs: FusionRuns, clusters: Sequence[Hashable], ks=FUSION_KS) -> Table:
    """Each convex combination against RRF at the chapter's k, at every k of ``ks``, paired by
    question. The claims are judged at R@:data:`~rag_lab.evaluation.fusion.CLAIM_K` alone
    (:func:`rag_lab.evaluation.fusion.entries`); the other rows are shown, not judged."""
    reference = runs.rrf(REFERENCE_K)
    pairs = [(how, reference) for how in runs.ranks if not how.startswith("RRF")]
    view = paired.paired_table(runs.ranks, pairs, ks, clusters).view(
        columns=["pair", "k", "a − b by question", "questions", "p"]
    )
    return Table(
        view.rename(columns={"questions": "won/lost"}),
        caption=f"Convex combination − RRF k = {REFERENCE_K} in Recall@k, by question (95 % "
        f"interval: {render.METHODS[PAIRED_METHOD]}); won/lost: the questions it wins and "
        f"loses; p: their sign test, unadjusted; only R@{CLAIM_K} is judged, fixed before "
        "looking",
    )


def fusion_color(name: str) -> str:
    """A fusion's colour: RRF's at every k, each normalisation its own."""
    return plots.FUSION_COLORS["RRF" if name.startswith("RRF") else name]


def fusion_figure(runs: FusionRuns, systems: Systems, k: int = identifiers.CLAIM_K):
    """Recall@``k`` of every fusion, and of dense and BM25 alone, each a dot (the share of
    queries) with its 95 % interval by question (a bar); dashed: RRF at the chapter's k."""
    import matplotlib.pyplot as plt

    clusters = systems.clusters
    rows = {"dense": systems.ranks["dense"], "BM25": systems.ranks["BM25"], **runs.ranks}
    names = list(rows)
    with plots.style():
        fig, ax = plt.subplots(figsize=(7.2, 0.34 * len(names) + 1.4))
        y = np.arange(len(names))[::-1]
        for yi, name in zip(y, names, strict=True):
            hits = hits_at(rows[name], k)
            color = plots.SYSTEM_COLORS.get(name) or fusion_color(name)
            ax.plot(clustered_wilson(hits, clusters), [yi, yi], color=color, lw=2.2)
            ax.plot(hits.mean(), yi, "o", color=color, ms=5)
        reference = hits_at(runs.ranks[runs.rrf(REFERENCE_K)], k).mean()
        ax.axvline(reference, color=plots.NEUTRAL["ink"], lw=0.8, ls="--")
        ax.axhline(len(names) - 2.5, color=plots.NEUTRAL["faint"], lw=0.8)
        ax.set_yticks(y, names)
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.set_xlim(0, 1)
        ax.set_xlabel(
            f"Recall@{k}: share of queries with the needle in the top {k} "
            "(dot: share; bar: 95 % interval by question)"
        )
        n, questions = len(clusters), len(set(clusters))
        ax.set_title(
            f"Strategy {systems.strategy}: each fusion at R@{k}, the two retrievers alone above "
            f"(n = {n} queries, {questions} questions;\ndashed: RRF k = {REFERENCE_K}, "
            "the chapter's hybrid)",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def interaction_table(
    probe_ranks: Mapping[str, Ranks],
    probe_queries: Sequence[Query],
    systems: Systems,
) -> Table:
    """:func:`rag_lab.evaluation.identifiers.interaction_table` as a table that fits a page."""
    probe_clusters = [q.question.id for q in probe_queries]
    frame = identifiers.interaction_table(
        probe_ranks, probe_clusters, systems.ranks, systems.clusters
    )
    for column in ("identifier gap", "ordinary gap"):
        frame[column] = [f"{v:+.3f}" for v in frame[column]]
    return Table(
        frame.rename_axis("R@k"),
        caption="BM25 − dense in Recall@k, averaged by question: on the identifier probes, on "
        "the ordinary questions, and the first minus the second with its bootstrap 95 % "
        f"interval; questions: identifier + ordinary; the claim is judged at R@"
        f"{identifiers.CLAIM_K} alone",
    )
