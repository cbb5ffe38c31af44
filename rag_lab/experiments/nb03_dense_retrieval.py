"""Notebook 03: the six chunkings under dense retrieval, worded against the chapter's claims.

The measures are :func:`rag_lab.evaluation.retrieval.strategies`'s (a
:class:`~rag_lab.evaluation.retrieval.Strategies` record); this module embeds the chunkings
with a line per strategy, lays the record out in tables that fit a page and reads it (its
figure is :func:`rag_lab.evaluation.figures.strategies_figure`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import STRATEGIES
from rag_lab.evaluation import baselines, chapter, claims, geometry, overlap
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.recall import fmt_interval
from rag_lab.evaluation.retrieval import Strategies
from rag_lab.evaluation.runs import split_by_phrasing
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.experiments import timing
from rag_lab.experiments.present import Table
from rag_lab.metrics import Ranks, hits_at
from rag_lab.models.encoder import Timing
from rag_lab.questions import Query
from rag_lab.stats import paired_difference

HEADLINE = ("E>A@R20", "E>C@R20", "F<E@R20", "B=A@R20")
"""The claims this notebook opens with: the chapter's recall claims on its central table."""


def index_all(lab: Lab) -> list[str]:
    """Embed the six chunkings (from the cache where it has them); one line per strategy."""
    lines = []
    for name, chunks in lab.chunks_by.items():
        lab.index(name)
        fresh = lab.encoder.last.computed if hasattr(lab.encoder, "last") else len(chunks)
        cached = len(chunks) - fresh
        lines.append(f"{name}: {len(chunks)} chunks, {fresh} embedded now, {cached} from the cache")
    return lines


def entries(dense: Strategies) -> list[Entry]:
    """The chapter's chunking claims on the lab's corpus: this notebook's part of the ledger."""
    return claims.strategy_entries(dense, "03", "d2l", sections=dense.sections)


def legend() -> str:
    """The strategies' letters, for the text above a table: ``A blind · B blind + overlap …``."""
    return " · ".join(f"**{name}** {s.label}" for name, s in STRATEGIES.items())


def recall_tables(dense: Strategies) -> tuple[Table, Table]:
    """Recall@k of each strategy with the design's interval, and beside it what the
    chapter's table shows: its per-query interval at R@20, needles no chunk holds."""
    ks = dense.recall.ks
    n, questions = dense.recall.rows[0].n, len(set(dense.clusters))
    view = dense.recall.view(intervals="by question")
    recall = Table(
        view[[f"R@{k}" for k in ks] + ["MRR"]],
        caption=f"Recall@k over {n} queries, 95 % interval with the {questions} questions as "
        "the sample",
    )
    per_query = dense.recall.view(intervals="per query")
    misses = pd.DataFrame(
        {
            "R@20 per query": per_query["R@20"],
            "queries missed": view["no hit"],
            "questions destroyed": [dense.destroyed.count(s) for s in view.index]
            if dense.destroyed is not None
            else "–",
        },
        index=view.index,
    )
    return recall, Table(
        misses,
        caption=f"As the chapter tabulates them: R@20 with Wilson's interval over the {n} "
        "queries; queries no chunk can answer (needle cut); questions whose needle is cut",
    )


def paired_table(dense: Strategies) -> Table:
    """Every comparison of the family: the difference by question with its interval, the
    question-level test, the chapter's per-query test, the chapter's result."""
    return Table(
        dense.paired.view(chapter.paired_reference),
        caption="a − b in Recall@k; questions: won/lost by a; p: their sign test, unadjusted",
    )


def phrasing_table(dense: Strategies) -> Table:
    """Recall per strategy and phrasing (each phrasing one query per question)."""
    view = dense.by_phrasing.view(intervals="per query").rename_axis("strategy, wording")
    n = int(view["n"].iloc[0])
    return Table(
        view.drop(columns=["n", "no hit"]),
        caption=f"Recall@k per wording, n = {n} queries each, Wilson 95 % interval",
    )


def reading(dense: Strategies, queries: Sequence[Query], strategy: str = "E") -> str:
    """What the tables add to the findings: the intervals, overlap on ranking alone, and
    the ticket wording, each read from an interval by question."""
    return "\n".join(
        [_intervals(dense), _overlap_and_ranking(dense), _ticket_wording(dense, queries, strategy)]
    )


