"""Notebook 05: a second stage on the hybrid's top 25, its quality, its cost, its reading.

Every verdict is derived from the numbers passed in (:mod:`rag_lab.evaluation.verdicts`).
Whatever is measured with the stand-in cross-encoder is named for what it is, and a
stand-in's quality numbers are never read as evidence about the chapter's claim.
"""

from __future__ import annotations

import textwrap
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.evaluation import chapter, plots
from rag_lab.evaluation.ledger import (
    Direction,
    Entry,
    PairedClaim,
    count_entry,
    fixed_entry,
    paired_entries,
)
from rag_lab.evaluation.paired import Comparison, PairedTable, paired_table
from rag_lab.evaluation.recall import recall_table
from rag_lab.evaluation.runs import Rankings
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.experiments.nb04_bm25_and_hybrid import costs
from rag_lab.experiments.present import Table
from rag_lab.experiments.timing import Latency, chapter_reference, time_per_call
from rag_lab.late_interaction import maxsim
from rag_lab.metrics import Ranks, first_hit_ranks, hits_at, mrr, relevant_chunks
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


def chapter_quality() -> str:
    """The chapter's reranking figures, on its own corpus, in one line."""
    r1, m = chapter.RERANK_R1, chapter.RERANK_MRR
    return (
        f"The chapter (its corpus, cross-encoder on its top {chapter.RERANK_TOP_N}): "
        f"R@1 {r1['dense']:.3f} → {r1['cross-encoder']:.3f}, "
        f"MRR {m['dense']:.3f} → {m['cross-encoder']:.3f}"
    )


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


# --- the reading -------------------------------------------------------------------


def reading(
    ranks: Mapping[str, Ranks],
    latencies: Sequence[Latency],
    reranker: Reranker | None,
    queries: Sequence[Query],
    n: int = TOP_N,
) -> str:
    """The chapter's reranking claims, judged on our numbers, as Markdown bullets.

    ``ranks`` holds :data:`HYBRID`, :data:`LATE` and, when ``reranker`` is given, its
    :func:`system_name`. ``latencies`` holds the BM25, vector-scan, late-interaction and
    cross-encoder stages (names as produced by the package).
    """
    cost = {_kind(lat.stage): lat.median for lat in latencies}
    paired = comparisons(ranks, queries)
    judged = {e.claim: e for e in entries(ranks, latencies, reranker, queries)}
    lines = [
        _cross_quality(ranks, reranker, paired, judged["cross>hybrid@R1"]),
        _cost(cost, reranker, n, judged["cross-cost"]),
        _late(ranks, cost, paired),
    ]
    base = ranks[HYBRID]
    out_of_reach = sum(r is None or r > n for r in base)
    lines.append(
        f"- **Ceiling.** Reranking the top {n} cannot reach the {out_of_reach} of {len(base)} "
        f"queries whose needle the hybrid ranks below {n}; their ranks, and Recall@k for k > "
        f"{n}, are unchanged. No second stage here can lift R@1 above the hybrid's "
        f"R@{n} = {float(hits_at(base, n).mean()):.3f}."
    )
    return "\n".join(lines)


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
    chapter_lift = (
        f"R@1 {chapter.RERANK_R1['dense']:.3f} → {chapter.RERANK_R1['cross-encoder']:.3f}"
    )
    if real:
        lift = PairedClaim(
            "cross>hybrid@R1",
            f"a cross-encoder on the top {chapter.RERANK_TOP_N} lifts R@1",
            system_name(reranker),
            HYBRID,
            1,
            Direction.BETTER,
        )
        quality = paired_entries(**at, claims=[lift], ranks=ranks, clusters=_clusters(queries))
    else:
        quality = [
            fixed_entry(
                **at,
                claim="cross>hybrid@R1",
                statement=f"a cross-encoder on the top {chapter.RERANK_TOP_N} lifts R@1",
                verdict=Verdict.NOT_MEASURED,
                reason=f"the weights of {HUB_ID} are not here (${ENV_VAR}); the stand-in's "
                "scores are meaningless",
                metric="R@1",
                chapter=chapter_lift,
                direction=Direction.BETTER,
            )
        ]
    return [
        *quality,
        count_entry(
            **at,
            claim="cross-cost",
            statement="scoring the short list costs two orders of magnitude more than the scan",
            metric=f"median ms per query, {TOP_N} pairs against the vector scan",
            holds=cross >= 100 * scan,
            here=f"{cross:.0f} ms against {scan:.2f} ms" + ("" if real else " (stand-in)"),
            chapter=f"{chapter.CROSS_ENCODER_MS_PER_QUERY:.0f} ms against "
            f"{chapter.VECTOR_SCAN_MS_PER_QUERY} ms",
            rule="reproduces when the cross-encoder costs at least 100 times the scan",
        ),
        fixed_entry(
            **at,
            claim="colbert",
            statement="late interaction (ColBERT) ranks between the two",
            verdict=Verdict.NOT_TESTABLE,
            reason="no ColBERT checkpoint here: MaxSim over all-MiniLM-L6-v2's token vectors "
            "(trained to be mean-pooled) tests those weights, not the method",
            metric="R@1",
        ),
    ]


