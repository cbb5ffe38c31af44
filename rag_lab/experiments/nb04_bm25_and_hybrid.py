"""Notebook 04: dense, BM25 (:func:`rag_lab.evaluation.retrieval.systems`), their fusions
(:mod:`rag_lab.evaluation.fusion`) and the identifier interaction."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.bm25 import tokenize
from rag_lab.evaluation import chapter, identifiers, paired
from rag_lab.evaluation.fusion import REFERENCE_K, FusionRuns
from rag_lab.evaluation.latency import CONDITION, Latency, cost_table
from rag_lab.evaluation.recall import recall_table
from rag_lab.evaluation.retrieval import TWO_BY_TWO_KS, Systems
from rag_lab.experiments.nb03_dense_retrieval import PAIRED, PER_QUERY, by_question
from rag_lab.experiments.present import Table
from rag_lab.metrics import Ranks, hits_at
from rag_lab.questions import Query
from rag_lab.stats import paired_difference

HEADLINE = (
    "BM25>dense@R1",
    "hybrid>BM25@R4",
    "hybrid=dense@R4",
    "hybrid-every-column",
    "hybrid>dense@R8:identifiers",
)
FUSION_KS = (1, 4, 8)
"""The cutoffs at which the fusions are shown (the claims are judged at R@4 alone)."""


def recall_tables(systems: Systems) -> tuple[Table, Table]:
    """Recall@k by question; then MRR and recall as the chapter tabulates it."""
    view = systems.recall.view(intervals="per query")[["MRR", "R@1", "R@20", "no hit"]]
    per_query = Table(view.rename(columns=PER_QUERY).rename_axis("retriever"))
    return by_question(systems.recall, mrr=False, axis="retriever"), per_query


def agreement_table(systems: Systems, ks: Sequence[int] = TWO_BY_TWO_KS) -> Table:
    """Per k, the queries both retrievers find within k, each one alone, and neither; and the
    questions behind the queries only one finds."""
    clusters, rows = pd.Series(systems.clusters), {}
    for k in ks:
        d, b = hits_at(systems.ranks["dense"], k), hits_at(systems.ranks["BM25"], k)
        cells = {"both": d & b, "dense only": d & ~b, "BM25 only": ~d & b, "neither": ~d & ~b}
        rows[f"R@{k}"] = {name: int(mask.sum()) for name, mask in cells.items()} | {
            f"questions, {name}": clusters[cells[name]].nunique()
            for name in ("dense only", "BM25 only")
        }
    return Table(pd.DataFrame.from_dict(rows, orient="index").rename_axis("within"))


def found_by_one(
    systems: Systems, queries: Sequence[Query], k: int = 8, each: int = 3
) -> tuple[Table, Table]:
    """The queries only one of dense and BM25 finds within ``k``: how many, over how many
    questions, the other's median rank, how many the hybrid keeps; then the ``each`` per
    side the other ranks worst (those it never ranks first)."""
    ranks = {f"{s} rank": systems.ranks[s] for s in ("dense", "BM25", "hybrid")}
    found = pd.DataFrame(ranks, index=pd.Index([q.id for q in queries], name="query"))
    found = found.astype("Int64").assign(question=[q.question.id for q in queries])
    found["text"] = [q.text for q in queries]
    dense_hit = hits_at(systems.ranks["dense"], k)
    found.insert(0, "found by", np.where(dense_hit, "dense", "BM25"))
    found, rows, worst = found[dense_hit != hits_at(systems.ranks["BM25"], k)].sort_index(), {}, []
    for finder, other in (("dense", "BM25"), ("BM25", "dense")):
        part = found[found["found by"] == finder]
        median = part[f"{other} rank"].median()
        rows[f"{finder} only"] = {
            "queries": len(part),
            "questions": part["question"].nunique(),
            "the other's median rank": "–" if pd.isna(median) else f"{median:.0f}",
            f"hybrid within {k}": int((part["hybrid rank"] <= k).sum()),
        }
        order = part[f"{other} rank"].astype(float).fillna(np.inf)
        worst.append(part.loc[order.sort_values(ascending=False, kind="stable").index[:each]])
    summary = pd.DataFrame.from_dict(rows, orient="index").rename_axis("found by")
    examples = pd.concat(worst).drop(columns="question")
    return Table(summary), Table(examples, shorten={"text": 40})


def paired_table(systems: Systems) -> Table:
    """Every comparison of the family, beside the chapter's per-query test and result."""
    view = systems.paired.view(chapter.paired_reference)
    return Table(view.rename(columns={"questions": "won/lost"}))


