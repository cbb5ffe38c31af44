"""Notebook 05: a second stage on the hybrid's top 25: its quality, where it moves each
query's first hit, and its cost. A stand-in cross-encoder's quality is never judged."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, joint, ledger
from rag_lab.evaluation.joint import HYBRID
from rag_lab.evaluation.paired import paired_table
from rag_lab.evaluation.runs import Rankings
from rag_lab.experiments.present import Table
from rag_lab.experiments.timing import Latency, time_per_call
from rag_lab.late_interaction import maxsim
from rag_lab.metrics import Ranks, first_hit_ranks, relevant_chunks
from rag_lab.models.cross_encoder import ENV_VAR, HUB_ID, Reranker
from rag_lab.models.token_vectors import LateInteraction
from rag_lab.questions import Query
from rag_lab.rerank import TOP_N, Scorer, rerank_all
from rag_lab.search import ChunkIndex

LATE = "hybrid + late interaction"
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
        reranked = rerank_all(first, rankings.queries, texts, score, n)
        ranks[name] = first_hit_ranks(reranked, relevant)
    return ranks


def cross_encoder_latency(
    reranker: Reranker, queries: Sequence[Query], candidates: Sequence[Sequence[str]]
) -> Latency:
    """Per query: one :meth:`Reranker.score` call on its candidates, one run each."""
    stage = f"cross-encoder × {max(map(len, candidates))} pairs, {reranker.label}"
    pairs = list(zip(queries, candidates, strict=True))
    return time_per_call(stage, lambda p: reranker.score(p[0].text, p[1]), pairs, repeats=1)


def late_interaction_latency(
    li: LateInteraction, queries: Sequence[Query], candidates: Sequence[Sequence[str]]
) -> Latency:
    """Per query: its token vectors (cache bypassed), MaxSim against pre-read candidates."""
    docs = [li.tokens(texts) for texts in candidates]

    def run(i: int) -> list[float]:
        (query_tokens,) = li._compute([queries[i].text])
        return [maxsim(query_tokens, d) for d in docs[i]]

    stage = f"late interaction (query tokens + MaxSim) × {max(map(len, candidates))}"
    return time_per_call(stage, run, range(len(queries)))


def llm_latency(scorer, query: Query, passages: Sequence[str]) -> Latency:
    """One query's pairs through the generator, cache bypassed, after one pair to load it."""
    scorer.score(query.text, passages[:1])
    start = time.perf_counter()
    scorer.score(query.text, passages)
    ms = 1000 * (time.perf_counter() - start)
    return Latency(f"LLM reranker (Yes/No log-odds) × {len(passages)}", np.array([ms]))


def paired_view(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> Table:
    """Each second stage against the hybrid at R@1 and R@4, per query and per question."""
    pairs = [(name, HYBRID) for name in ranks if name != HYBRID]
    paired = paired_table(ranks, pairs, (1, 4), [q.question.id for q in queries]).view()
    return Table(paired.drop(columns="chapter").rename(columns={"questions": "won/lost"}))


def movement_table(systems: Mapping[str, Ranks], n: int = TOP_N) -> Table:
    """Per second stage, the queries whose first hit moved up, down, not, or was beyond ``n``."""
    before = pd.Series(systems[HYBRID], dtype=float)
    reach, rows = before <= n, {}
    for name in [s for s in systems if s != HYBRID]:
        after = pd.Series(systems[name], dtype=float)
        moves = {"up": after < before, "down": after > before, "same": after == before}
        rows[name] = {m: int((reach & hit).sum()) for m, hit in moves.items()}
        rows[name][f"beyond {n}"] = int((~reach).sum())
    return Table(pd.DataFrame.from_dict(rows, orient="index").rename_axis("second stage"))


def joint_view(j: joint.Joint) -> Table:
    """The LLM reranker on its sample beside the hybrid, and the chapter's own rows."""
    frame = joint.table(j)
    first = pd.DataFrame(
        {"queries": chapter.CORPUS["queries"], "R@1": chapter.RERANK_R1["dense"]}
        | {"MRR": chapter.RERANK_MRR["dense"]},
        index=["the chapter, first stage"],
    )
    frame = pd.concat([frame.iloc[:-1], first, frame.iloc[-1:]])
    return Table(frame[["queries", "R@1", "R@5", "MRR"]].rename_axis("order"))


def entries(
    ranks: Mapping[str, Ranks],
    latencies: Sequence[Latency],
    reranker: Reranker | None,
    queries: Sequence[Query],
) -> list[ledger.Entry]:
    """The chapter's reranking claims: this notebook's part of the ledger."""
    cross, scan = (
        next(lat.median for lat in latencies if lat.stage.startswith(stage))
        for stage in ("cross-encoder", "vector scan")
    )
    real = reranker is not None and not reranker.standin
    at = {"notebook": "05", "benchmark": "d2l"}
    if real:
        name, clusters = system_name(reranker), [q.question.id for q in queries]
        lift = ledger.PairedClaim("cross>hybrid@R1", a=name)
        quality = [
            *ledger.paired_entries(**at, claims=[lift], ranks=ranks, clusters=clusters),
            ledger.mrr_entry(
                "cross>hybrid@MRR", **at, a=ranks[name], b=ranks[HYBRID], clusters=clusters
            ),
        ]
    else:
        reason = (
            f"the weights of {HUB_ID} are not here (${ENV_VAR}); the stand-in's scores are "
            "meaningless"
        )
        quality = [
            ledger.fixed_entry(c, **at, verdict=Verdict.NOT_MEASURED, reason=reason)
            for c in ("cross>hybrid@R1", "cross>hybrid@MRR")
        ]
    here = f"{cross:.0f} ms against {scan:.2f} ms" + ("" if real else " (stand-in)")
    return [
        *quality,
        ledger.count_entry("cross-cost", **at, holds=cross >= 100 * scan, here=here),
        ledger.fixed_entry(
            "colbert",
            **at,
            verdict=Verdict.NOT_TESTABLE,
            reason="no ColBERT checkpoint here: MaxSim over all-MiniLM-L6-v2's token vectors "
            "(trained to be mean-pooled) tests those weights, not the method",
        ),
    ]
