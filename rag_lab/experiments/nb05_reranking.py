"""Notebook 05: a second stage on the hybrid's top 25: its quality, where it moves each
query's first hit, and its cost. A stand-in cross-encoder's quality is never judged."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, joint
from rag_lab.evaluation.ledger import (
    Entry,
    PairedClaim,
    count_entry,
    fixed_entry,
    mrr_entry,
    paired_entries,
)
from rag_lab.evaluation.paired import paired_table
from rag_lab.evaluation.runs import Rankings
from rag_lab.experiments import probes
from rag_lab.experiments.nb04_bm25_and_hybrid import costs
from rag_lab.experiments.present import Table
from rag_lab.experiments.timing import Latency, time_per_call
from rag_lab.late_interaction import maxsim
from rag_lab.metrics import Ranks, first_hit_ranks, relevant_chunks
from rag_lab.models.cross_encoder import ENV_VAR, HUB_ID, STANDIN_LABEL, Reranker
from rag_lab.models.token_vectors import LateInteraction
from rag_lab.questions import Query
from rag_lab.rerank import TOP_N, Scorer, rerank_all
from rag_lab.search import ChunkIndex

HYBRID = "hybrid"
LATE = "hybrid + late interaction"
LATE_STAGE = "late interaction (query tokens + MaxSim)"
LLM_STAGE = "LLM reranker (Yes/No log-odds)"
HEADLINE = ("cross>hybrid@R1", "cross-cost", "colbert")


def system_name(reranker: Reranker) -> str:
    return f"{HYBRID} + {reranker.label}"


def second_stage(
    index: ChunkIndex, rankings: Rankings, scorers: Mapping[str, Scorer], n: int = TOP_N
) -> dict[str, Ranks]:
    """First-hit ranks of the hybrid, then of its top ``n`` reranked by each scorer on ``text``."""
    texts = [c.text for c in index.chunks]
    relevant = relevant_chunks(index.chunks, rankings.queries)
    first = rankings.by_system[HYBRID]
    ranks = {HYBRID: first_hit_ranks(first, relevant)}
    for name, score in scorers.items():
        ranks[name] = first_hit_ranks(
            rerank_all(first, rankings.queries, texts, score, n), relevant
        )
    return ranks


def cross_encoder_latency(
    reranker: Reranker, queries: Sequence[Query], candidates: Sequence[Sequence[str]], repeats=3
) -> Latency:
    """Per query: one :meth:`Reranker.score` call on its candidates (best of ``repeats``)."""
    return time_per_call(
        f"cross-encoder × {max(map(len, candidates))} pairs, {reranker.label}",
        lambda i: reranker.score(queries[i].text, candidates[i]),
        range(len(queries)),
        repeats=repeats,
    )


def late_interaction_latency(
    li: LateInteraction, queries: Sequence[Query], candidates: Sequence[Sequence[str]]
) -> Latency:
    """Per query: its token vectors (cache bypassed), MaxSim against pre-read candidates."""
    docs = [li.tokens(texts) for texts in candidates]

    def run(i: int) -> list[float]:
        (query_tokens,) = li._compute([queries[i].text])
        return [maxsim(query_tokens, d) for d in docs[i]]

    return time_per_call(f"{LATE_STAGE} × {max(map(len, candidates))}", run, range(len(queries)))


def llm_latency(scorer, query: Query, passages: Sequence[str]) -> Latency:
    """One query's pairs through the generator, cache bypassed, after one pair to load it."""
    scorer.score(query.text, passages[:1])
    start = time.perf_counter()
    scorer.score(query.text, passages)
    ms = 1000 * (time.perf_counter() - start)
    return Latency(f"{LLM_STAGE} × {len(passages)}", np.array([ms]))


