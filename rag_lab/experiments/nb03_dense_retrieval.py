"""Notebook 03: the six chunkings under dense retrieval, and the chapter's claims about them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab.chunking import STRATEGIES
from rag_lab.experiments import chapter, plots, tables
from rag_lab.experiments.lab import Lab
from rag_lab.experiments.runs import dense_ranks, split_by_phrasing
from rag_lab.experiments.tables import fmt_interval, wilson_at
from rag_lab.metrics import Ranks, hits_at, paired_at
from rag_lab.questions import Query
from rag_lab.stats import cluster_bootstrap, paired

PAIRS = (("B", "A"), ("C", "A"), ("E", "A"), ("E", "C"), ("F", "E"))
"""The chapter's paired comparisons between strategies, and C vs A, which separates the
boundaries' share of E vs A from the header's."""
CLAIMS = (
    ("E", "A", ">", "boundaries with a header beat blind cuts"),
    ("C", "A", ">", "boundaries alone beat blind cuts (not a chapter claim: the control)"),
    ("E", "C", ">", "the header, on the same cuts, buys recall"),
    ("F", "E", "<", "overlap on top of the header hurts"),
)
"""(a, b, the direction claimed, the claim), each judged at R@20."""
SHOWN = ["a", "b", "k", "here", "by question", "p Holm", "verdict", "chapter"]
PAIRED_KS = (8, 20)
PHRASING_KS = (1, 8, 20)


def index_all(lab: Lab) -> list[str]:
    """Embed the six chunkings (from the cache where it has them); one line per strategy."""
    lines = []
    for name, chunks in lab.chunks_by.items():
        lab.index(name)
        fresh = lab.encoder.last.computed if hasattr(lab.encoder, "last") else len(chunks)
        cached = len(chunks) - fresh
        lines.append(f"{name}: {len(chunks)} chunks, {fresh} embedded now, {cached} from the cache")
    return lines


def rank_strategies(lab: Lab) -> dict[str, list[int | None]]:
    """First-hit ranks of every query under dense retrieval, for each of the six chunkings."""
    return {name: dense_ranks(lab.index(name), lab.queries, lab.encoder) for name in lab.chunks_by}


def recall_table(
    ranks_by: Mapping[str, Ranks], destroyed: pd.DataFrame, queries: Sequence[Query]
) -> pd.DataFrame:
    """Recall@k with Wilson (per query) and cluster-bootstrap (per question) intervals, MRR,
    per strategy, beside its destroyed answers."""
    table = tables.interval_table(ranks_by, clusters=tables.question_ids(queries))
    table["destroyed"] = destroyed["destroyed"]
    return table


def paired_view(ranks_by: Mapping[str, Ranks], queries: Sequence[Query]) -> pd.DataFrame:
    """The paired comparisons between strategies: per query (the chapter's test), per
    question with Holm over this family, the verdict, and the chapter's result."""
    view = tables.paired_view(ranks_by, PAIRS, PAIRED_KS, tables.question_ids(queries))
    return view[SHOWN].reset_index(drop=True)


def by_phrasing(ranks_by: Mapping[str, Ranks], queries: Sequence[Query]) -> dict[str, Ranks]:
    """Ranks per strategy and phrasing, keyed ``"A course"``, ``"A ticket"``, …"""
    return {
        f"{name} {phrasing}": r
        for name in ranks_by
        for phrasing, r in split_by_phrasing(ranks_by[name], queries).items()
    }


def phrasing_table(ranks_by: Mapping[str, Ranks], queries: Sequence[Query]) -> pd.DataFrame:
    """Recall@k per strategy and phrasing (course, ticket)."""
    return tables.interval_table(by_phrasing(ranks_by, queries), ks=PHRASING_KS)


def recall_figure(ranks_by: Mapping[str, Ranks]):
    labels = {name: f"{name}: {STRATEGIES[name].label}" for name in ranks_by}
    return tables.recall_curve_figure(
        ranks_by, "Dense retrieval, six chunkings", plots.COLORS, labels=labels
    )


def reading(ranks_by: Mapping[str, Ranks], queries: Sequence[Query], strategy: str = "E") -> str:
    """The chapter's chunking claims under dense retrieval, judged on our numbers."""
    phrasing = split_by_phrasing(ranks_by[strategy], queries)
    clusters = tables.question_ids(queries)
    n = len(ranks_by["A"])
    lo_a, hi_a = wilson_at(ranks_by["A"], 20)
    lo_e, hi_e = wilson_at(ranks_by["E"], 20)
    separate = hi_a < lo_e or hi_e < lo_a
    lines = [
        f"- **Intervals.** At n = {n}, R@20 is [{lo_a:.3f}, {hi_a:.3f}] for A and "
        f"[{lo_e:.3f}, {hi_e:.3f}] for E (the chapter: {fmt_interval(chapter.WILSON_R20['A'])} and "
        f"{fmt_interval(chapter.WILSON_R20['E'])}); here they "
        + (
            "do not overlap."
            if separate
            else "overlap, so the unpaired table cannot tell A and E apart."
        )
        + " Resampling questions instead of queries (cluster bootstrap, both phrasings "
        f"together): {fmt_interval(cluster_bootstrap(hits_at(ranks_by['A'], 20), clusters))} "
        f"and {fmt_interval(cluster_bootstrap(hits_at(ranks_by['E'], 20), clusters))}."
    ]
    view = tables.paired_view(ranks_by, PAIRS, PAIRED_KS, clusters).set_index(["a", "b", "k"])
    for a, b, direction, claim in CLAIMS:
        lines.append(tables.claim_line(view.loc[(a, b, 20)], a, b, direction, claim, k=20))
    claims = [(a, b, 20, direction, claim) for a, b, direction, claim in CLAIMS]
    b_a = [paired_at(ranks_by["B"], ranks_by["A"], k) for k in (8, 20)]
    # Ranking proper: only the queries whose needle survives in both A and B.
    both = [
        a is not None and b is not None for a, b in zip(ranks_by["A"], ranks_by["B"], strict=True)
    ]
    kept = {s: [r for r, keep in zip(ranks_by[s], both, strict=True) if keep] for s in ("A", "B")}
    ranking_only = [paired_at(kept["B"], kept["A"], k) for k in (8, 20)]
    helps = [r for r in ranking_only if r.significant_win]
    significant = any(r.significant_win for r in b_a)
    if significant and not helps:
        note = " — significant, but only because B rescues needles that A destroys; "
    else:
        note = "; "
    lines.append(
        f"- **Overlap and ranking.** B vs A: {b_a[0]} at R@8, {b_a[1]} at R@20"
        + note
        + f"on the {sum(both)} queries whose needle survives in both: {ranking_only[0]} at R@8, "
        f"{ranking_only[1]} at R@20 (per query). "
        + (
            "Overlap does not significantly help ranking here."
            if not helps
            else "Here overlap does help ranking significantly."
        )
    )
    cmp = [paired(hits_at(phrasing["course"], k), hits_at(phrasing["ticket"], k)) for k in (8, 20)]
    lines.append(
        f"- **Ticket wording (E, {len(phrasing['course'])} questions, course vs ticket).** "
        f"R@8 {cmp[0]}; R@20 {cmp[1]}. "
        + (
            "Support-ticket wording costs recall significantly."
            if any(r.significant_win for r in cmp)
            else "The difference is not significant at this size."
        )
    )
    return "\n".join(lines) + "\n\n" + tables.claim_table(view, claims)