def _clusters(queries: Sequence[Query]) -> list[str]:
    return [q.question.id for q in queries]


def _cross_quality(
    ranks: Mapping[str, Ranks], reranker: Reranker | None, paired: PairedTable, judged: Entry
) -> str:
    claim = (
        f"the chapter's gain from reranking its top {chapter.RERANK_TOP_N} (R@1 "
        f"{chapter.RERANK_R1['dense']:.3f} → {chapter.RERANK_R1['cross-encoder']:.3f}, MRR "
        f"{chapter.RERANK_MRR['dense']:.3f} → {chapter.RERANK_MRR['cross-encoder']:.3f})"
    )
    if reranker is None:
        return (
            f"- **Cross-encoder quality: not measured.** The weights of {HUB_ID} are not "
            f"available here, so {claim} is neither confirmed nor refuted by this run. Put them "
            f"at ${ENV_VAR} and re-run: the same notebook then measures it."
        )
    name = system_name(reranker)
    r1, m = _r1(ranks[name]), mrr(ranks[name])
    c = paired.get(name, HYBRID, 1)
    numbers = (
        f"R@1 {_r1(ranks[HYBRID]):.3f} → {r1:.3f}, MRR {mrr(ranks[HYBRID]):.3f} → {m:.3f} "
        f"(vs hybrid at R@1: {_at(c)})"
    )
    if reranker.standin:
        return (
            f"- **Cross-encoder quality: stand-in only.** The reranker is the stand-in, whose "
            f"scores are meaningless: {numbers} is noise and says nothing about {claim}."
        )
    return (
        f"- **Cross-encoder quality.** {numbers}. Against {claim}, the ledger's verdict: "
        f"{judged.verdict_text}."
    )


def _cost(cost: Mapping[str, float], reranker: Reranker | None, n: int, judged: Entry) -> str:
    cross = cost["cross-encoder"]
    which = (
        "the stand-in (same architecture, so the same cost)"
        if (reranker is None or reranker.standin)
        else "the real model"
    )
    c = chapter
    return (
        f"- **Cost.** Scoring {n} pairs with {which} takes {cross:.0f} ms per query "
        f"(the chapter: {c.CROSS_ENCODER_MS_PER_QUERY:.0f} ms), {cross / cost['BM25']:,.0f}× "
        f"BM25 and {cross / cost['vector scan']:,.0f}× the vector scan (the chapter: "
        f"{c.CROSS_ENCODER_MS_PER_QUERY / c.BM25_MS_PER_QUERY:.0f}× and "
        f"{c.CROSS_ENCODER_MS_PER_QUERY / c.VECTOR_SCAN_MS_PER_QUERY:.0f}×). By the ledger's "
        f"rule ({judged.reason}), the chapter's trade of a cheap wide first stage for a "
        f"scorer two orders of magnitude dearer on a short list: {judged.verdict_text}."
    )


