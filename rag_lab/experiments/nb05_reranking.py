"""Notebook 05: a second stage on the hybrid's top 25: its quality, where it moves each
query's first hit, and its cost, laid out in tables and figures.

The claims are judged by the ledger (:func:`entries`) and worded by
:mod:`rag_lab.claims.render`. Whatever is measured with the stand-in cross-encoder is named
for what it is, and a stand-in's quality numbers are never judged as evidence about the
chapter's claim.
"""

from __future__ import annotations

import textwrap
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, plots
from rag_lab.evaluation.ledger import (
    Entry,
    PairedClaim,
    count_entry,
    fixed_entry,
    paired_entries,
)
from rag_lab.evaluation.paired import PairedTable, paired_table
from rag_lab.evaluation.recall import recall_table
from rag_lab.evaluation.runs import Rankings
from rag_lab.experiments.nb04_bm25_and_hybrid import costs
from rag_lab.experiments.present import Table
from rag_lab.experiments.timing import Latency, chapter_reference, time_per_call
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

HEADLINE = ("cross>hybrid@R1", "cross-cost", "colbert")
"""The claims this notebook opens with: the chapter's three reranking claims."""


def second_stage(
    index: ChunkIndex,
    rankings: Rankings,
    scorers: Mapping[str, Scorer],
    n: int = TOP_N,
    base: str = "hybrid",
) -> dict[str, list[int | None]]:
    """First-hit ranks of the ``base`` system and of its top ``n`` reranked by each scorer.

    The keys are ``base`` and then the names of ``scorers``; chunks are scored on ``text``.
    """
    texts = [c.text for c in index.chunks]
    relevant = relevant_chunks(index.chunks, rankings.queries)
    first = rankings.by_system[base]
    out = {base: first_hit_ranks(first, relevant)}
    for name, score in scorers.items():
        reranked = rerank_all(first, rankings.queries, texts, score, n)
        out[name] = first_hit_ranks(reranked, relevant)
    return out


def cross_encoder_latency(
    reranker: Reranker,
    queries: Sequence[Query],
    candidates: Sequence[Sequence[str]],
    repeats: int = 3,
) -> Latency:
    """Per query: one :meth:`Reranker.score` call on its candidates, in ms (best of ``repeats``)."""
    n = max(len(c) for c in candidates)
    return time_per_call(
        f"cross-encoder × {n} pairs, {reranker.label}",
        lambda i: reranker.score(queries[i].text, candidates[i]),
        range(len(queries)),
        repeats=repeats,
    )


def late_interaction_latency(
    li: LateInteraction, queries: Sequence[Query], candidates: Sequence[Sequence[str]]
) -> Latency:
    """Per query: its token vectors through the model (cache bypassed), then MaxSim, in ms.

    The candidates' token matrices are read before timing, as an index would hold them.
    """
    docs = [li.tokens(texts) for texts in candidates]

    def run(i: int) -> list[float]:
        (query_tokens,) = li._compute([queries[i].text])
        return [maxsim(query_tokens, d) for d in docs[i]]

    n = max(len(c) for c in candidates)
    return time_per_call(f"{LATE_STAGE} × {n}", run, range(len(queries)))