def _intervals(dense: Strategies) -> str:
    a, e = dense.recall["A"], dense.recall["E"]
    lo_a, hi_a = a.recall[20].lo, a.recall[20].hi
    lo_e, hi_e = e.recall[20].lo, e.recall[20].hi
    separate = hi_a < lo_e or hi_e < lo_a
    return (
        f"- **Intervals.** At n = {a.n}, R@20 is [{lo_a:.3f}, {hi_a:.3f}] for A and "
        f"[{lo_e:.3f}, {hi_e:.3f}] for E (the chapter: {fmt_interval(chapter.WILSON_R20['A'])} "
        f"and {fmt_interval(chapter.WILSON_R20['E'])}); here they "
        + (
            "do not overlap."
            if separate
            else "overlap, so the unpaired table cannot tell A and E apart."
        )
        + " With the questions as the sample (both phrasings of a question succeed or "
        f"fail together): {fmt_interval(a.by_question[20])} and "
        f"{fmt_interval(e.by_question[20])}: wider, as the design is."
    )


def _overlap_and_ranking(dense: Strategies) -> str:
    """B vs A, and the same on the queries whose needle survives in both: ranking proper."""
    ranks_a, ranks_b = dense.ranks["A"], dense.ranks["B"]
    clusters = list(dense.clusters)
    both = [a is not None and b is not None for a, b in zip(ranks_a, ranks_b, strict=True)]
    kept = {
        s: [r for r, keep in zip(dense.ranks[s], both, strict=True) if keep] for s in ("A", "B")
    }
    kept_clusters = [c for c, keep in zip(clusters, both, strict=True) if keep]
    whole = [paired_difference(hits_at(ranks_b, k), hits_at(ranks_a, k), clusters) for k in (8, 20)]
    ranking = [
        paired_difference(hits_at(kept["B"], k), hits_at(kept["A"], k), kept_clusters)
        for k in (8, 20)
    ]
    rescued = sum(a is None and b is not None for a, b in zip(ranks_a, ranks_b, strict=True))
    zero = all(d.lo <= 0 <= d.hi for d in ranking)
    return (
        f"- **Overlap and ranking.** B − A by question: {whole[0]} at R@8, {whole[1]} at R@20 "
        f"on every query; B holds {rescued} needles that A's cuts destroy. On the "
        f"{sum(both)} queries whose needle survives in both ({len(set(kept_clusters))} "
        f"questions): {ranking[0]} at R@8, {ranking[1]} at R@20 — "
        + (
            "both intervals include zero: what overlap adds here is rescued needles; on "
            "ranking alone this design cannot tell."
            if zero
            else "an interval excludes zero: overlap changes ranking too."
        )
    )


def _ticket_wording(dense: Strategies, queries: Sequence[Query], strategy: str) -> str:
    phrasing = split_by_phrasing(dense.ranks[strategy], queries)
    questions = [q.question.id for q in queries if q.phrasing == "course"]
    if questions != [q.question.id for q in queries if q.phrasing == "ticket"]:
        raise ValueError("each question needs its course and ticket phrasing, in one order")
    d = [
        paired_difference(hits_at(phrasing["course"], k), hits_at(phrasing["ticket"], k), questions)
        for k in (8, 20)
    ]
    zero = all(x.lo <= 0 <= x.hi for x in d)
    return (
        f"- **Ticket wording ({strategy}, {len(questions)} questions).** Course − ticket: "
        f"{d[0]} at R@8, {d[1]} at R@20 — "
        + (
            "both intervals include zero: at this size the wording's cost cannot be told "
            "from none, which is not evidence that there is none."
            if zero
            else "an interval excludes zero: the wording costs recall."
        )
    )


def index_cost(cold: Timing, backend: str) -> str:
    """What indexing costs per chunk, beside the chapter's figure and the machine it ran on."""
    return (
        f"index time: {cold.ms_per_text:.1f} ms per chunk over {cold.computed} chunks of E\n"
        f"  {backend} backend, single-threaded, cache bypassed\n"
        f"  the chapter: {chapter.INDEX_MS_PER_CHUNK:.0f} ms per chunk, single-threaded\n"
        f"  {timing.machine()}"
    )


# --- issue 25: the chapter's baseline beside ours, and what the overlap rescues -------------


def baseline_table(ranks: Ranks, queries: Sequence[Query], chunks: int) -> Table:
    """The chapter's dense R@1 and MRR beside strategy E's, overall, by phrasing and by
    needle length (:func:`rag_lab.evaluation.baselines.side_by_side`)."""
    questions = len({q.question.id for q in queries})
    return Table(
        baselines.side_by_side(ranks, queries, chunks),
        caption=f"Dense retrieval, R@1 and MRR over queries; 95 % intervals by question "
        f"({questions} questions, two phrasings each); chunks: how many compete per query",
    )


