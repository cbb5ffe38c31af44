"""Second stages that read query and chunk together: the hybrid's top reranked by each scorer
(:func:`second_stage`; the cross-encoder's claims, :func:`reranking_entries`), and, run here
on a sample, the generator as reranker (:class:`Joint`).

The chapter's largest single improvement is its cross-encoder over the hybrid's top 25, and
its argument is architectural: a model that reads the pair beats a dot product at the top.
The cross-encoder's weights are not here, so its row stays "not measured". What can run is
the same architecture's crudest form, a small instruct model asked whether the chunk answers
(:class:`rag_lab.models.relevance.LlmRelevance`): an LLM reranker, not the chapter's model.

Each pair costs a forward pass of a 0.5B model (about 150–400 prompt tokens), so the run is a
**stated sample**: :data:`SAMPLE` questions drawn with a fixed seed, their course phrasing
only, each question one query (so the per-query tests are the by-question ones). The hybrid's
top :data:`TOP_N` chunks are reordered by the score (ties keep the hybrid's order); chunks
below stay where they were. Compared with the hybrid on the same queries: R@1 (the ledger's
paired rule) and MRR (the same rule on each question's reciprocal rank: the sign test over
questions, the interval by question), with the model time per query beside the chapter's
569 ms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb

import numpy as np
import pandas as pd

from rag_lab.claims.judge import PairedRecord
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, ledger
from rag_lab.evaluation.ledger import PAIRED_METHOD, Entry, entry, mrr_entry, paired_entries
from rag_lab.evaluation.runs import Rankings
from rag_lab.metrics import Ranks, first_hit_ranks, hits_at, mrr, relevant_chunks
from rag_lab.models.cross_encoder import ENV_VAR, HUB_ID, Reranker
from rag_lab.questions import Query
from rag_lab.rerank import Scorer, rerank_all
from rag_lab.search import ChunkIndex
from rag_lab.stats import cluster_paired_values, paired_mean_difference

SAMPLE = 8
"""Questions scored: 8 × 25 pairs, about 200 forward passes (5–15 minutes cold on 2 cores)."""
SEED = 0
TOP_N = chapter.RERANK_TOP_N
PHRASING = "course"
LLM, HYBRID = "LLM reranker", "hybrid"
LATE = "hybrid + late interaction"


def sample(queries: Sequence[Query], n: int = SAMPLE, seed: int = SEED) -> list[Query]:
    """``n`` questions drawn without replacement (seeded), in question order, one phrasing."""
    ids = sorted({q.question.id for q in queries})
    picked = set(np.array(ids)[np.random.default_rng(seed).choice(len(ids), n, replace=False)])
    return [q for q in queries if q.question.id in picked and q.phrasing == PHRASING]


@dataclass(frozen=True)
class Joint:
    """The sample's queries, both orders' first-hit ranks and the model time per query."""

    queries: list[Query]
    ranks: dict[str, list[int | None]]
    seconds: np.ndarray
    """Model seconds per query (all its pairs), as measured when each pair was scored."""
    prompt_tokens: np.ndarray
    cached: int
    """Pairs that came from the cache in this run."""
    in_top: tuple[int, ...]
    """Per query, the relevant chunks among the hybrid's top ``TOP_N`` (what a random
    reordering of those chunks can find)."""

    @property
    def clusters(self) -> list[str]:
        return [q.question.id for q in self.queries]


def rerank(
    scorer, index: ChunkIndex, hybrid: Sequence[np.ndarray], queries: Sequence[Query], top_n=TOP_N
) -> Joint:
    """Reorder each query's hybrid top ``top_n`` by ``scorer`` (descending, ties by the hybrid
    position); ``hybrid`` holds the hybrid's full ranking per query, in ``queries`` order."""
    relevant = relevant_chunks(index.chunks, queries)
    reordered, seconds, tokens, cached = [], [], [], 0
    for q, ranking in zip(queries, hybrid, strict=True):
        top = np.asarray(ranking[:top_n])
        scored = scorer.score(q.text, [index.chunks[i].content for i in top])
        s = np.array([x.score for x in scored])
        keep = np.lexsort((np.arange(len(top)), -s))  # score desc, then hybrid position
        reordered.append(np.concatenate([top[keep], np.asarray(ranking[top_n:])]))
        seconds.append(sum(x.seconds for x in scored))
        tokens.append(sum(x.prompt_tokens for x in scored))
        cached += sum(x.cached for x in scored)
    return Joint(
        list(queries),
        {
            HYBRID: first_hit_ranks([np.asarray(r) for r in hybrid], relevant),
            LLM: first_hit_ranks(reordered, relevant),
        },
        np.array(seconds),
        np.array(tokens),
        cached,
        tuple(
            len(set(r) & set(np.asarray(h[:top_n]).tolist()))
            for r, h in zip(relevant, hybrid, strict=True)
        ),
    )


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