def comparisons(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> PairedTable:
    """Each second stage against the hybrid it reranks, at R@1 and R@4: per query, and per
    question with Holm over this family."""
    pairs = [(name, HYBRID) for name in ranks if name != HYBRID]
    return paired_table(ranks, pairs, (1, 4), [q.question.id for q in queries])


def paired_view(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> pd.DataFrame:
    """:func:`comparisons` as shown, with the verdict read from the question-level test."""
    return comparisons(ranks, queries).view(
        columns=["pair", "k", "a − b by question", "questions", "p", "per query"]
    )


def system_name(reranker: Reranker) -> str:
    """The row name of the hybrid reranked by ``reranker``, its label included."""
    return f"{HYBRID} + {reranker.label}"


def quality_table(ranks: Mapping[str, Ranks], clusters: Sequence[Hashable]) -> Table:
    """R@1, R@4 with the design's interval and MRR, one row per system."""
    view = recall_table(ranks, ks=(1, 4), clusters=clusters).view(intervals="by question")
    n, questions = int(view["n"].iloc[0]), len(set(clusters))
    return Table(
        view.drop(columns="n").rename(columns={"no hit": "queries missed"}).rename_axis("system"),
        caption=f"Recall@k over {n} queries, 95 % interval with the {questions} questions as "
        "the sample; queries missed: no chunk in the ranking holds the needle",
    )


def paired_table_of(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> Table:
    """:func:`paired_view` as a table that fits a page."""
    return Table(
        paired_view(ranks, queries).rename(columns={"questions": "won/lost"}),
        caption="second stage − hybrid in Recall@k; won/lost: the questions the second stage "
        "wins and loses; p: their sign test, unadjusted",
    )


def movement_table(systems: Mapping[str, Ranks], base: str = HYBRID, n: int = TOP_N) -> Table:
    """:func:`movement` with its unit: queries."""
    frame = movement(systems, base, n).rename_axis("second stage")
    total = len(systems[base])
    return Table(
        frame,
        caption=f"Queries (of {total}) whose first hit the second stage moved up, down or not "
        f"at all; beyond {n}: out of its reach, unchanged",
    )


def cost_view(latencies: Sequence[Latency]) -> Table:
    """What each stage costs per query, the long stage names wrapped (cut in plain text); the
    caption says so when the cross-encoder timed is the stand-in."""
    standin = any(
        STANDIN_LABEL in lat.stage for lat in latencies if _kind(lat.stage) == "cross-encoder"
    )
    note = (
        "the cross-encoder timed is rag_lab's stand-in: its cost is the architecture's, its "
        "scores are meaningless"
        if standin
        else ""
    )
    return costs(latencies, shorten=38, note=note)


def availability(reranker: Reranker | None, width: int = 92) -> str:
    """One plain sentence, in lines of at most ``width`` characters: which cross-encoder this
    run has, and what that means for its numbers."""
    return textwrap.fill(_availability(reranker), width)


def _availability(reranker: Reranker | None) -> str:
    name = HUB_ID.split("/")[-1]
    if reranker is None:
        return (
            f"The cross-encoder {name} is not available here (neither ${ENV_VAR} nor the "
            "Hugging Face cache holds it), so this notebook shows no quality numbers for it; "
            "a stand-in of the same architecture only measures its cost."
        )
    if reranker.standin:
        return (
            f"The cross-encoder loaded is rag_lab's stand-in, not {name}: its quality numbers "
            "below are meaningless and are labelled so."
        )
    where = f"${ENV_VAR}" if reranker.source != HUB_ID else "the Hugging Face cache"
    return f"The cross-encoder {name} is loaded from {where}; its quality numbers are below."


def movement(systems: Mapping[str, Ranks], base: str = HYBRID, n: int = TOP_N) -> pd.DataFrame:
    """Per reranked system, queries whose first hit moved up, down or not, against ``base``.

    ``beyond n`` counts the queries whose first hit is below rank n (or absent) in ``base``:
    reranking the top n cannot reach them, and their rank is unchanged by construction.
    """
    rows = {}
    for name, ranks in systems.items():
        if name == base:
            continue
        up = down = same = beyond = 0
        for before, after in zip(systems[base], ranks, strict=True):
            if before is None or before > n:
                beyond += 1
            elif after < before:
                up += 1
            elif after > before:
                down += 1
            else:
                same += 1
        rows[name] = {"up": up, "down": down, "same": same, f"beyond {n}": beyond}
    return pd.DataFrame.from_dict(rows, orient="index")


_STAGE_SYSTEM = {
    "embed query": "dense",
    "vector scan": "dense",
    "BM25": "BM25",
    "late interaction": "late interaction",
    "cross-encoder": "cross-encoder",
}
"""Whose colour each stage of the latency figure takes (:data:`.plots.SYSTEM_COLORS`)."""


def latency_figure(latencies: Sequence[Latency]):
    """Median ms per query per stage on a log scale, a bar to its 90th percentile, with the
    chapter's figure (a black cross) where it has one; each stage in its retriever's colour."""
    import matplotlib.pyplot as plt

    reference = chapter_reference(latencies)
    y = np.arange(len(latencies))[::-1]
    colors = [plots.SYSTEM_COLORS[_STAGE_SYSTEM[_kind(lat.stage)]] for lat in latencies]
    with plots.style():
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(latencies) + 1.4))
        ax.hlines(
            y,
            [lat.median for lat in latencies],
            [lat.p90 for lat in latencies],
            color=colors,
            lw=2.5,
            alpha=0.45,
        )
        ax.scatter([lat.median for lat in latencies], y, marker="o", color=colors, zorder=3)
        ref = [
            (yi, reference[lat.stage])
            for yi, lat in zip(y, latencies, strict=True)
            if lat.stage in reference
        ]
        ax.plot([ms for _, ms in ref], [yi for yi, _ in ref], **plots.CHAPTER_MARK, zorder=4)
        ax.set_yticks(y, [f"{lat.stage} (n = {len(lat.ms)})" for lat in latencies])
        ax.set_xscale("log")
        ax.set_xlabel("wall time per query (ms, log scale)")
        ax.set_title(
            "What each stage costs per query (n = queries timed)\n"
            "dot: the median here; bar: up to the 90th percentile; cross: the chapter's figure",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def rank_figure(
    systems: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
    base: str = HYBRID,
    n: int = TOP_N,
    k: int = 4,
):
    """Each query's first-hit rank before (``base``) and after each second stage, one panel
    per stage, on log scales with rank 1 at the top left: above the diagonal the needle
    moved up, below it down; the lines at ``k`` mark what entered and left the top ``k``.
    Queries beyond ``n`` (out of reach) share one mark in the corner. A dot's area counts
    the queries at that point."""
    import matplotlib.pyplot as plt

    stages = [name for name in systems if name != base]
    beyond = n * 1.6
    before = systems[base]
    with plots.style():
        fig, axes = plt.subplots(1, len(stages), figsize=(5.6 * len(stages), 6.0), squeeze=False)
        for ax, name in zip(axes.flat, stages, strict=True):
            after = systems[name]
            points: dict[tuple[float, float, str], int] = {}
            for b, a in zip(before, after, strict=True):
                if b is None or b > n:
                    key = (beyond, beyond, "out of reach")
                else:
                    key = (b, a, "up" if a < b else "down" if a > b else "same")
                points[key] = points.get(key, 0) + 1
            handles = []
            for move, color in plots.MOVE_COLORS.items():
                here = [(x, y, c) for (x, y, m), c in points.items() if m == move]
                ax.scatter(
                    [x for x, _, _ in here],
                    [y for _, y, _ in here],
                    s=[18 * c for _, _, c in here],
                    color=color,
                    alpha=0.75,
                    lw=0,
                    zorder=3,
                    clip_on=False,
                )
                for x, y, c in here:
                    if c > 1:
                        ax.annotate(
                            str(c),
                            (x, y),
                            xytext=(6, -9),
                            textcoords="offset points",
                            fontsize=7,
                            color=plots.NEUTRAL["ink"],
                        )
                total = sum(c for _, _, c in here)
                handles.append(
                    plt.Line2D([], [], marker="o", ls="", color=color, label=f"{move}: {total}")
                )
            ax.plot([0.7, beyond * 1.2], [0.7, beyond * 1.2], color=plots.NEUTRAL["faint"], lw=0.8)
            for line in (ax.axvline, ax.axhline):
                line(k + 0.5, color=plots.NEUTRAL["ink"], lw=0.8, ls="--")
            pairs = [(b, a) for b, a in zip(before, after, strict=True) if b is not None]
            entered = sum(k < b <= n and a <= k for b, a in pairs)
            left = sum(b <= k < a for b, a in pairs)
            ink = plots.NEUTRAL["ink"]
            ax.text(n, 0.8, f"into the top {k}: {entered}", ha="right", va="top", color=ink)
            ax.text(0.8, n, f"out of the top {k}: {left}", ha="left", va="bottom", color=ink)
            ticks = [*sorted({1, 2, 3, k, 8, 16, n}), beyond]
            labels = [*map(str, ticks[:-1]), f"> {n}"]
            ax.set_xscale("log")
            ax.set_yscale("log")
            for axis in (ax.set_xticks, ax.set_yticks):
                axis(ticks, labels)
            ax.minorticks_off()
            ax.set_xlim(0.75, beyond * 1.2)
            ax.set_ylim(beyond * 1.2, 0.75)  # rank 1 at the top: up is better
            ax.set_xlabel(f"rank of the first chunk holding the needle, {base} alone (log)")
            ax.set_ylabel(f"the same, after {name.removeprefix(base + ' + ')} (log)")
            stage = "late interaction" if name == LATE else "cross-encoder"
            ax.set_title(name, fontsize=9, color=plots.SYSTEM_COLORS[stage])
            ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=4)
        fig.suptitle(
            f"Where the second stage moves each query's first hit (n = {len(before)} queries, "
            f"{len(set(clusters))} questions)\ndot area: queries at that point; dashed: rank "
            f"{k}; only the top {n} are reranked",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def entries(
    ranks: Mapping[str, Ranks],
    latencies: Sequence[Latency],
    reranker: Reranker | None,
    queries: Sequence[Query],
) -> list[Entry]:
    """The chapter's reranking claims: this notebook's part of the ledger."""
    cost = {_kind(lat.stage): lat.median for lat in latencies}
    cross, scan = cost["cross-encoder"], cost["vector scan"]
    real = reranker is not None and not reranker.standin
    at = {"notebook": "05", "benchmark": "d2l"}
    if real:
        lift = PairedClaim("cross>hybrid@R1", a=system_name(reranker))
        quality = paired_entries(**at, claims=[lift], ranks=ranks, clusters=_clusters(queries))
    else:
        quality = [
            fixed_entry(
                "cross>hybrid@R1",
                **at,
                verdict=Verdict.NOT_MEASURED,
                reason=f"the weights of {HUB_ID} are not here (${ENV_VAR}); the stand-in's "
                "scores are meaningless",
            )
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


def _kind(stage: str) -> str:
    for prefix in ("BM25", "vector scan", "late interaction", "cross-encoder", "embed query"):
        if stage.startswith(prefix):
            return prefix
    return stage


def joint_view(j) -> Table:
    """The LLM reranker on its sample beside the hybrid, and the chapter's first stage and
    cross-encoder on its own queries."""
    from rag_lab.evaluation import joint

    frame = joint.table(j)
    first = pd.DataFrame(
        {
            "queries": [chapter.CORPUS["queries"]],
            "R@1": [chapter.RERANK_R1["dense"]],
            "R@5": [float("nan")],
            "MRR": [chapter.RERANK_MRR["dense"]],
        },
        index=["the chapter, first stage"],
    )
    frame = pd.concat([frame.iloc[:-1], first, frame.iloc[-1:]])
    shown = pd.DataFrame(
        {
            "queries": frame["queries"],
            "R@1": frame["R@1"].map(lambda v: f"{v:.3f}"),
            "R@5": frame["R@5"].map(lambda v: "–" if np.isnan(v) else f"{v:.3f}"),
            "MRR": frame["MRR"].map(lambda v: f"{v:.3f}"),
        },
        index=pd.Index(frame.index, name="order"),
    )
    return Table(
        shown,
        caption=f"{len(j.queries)} sampled questions (seed {joint.SEED}), course phrasing, one "
        f"query each; the hybrid's top {joint.TOP_N} reordered by the generator's Yes/No "
        "log-odds on each chunk's quoted content. The chapter's rows are its first stage and "
        f"its cross-encoder on its top {chapter.RERANK_TOP_N}, on its own queries.",
    )


LLM_STAGE = "LLM reranker (Yes/No log-odds)"


def llm_latency(scorer, query: Query, passages: Sequence[str]) -> Latency:
    """One query's pairs through the generator, cache bypassed, after one pair to load it."""
    import time

    scorer.score(query.text, passages[:1])
    start = time.perf_counter()
    scorer.score(query.text, passages)
    ms = 1000 * (time.perf_counter() - start)
    return Latency(f"{LLM_STAGE} × {len(passages)}", np.array([ms]))


def llm_cost_view(latencies: Sequence[Latency], llm: Latency) -> Table:
    """What one query costs the LLM reranker (:func:`llm_latency`) beside the cross-encoder
    timed here and the chapter's."""
    cross = [lat for lat in latencies if _kind(lat.stage) == "cross-encoder"]
    return cost_view([*cross, llm])