def _groups(queries: Sequence[Query]) -> dict[str, np.ndarray]:
    """The groups :func:`baselines.side_by_side` splits by, as masks over the queries."""
    lengths = np.array([len(q.needle) for q in queries])
    median = float(np.median(lengths))
    return {
        **{
            p: np.array([q.phrasing == p for q in queries])
            for p in dict.fromkeys(q.phrasing for q in queries)
        },
        "short": lengths <= median,
        "long": lengths > median,
    }


def _contains(interval: tuple[float, float, float], value: float) -> bool:
    return interval[1] <= value <= interval[2]


def baseline_reading(
    ranks: Ranks, queries: Sequence[Query], chunks: int, judged: Mapping[str, Entry]
) -> str:
    """The gap between the chapter's dense baseline and ours, and which of the table's
    splits (phrasing, needle length, chunks) could explain it: a split explains it when the
    chapter's value falls inside that group's interval."""
    clusters = [q.question.id for q in queries]
    ref = {"R@1": chapter.RERANK_R1["dense"], "MRR": chapter.RERANK_MRR["dense"]}
    ours = baselines.r1_and_mrr(ranks, clusters)
    groups = _groups(queries)
    within: dict[str, list[str]] = {}
    for name, mask in groups.items():
        keep = np.flatnonzero(mask)
        m = baselines.r1_and_mrr([ranks[i] for i in keep], [clusters[i] for i in keep])
        within[name] = [metric for metric in ref if _contains(m[metric], ref[metric])]
    implied = geometry.implied_length(chapter.DESTROYED_BY_BLIND, chapter.CORPUS["questions"])
    median = float(np.median([len(q.needle) for q in queries]))
    ratio = ours["R@1"][0] / ref["R@1"]
    crowd = chapter.CHUNKS_PER_BOUNDARY_STRATEGY / chunks
    verdicts = "; ".join(
        f"{judged[f'dense-baseline-{m}'].claim}: *{judged[f'dense-baseline-{m}'].verdict.label}*"
        for m in ref
    )
    phrasings = [g for g in groups if g not in ("short", "long")]
    reached = [g for g in groups if within[g]]
    weaker = ours["R@1"][1] > ref["R@1"] and ours["MRR"][1] > ref["MRR"]
    text = (
        "- **The chapter's dense baseline "
        + ("is weaker than ours.** " if weaker else "beside ours.** ")
        + f"Dense E's R@1 is {ratio:.1f}× the chapter's ({verdicts}). "
        + (
            f"The chunks do not explain it: {crowd:.2f}× as many compete there, against "
            f"{ratio:.1f}× in R@1. "
            if crowd < ratio
            else f"{crowd:.2f}× as many chunks compete there, as much as the gap in R@1. "
        )
    )
    if any(within[p] for p in phrasings):
        text += (
            "The phrasing comes close: on "
            + ", ".join(
                f"{p}-style queries the chapter's {' and '.join(within[p])}"
                for p in phrasings
                if within[p]
            )
            + " lies inside our interval. "
        )
    else:
        text += (
            f"Nor does the phrasing: on {' and on '.join(p + '-style' for p in phrasings)} "
            "queries alone both intervals still exclude the chapter's values. "
        )
    if within["short"] and not within["long"]:
        text += (
            f"The needle's length goes some way: on the shorter half of the needles the "
            f"chapter's {' and '.join(within['short'])} lies inside our interval, on the "
            f"longer half it does not. By notebook 02's geometry the chapter's needles are "
            f"about {implied:.0f} characters, against a median of {median:.0f} here"
            + (
                ": shorter needles give a chunk less to match, the one split here consistent "
                "with the gap."
                if implied < median
                else "."
            )
        )
    elif not reached:
        text += (
            "No split of the table reaches the chapter's values, so the gap is the corpus and "
            "its needles taken together, not one of these factors alone."
        )
    else:
        text += "Groups whose interval holds a chapter value: " + ", ".join(reached) + "."
    return text


def quoted_table(ranks: Mapping[str, Mapping[str, Ranks]]) -> Table:
    """Recall@k on the embedded text against the quoted content, per overlapping strategy
    (:func:`rag_lab.evaluation.overlap.quoted_table`), rates to three places."""
    frame = overlap.quoted_table(ranks).reset_index(level="k")
    for column in ("R@k embedded", "R@k quoted"):
        frame[column] = frame[column].map("{:.3f}".format)
    n = len(next(iter(next(iter(ranks.values())).values())))
    return Table(
        frame,
        caption=f"Dense retrieval, Recall@k over {n} queries: the needle whole in the chunk's "
        "embedded text (the hit counted so far) or in its quoted content (what the prompt and "
        "the citation get); found, quoted cut: queries hit only in the first sense",
    )