def chance(j: Joint, k: int, top_n: int = TOP_N) -> np.ndarray:
    """Per query, the probability that a uniformly random order of the hybrid's top ``top_n``
    puts a relevant chunk within ``k`` (hypergeometric: ``1 − C(n − m, k) / C(n, k)`` with
    ``m`` relevant among the ``n``): the floor a reranker must clear to be reading the pair."""
    k = min(k, top_n)
    return np.array([1 - comb(top_n - m, k) / comb(top_n, k) for m in j.in_top])


def chance_rr(j: Joint, top_n: int = TOP_N) -> np.ndarray:
    """Per query, the expected reciprocal rank of the first relevant chunk under a uniformly
    random order of the top ``top_n``: ``Σ_r P(first at r) / r``, ``P(first at r) =
    C(n − r, m − 1) / C(n, m)``."""
    return np.array(
        [
            sum(comb(top_n - r, m - 1) / comb(top_n, m) / r for r in range(1, top_n + 1))
            if m
            else 0.0
            for m in j.in_top
        ]
    )


def table(j: Joint) -> pd.DataFrame:
    """R@1, R@5 and MRR of both orders on the sample, and what a query cost."""
    rows = []
    for name in (HYBRID, LLM):
        r = j.ranks[name]
        rows.append(
            {
                "": name,
                "queries": len(r),
                "R@1": hits_at(r, 1).mean(),
                "R@5": hits_at(r, 5).mean(),
                "MRR": mrr(r),
                "ms per query": 1000 * j.seconds.mean() if name == LLM else float("nan"),
            }
        )
    rows.append(
        {
            "": f"a random order of the top {TOP_N} (expected)",
            "queries": len(j.in_top),
            "R@1": chance(j, 1).mean(),
            "R@5": chance(j, 5).mean(),
            "MRR": chance_rr(j).mean(),
            "ms per query": float("nan"),
        }
    )
    rows.append(
        {
            "": "the chapter, cross-encoder",
            "queries": chapter.CORPUS["queries"],
            "R@1": chapter.RERANK_R1["cross-encoder"],
            "R@5": float("nan"),
            "MRR": chapter.RERANK_MRR["cross-encoder"],
            "ms per query": chapter.CROSS_ENCODER_MS_PER_QUERY,
        }
    )
    return pd.DataFrame(rows).set_index("")


def entries(j: Joint, notebook: str = "05", benchmark: str = "d2l") -> list[Entry]:
    """R@1 and MRR, each by the ledger's paired rule over questions; the sample's size is in
    each entry's result (``of 8 questions``)."""
    (r1,) = paired_entries(notebook, benchmark, ["llm>hybrid@R1"], j.ranks, j.clusters)
    at = {"notebook": notebook, "benchmark": benchmark, "clusters": j.clusters}
    mrr_claim = mrr_entry("llm>hybrid@MRR", **at, a=j.ranks[LLM], b=j.ranks[HYBRID])
    hits = hits_at(j.ranks[LLM], 5).astype(float)
    floor = chance(j, 5)
    d = paired_mean_difference(hits, floor, j.clusters)
    t = cluster_paired_values(hits, floor, j.clusters)
    above = entry(
        "llm>chance@R5",
        notebook=notebook,
        benchmark=benchmark,
        record=PairedRecord(d, t),
        here=f"{hits.mean():.3f} vs {floor.mean():.3f} expected at random",
        estimate=d.estimate,
        method=PAIRED_METHOD,
    )
    return [r1, mrr_claim, above]


def reranking_entries(
    ranks: Mapping[str, Ranks],
    latencies: Sequence,
    reranker: Reranker | None,
    queries: Sequence[Query],
) -> list[Entry]:
    """The chapter's cross-encoder claims: its quality (judged only with the real weights), its
    cost against the vector scan (``latencies``, :mod:`rag_lab.evaluation.latency`), ColBERT."""
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
            *paired_entries(**at, claims=[lift], ranks=ranks, clusters=clusters),
            mrr_entry("cross>hybrid@MRR", **at, a=ranks[name], b=ranks[HYBRID], clusters=clusters),
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