def word_share(query: Query) -> float:
    """The share of a query's distinct words (the chapter's BM25 tokens) its needle holds."""
    words = set(tokenize(query.text))
    return len(words & set(tokenize(query.needle))) / len(words) if words else 0.0


def overlap_strata(systems: Systems, queries: Sequence[Query], ks: Sequence[int] = (1, 8)) -> Table:
    """BM25 against dense in the half of the queries that share fewest words with their needle
    and in the half that share most (split at the median share), the difference by question."""
    share = np.array([word_share(q) for q in queries])
    high, rows = share > np.median(share), []
    for half, mask in (("fewer", ~high), ("more", high)):
        kept = np.flatnonzero(mask)
        of = [queries[i].question.id for i in kept]
        for k in ks:
            bm25, dense = (
                hits_at([systems.ranks[s][i] for i in kept], k) for s in ("BM25", "dense")
            )
            rows.append(
                {
                    "words shared": f"{half} ({share[mask].min():.2f}–{share[mask].max():.2f})",
                    "k": k,
                    "queries": len(kept),
                    "BM25": float(np.mean(bm25)),
                    "dense": float(np.mean(dense)),
                    "BM25 − dense by question": str(paired_difference(bm25, dense, of)),
                }
            )
    return Table(pd.DataFrame(rows).set_index("words shared"))


def costs(latencies: Sequence[Latency], shorten: int | None = None, note: str = "") -> Table:
    """What each stage costs per query, beside the chapter's figures (the stage's name held
    to ``shorten`` characters; ``note`` ends the caption)."""
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


def fusion_tables(runs: FusionRuns, clusters: Sequence[Hashable]) -> tuple[Table, Table]:
    """Recall@k of every fusion by question, and the weight of dense each fold was ranked
    with (chosen by cross-validation on the other folds)."""
    folds = pd.Index(range(1, runs.folds + 1), name="fold")
    recall = recall_table(runs.ranks, FUSION_KS, clusters)
    return by_question(recall, axis="fusion"), Table(pd.DataFrame(runs.weights, index=folds))


def convex_table(runs: FusionRuns, clusters: Sequence[Hashable]) -> Table:
    """Each convex combination against RRF at the chapter's k, paired by question at every k
    of :data:`FUSION_KS`; only R@:data:`~rag_lab.evaluation.fusion.CLAIM_K` is judged."""
    pairs = [(how, runs.rrf(REFERENCE_K)) for how in runs.ranks if not how.startswith("RRF")]
    family = paired.paired_table(runs.ranks, pairs, FUSION_KS, clusters)
    return Table(family.view(columns=["pair", *PAIRED]).rename(columns={"questions": "won/lost"}))


def recall_view(
    ranks: Mapping[str, Ranks],
    queries: Sequence[Query],
    ks: Sequence[int] = identifiers.KS,
    axis: str = "retriever",
    of: str = "on {} identifier queries",
) -> Table:
    """Recall@k with its interval by question; ``of`` names the ``n`` queries in the caption."""
    clusters = [q.question.id for q in queries]
    view = recall_table(ranks, ks, clusters).view(intervals="by question")
    return Table(
        view.drop(columns="n").rename(columns={"no hit": "queries missed"}).rename_axis(axis),
        caption=f"Recall@k {of.format(view['n'].iloc[0])}, 95 % interval with the "
        f"{len(set(clusters))} questions as the sample; queries missed: no chunk in the ranking "
        "holds the needle",
    )


def trap_tables(traps: pd.DataFrame) -> tuple[Table, Table]:
    """:func:`~rag_lab.evaluation.identifiers.trap_table` in two tables that fit a page."""
    where = traps[["distance", "passes", "nearest chunk"]]
    why = traps[["rare terms", "holds rare term", "kind", "shared"]]
    return (
        Table(where, shorten={"nearest chunk": 56}),
        Table(why, shorten={"rare terms": 26, "shared": 24}),
    )