def pull_table(pulls: Sequence[overlap.Pull]) -> Table:
    """Cosine of each chunk to its predecessor's vector, with and without the overlap."""
    frame = overlap.pull_table(pulls)
    for column in ("cos without", "cos with"):
        frame[column] = frame[column].map("{:.3f}".format)
    documents = len({d for p in pulls for d in p.documents})
    return Table(
        frame,
        caption="Cosine of a chunk's vector to its predecessor's (the overlap-free twin's), "
        "mean over chunks; increase: mean per document, 95 % t-interval over "
        f"{documents} documents",
    )


def overlap_reading(
    rescued: Mapping[str, Sequence[str]],
    judged: Mapping[str, Entry],
    questions: int,
    destroyed: Destroyed | None = None,
) -> str:
    """What the overlap's rescues give the reader: whole in the prompt or cut; with
    ``destroyed``, whether they are all the needles the overlap keeps from its twin's cuts."""
    cut = {s: ids for s, ids in rescued.items() if ids}
    none = [s for s, ids in rescued.items() if not ids]
    words = [
        f"{judged[f'{s}-rescues-whole'].claim}: *{judged[f'{s}-rescues-whole'].verdict.label}*"
        for s in rescued
    ]
    paired = [judged[f"{s}-quoted@R{overlap.K}"] for s in rescued]
    quoted = [f"{e.claim} {e.here}, {e.interval} ({e.verdict.label})" for e in paired]
    text = "- **What the overlap rescues.** "
    if cut:
        text += (
            " ".join(
                f"{len(ids)} of {questions} needles lie whole in {s}'s embedded text only, in "
                "the overlap, so a hit on them reaches the prompt cut in two"
                + _all_it_keeps(s, ids, destroyed)
                + "."
                for s, ids in cut.items()
            )
            + " "
        )
    if none:
        text += (
            f"{', '.join(none)} hold no needle whole in the overlap alone: their hits reach "
            "the prompt whole. "
        )
    unsure = [e for e in paired if e.verdict is Verdict.INCONCLUSIVE]
    return text + (
        f"({'; '.join(words)}.) Scored on the quoted content instead, at R@{overlap.K}, by "
        f"question: {'; '.join(quoted)}."
        + "".join(
            f" {e.claim}'s interval includes zero and a change beyond its margin "
            f"(±{e.margin:.2f}): this design cannot tell, which is not evidence of none."
            for e in unsure
            if e.margin is not None
        )
    )


def _all_it_keeps(strategy: str, ids: Sequence[str], destroyed: Destroyed | None) -> str:
    """``: every needle B keeps that A destroys`` when the rescues are exactly those."""
    if destroyed is None:
        return ""
    base = overlap.WITHOUT[strategy]
    kept = set(destroyed.questions[base]) - set(destroyed.questions[strategy])
    if set(ids) == kept:
        return f": every needle {strategy} keeps whole where {base}'s cuts destroy it"
    return f" ({len(kept)} needles {strategy} keeps whole where {base}'s cuts destroy them)"


def pull_reading(pulls: Sequence[overlap.Pull], judged: Mapping[str, Entry]) -> str:
    """The chapter's mechanism for overlap hurting ranking, read from the pull's intervals."""
    above = [p.strategy for p in pulls if judged[f"{p.strategy}-overlap-pulls"].verdict.agrees]
    parts = []
    for p in pulls:
        m, lo, hi = p.by_document()
        verdict = judged[f"{p.strategy}-overlap-pulls"].verdict.label
        parts.append(
            f"{p.strategy} vs {overlap.WITHOUT[p.strategy]} {m:+.3f} [{lo:+.3f}, {hi:+.3f}] "
            f"(*{verdict}*)"
        )
    text = (
        f"- **The overlap's pull.** The cosine of a chunk to its predecessor, with the "
        f"overlap less without, by document: {'; '.join(parts)}. "
    )
    if len(above) == len(pulls):
        text += (
            "Every interval lies above zero: the overlap does move a chunk's vector toward "
            "its neighbour, the mechanism the chapter names; how much that costs ranking is "
            "the F − E and B − A comparisons above, not this."
        )
    else:
        text += (
            "Not every interval lies above zero: the mechanism is not shown for "
            + ", ".join(p.strategy for p in pulls if p.strategy not in above)
            + "."
        )
    return text