def quality_table(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> Table:
    """R@1, R@4 with their interval by question, and MRR, one row per system."""
    return probes.recall_view(ranks, queries, (1, 4), "system", "over {} queries")


def paired_table_of(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> Table:
    """Each second stage against the hybrid at R@1 and R@4, per query and per question."""
    pairs = [(name, HYBRID) for name in ranks if name != HYBRID]
    paired = paired_table(ranks, pairs, (1, 4), _clusters(queries))
    return Table(
        paired.view().drop(columns="chapter").rename(columns={"questions": "won/lost"}),
        caption="second stage − hybrid in Recall@k; won/lost: the questions the second stage "
        "wins and loses; p: their sign test, unadjusted",
    )


def movement_table(systems: Mapping[str, Ranks], n: int = TOP_N) -> Table:
    """Per second stage, the queries whose first hit moved up, down, not, or was beyond ``n``."""
    before = pd.Series(systems[HYBRID], dtype=float)
    reach = before <= n
    rows = {}
    for name, ranks in systems.items():
        if name == HYBRID:
            continue
        after = pd.Series(ranks, dtype=float)
        moves = {"up": after < before, "down": after > before, "same": after == before}
        rows[name] = {m: int((reach & hit).sum()) for m, hit in moves.items()}
        rows[name][f"beyond {n}"] = int((~reach).sum())
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("second stage"),
        caption=f"Queries (of {len(before)}) whose first hit the second stage moved up, down or "
        f"not at all; beyond {n}: out of its reach, unchanged",
    )


def cost_view(latencies: Sequence[Latency]) -> Table:
    """What each stage costs per query; says so when the cross-encoder timed is the stand-in."""
    standin = any(STANDIN_LABEL in lat.stage for lat in latencies)
    note = (
        "the cross-encoder timed is rag_lab's stand-in: its cost is the architecture's, its "
        "scores are meaningless"
    )
    return costs(latencies, shorten=36, note=note if standin else "")


def availability(reranker: Reranker | None) -> str:
    """Which cross-encoder this run has, and what that means for its numbers."""
    name = HUB_ID.split("/")[-1]
    if reranker is None:
        text = (
            f"The cross-encoder {name} is not available here (neither ${ENV_VAR} nor the "
            "Hugging Face cache holds it), so this notebook shows no quality numbers for it; "
            "a stand-in of the same architecture only measures its cost."
        )
    elif reranker.standin:
        text = (
            f"The cross-encoder loaded is rag_lab's stand-in, not {name}: its quality numbers "
            "below are meaningless and are labelled so."
        )
    else:
        where = f"${ENV_VAR}" if reranker.source != HUB_ID else "the Hugging Face cache"
        text = f"The cross-encoder {name} is loaded from {where}; its quality numbers are below."
    return textwrap.fill(text, 92)


def joint_view(j: joint.Joint) -> Table:
    """The LLM reranker on its sample beside the hybrid, and the chapter's own rows."""
    frame = joint.table(j)
    first = pd.DataFrame(
        {
            "queries": chapter.CORPUS["queries"],
            "R@1": chapter.RERANK_R1["dense"],
            "R@5": np.nan,
            "MRR": chapter.RERANK_MRR["dense"],
        },
        index=["the chapter, first stage"],
    )
    frame = pd.concat([frame.iloc[:-1], first, frame.iloc[-1:]]).rename_axis("order")
    shown = frame[["R@1", "R@5", "MRR"]].map(lambda v: "–" if np.isnan(v) else f"{v:.3f}")
    shown.insert(0, "queries", frame["queries"])
    return Table(
        shown,
        caption=f"{len(j.queries)} sampled questions (seed {joint.SEED}), course phrasing, one "
        f"query each; the hybrid's top {joint.TOP_N} reordered by the generator's Yes/No "
        "log-odds on each chunk's quoted content. The chapter's rows are its first stage and "
        f"its cross-encoder on its top {chapter.RERANK_TOP_N}, on its own queries.",
    )


def entries(
    ranks: Mapping[str, Ranks],
    latencies: Sequence[Latency],
    reranker: Reranker | None,
    queries: Sequence[Query],
) -> list[Entry]:
    """The chapter's reranking claims: this notebook's part of the ledger."""
    cross, scan = (
        next(lat.median for lat in latencies if lat.stage.startswith(stage))
        for stage in ("cross-encoder", "vector scan")
    )
    real = reranker is not None and not reranker.standin
    at = {"notebook": "05", "benchmark": "d2l"}
    if real:
        lift = PairedClaim("cross>hybrid@R1", a=system_name(reranker))
        quality = [
            *paired_entries(**at, claims=[lift], ranks=ranks, clusters=_clusters(queries)),
            mrr_entry(
                "cross>hybrid@MRR",
                **at,
                a=ranks[system_name(reranker)],
                b=ranks[HYBRID],
                clusters=_clusters(queries),
            ),
        ]
    else:
        reason = (
            f"the weights of {HUB_ID} are not here (${ENV_VAR}); the stand-in's scores are "
            "meaningless"
        )
        quality = [
            fixed_entry(c, **at, verdict=Verdict.NOT_MEASURED, reason=reason)
            for c in ("cross>hybrid@R1", "cross>hybrid@MRR")
        ]
    return [
        *quality,
        count_entry(
            "cross-cost",
            **at,
            holds=cross >= 100 * scan,
            here=f"{cross:.0f} ms against {scan:.2f} ms" + ("" if real else " (stand-in)"),
        ),
        fixed_entry(
            "colbert",
            **at,
            verdict=Verdict.NOT_TESTABLE,
            reason="no ColBERT checkpoint here: MaxSim over all-MiniLM-L6-v2's token vectors "
            "(trained to be mean-pooled) tests those weights, not the method",
        ),
    ]


def _clusters(queries: Sequence[Query]) -> list[str]:
    return [q.question.id for q in queries]