def _late(ranks: Mapping[str, Ranks], cost: Mapping[str, float], paired: PairedTable) -> str:
    rows = {k: paired.get(LATE, HYBRID, k) for k in (1, 4)}
    at = "; ".join(f"R@{k} {c.difference} (Holm p = {c.p_holm:#.2g})" for k, c in rows.items())
    apart = [k for k, c in rows.items() if c.difference is not None and c.difference.excludes(0)]
    effect = (
        "every interval includes zero: this design cannot tell late interaction from the "
        "hybrid, which is not evidence that they rank alike."
        if not apart
        else f"the interval at R@{', R@'.join(map(str, apart))} excludes zero."
    )
    late, first, cross = cost["late interaction"], cost["vector scan"], cost["cross-encoder"]
    between = first < late < cross
    return (
        f"- **Late interaction, on weights not trained for it.** MaxSim over all-MiniLM-L6-v2's "
        f"token vectors (trained to be mean-pooled, not matched token by token as ColBERT's "
        f"are) gives R@1 {_r1(ranks[LATE]):.3f} and MRR {mrr(ranks[LATE]):.3f} against the "
        f"hybrid's {_r1(ranks[HYBRID]):.3f} and {mrr(ranks[HYBRID]):.3f}. Late interaction − "
        f"hybrid by question: {at}; {effect} It costs {late:.1f} ms per query, "
        + (
            "between the vector scan and the cross-encoder, as the chapter places it."
            if between
            else "outside the span between the vector scan and the cross-encoder."
        )
        + " A ColBERT checkpoint would be the fair test of the method; this is a test of the "
        "packaged weights."
    )


def _at(c: Comparison) -> str:
    return f"{c.per_query} per query, {c.per_question} per question, Holm p = {c.p_holm:#.2g}"


def _kind(stage: str) -> str:
    for prefix in ("BM25", "vector scan", "late interaction", "cross-encoder", "embed query"):
        if stage.startswith(prefix):
            return prefix
    return stage


def _r1(ranks: Ranks) -> float:
    return float(hits_at(ranks, 1).mean())


def joint_view(j) -> Table:
    """The LLM reranker on its sample beside the hybrid, and the chapter's cross-encoder."""
    from rag_lab.evaluation import joint

    frame = joint.table(j)
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
        "log-odds on each chunk's quoted content. The chapter's row is its cross-encoder on 64 "
        "queries; what a query costs is timed live, in the cost table above.",
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


def llm_cost_line(latency: Latency) -> str:
    return (
        f"{latency.stage}: {latency.median:,.0f} ms for one query; the chapter's cross-encoder "
        f"{chapter.CROSS_ENCODER_MS_PER_QUERY:.0f} ms"
    )


def joint_reading(j, judged: Sequence[Entry], latency: Latency) -> str:
    """One bullet: the LLM reranker's claims in the ledger's words, and what it cost."""
    by = {e.claim: e for e in judged}
    r1, m = by["llm>hybrid@R1"], by["llm>hybrid@MRR"]
    ms = float(latency.median)
    ratio = ms / chapter.CROSS_ENCODER_MS_PER_QUERY
    said = []
    for name, e in (("R@1", r1), ("MRR", m)):
        if e.verdict is Verdict.INCONCLUSIVE:
            said.append(f"{name}'s interval includes zero: {len(j.queries)} questions cannot tell")
        elif e.verdict is Verdict.CONTRADICTED:
            said.append(f"{name} is worse than the hybrid's, beyond its interval")
        else:
            said.append(f"{name} is better than the hybrid's")
    return (
        f"- **A joint scorer we can run** (an LLM reranker, not the chapter's cross-encoder; "
        f"{len(j.queries)} sampled questions). R@1 against the hybrid: {r1.interval} by "
        f"question, {r1.here}: **{r1.verdict.label}**; MRR {m.interval}: "
        f"**{m.verdict.label}**. " + "; ".join(said).capitalize() + ". A 0.5B instruct model "
        "never trained to judge relevance tests this model, not the architecture: it leaves "
        "the chapter's cross-encoder claim where it was, not measured. "
        + f"One query took {ms:,.0f} ms here ({ratio:.0f}× "
        f"the chapter's {chapter.CROSS_ENCODER_MS_PER_QUERY:.0f} ms cross-encoder, on another CPU)."
    )
