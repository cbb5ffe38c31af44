"""Notebook 03: the six chunkings under dense retrieval, worded against the chapter's claims.

The measures are :func:`rag_lab.evaluation.retrieval.strategies`'s (a
:class:`~rag_lab.evaluation.retrieval.Strategies` record); this module embeds the chunkings
with a line per strategy and reads the record (its figure is
:func:`rag_lab.evaluation.figures.strategies_figure`).
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_lab.evaluation import chapter, claims, ledger
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.recall import fmt_interval
from rag_lab.evaluation.retrieval import Strategies
from rag_lab.evaluation.runs import split_by_phrasing
from rag_lab.experiments import wording
from rag_lab.metrics import hits_at, paired_at
from rag_lab.questions import Query
from rag_lab.stats import paired


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


def reading(dense: Strategies, queries: Sequence[Query], strategy: str = "E") -> str:
    """The chapter's chunking claims under dense retrieval, judged on the record."""
    judged = entries(dense)
    lines = [_intervals(dense), *(wording.entry_line(e) for e in judged)]
    lines += [_overlap_and_ranking(dense), _ticket_wording(dense, queries, strategy)]
    return "\n".join(lines) + "\n\n" + ledger.markdown(judged)


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
        + " With the 32 questions as the sample (both phrasings of a question succeed or "
        f"fail together): {fmt_interval(a.by_question[20])} and "
        f"{fmt_interval(e.by_question[20])}."
    )


def _overlap_and_ranking(dense: Strategies) -> str:
    """B vs A, and the same on the queries whose needle survives in both: ranking proper."""
    ranks_a, ranks_b = dense.ranks["A"], dense.ranks["B"]
    b_a = [paired_at(ranks_b, ranks_a, k) for k in (8, 20)]
    both = [a is not None and b is not None for a, b in zip(ranks_a, ranks_b, strict=True)]
    kept = {
        s: [r for r, keep in zip(dense.ranks[s], both, strict=True) if keep] for s in ("A", "B")
    }
    ranking_only = [paired_at(kept["B"], kept["A"], k) for k in (8, 20)]
    helps = any(r.significant_win for r in ranking_only)
    if any(r.significant_win for r in b_a) and not helps:
        note = " — significant, but only because B rescues needles that A destroys; "
    else:
        note = "; "
    return (
        f"- **Overlap and ranking.** B vs A: {b_a[0]} at R@8, {b_a[1]} at R@20"
        + note
        + f"on the {sum(both)} queries whose needle survives in both: {ranking_only[0]} at "
        f"R@8, {ranking_only[1]} at R@20 (per query). "
        + (
            "Here overlap does help ranking significantly."
            if helps
            else "Overlap does not significantly help ranking here."
        )
    )


def _ticket_wording(dense: Strategies, queries: Sequence[Query], strategy: str) -> str:
    phrasing = split_by_phrasing(dense.ranks[strategy], queries)
    cmp = [paired(hits_at(phrasing["course"], k), hits_at(phrasing["ticket"], k)) for k in (8, 20)]
    return (
        f"- **Ticket wording ({strategy}, {len(phrasing['course'])} questions, course vs "
        f"ticket).** R@8 {cmp[0]}; R@20 {cmp[1]}. "
        + (
            "Support-ticket wording costs recall significantly."
            if any(r.significant_win for r in cmp)
            else "The difference is not significant at this size."
        )
    )
