"""Retrieval metrics from first-hit ranks: Recall@k, MRR and their summaries.

Everything here is a function of one number per query: the 1-based rank of the
first relevant chunk in the full ranking, or ``None`` when no relevant chunk is
ranked at all. "Recall@k" is the chapter's name for the fraction of queries
with at least one relevant chunk in the top k (success@k, or hit rate, in TREC
terms); it is what the user of a RAG answer experiences, since one relevant
chunk in the context suffices.

A question grounded in offsets (:class:`rag_lab.questions.SpanQuestion`, Chroma's
benchmark) gets a first-hit rank too: :func:`span_first_hit_rank` is the rank by which
every reference span lies whole inside some retrieved chunk's :func:`chunk_span`, so the
same Recall@k and MRR apply. :func:`span_scores` is Chroma's own character-level recall,
precision and IoU, reproduced with its quirks.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from rag_lab.chunking import Chunk, Strategy, as_strategy, containing
from rag_lab.questions import Query, Question
from rag_lab.spans import Span
from rag_lab.stats import Paired, paired, wilson

Ranks = Sequence[int | None]
"""Per query, the 1-based rank of the first hit, or ``None`` if there is none."""


def first_hit_rank(ranking: Sequence[int], relevant: Collection[int]) -> int | None:
    """1-based position of the first id of ``ranking`` that is in ``relevant``, else ``None``."""
    return next((r for r, doc in enumerate(ranking, start=1) if doc in relevant), None)


def first_hit_ranks(
    rankings: Sequence[Sequence[int]], relevant_sets: Sequence[Collection[int]]
) -> list[int | None]:
    """:func:`first_hit_rank` for each query; both arguments are indexed by query."""
    if len(rankings) != len(relevant_sets):
        raise ValueError(f"{len(rankings)} rankings but {len(relevant_sets)} relevant sets")
    return [first_hit_rank(r, rel) for r, rel in zip(rankings, relevant_sets, strict=True)]


def relevant_chunks(
    chunks: Sequence[Chunk],
    queries: Sequence[Query | Question],
    fold: Callable[[str], str] | None = None,
) -> list[set[int]]:
    """For each query, the positions of the chunks that hold any of its question's passages
    whole (:func:`rag_lab.chunking.containing`, with its ``fold``), each passage read as its
    own rule says (:attr:`rag_lab.questions.Passage.fold`: up to whitespace for a needle
    found so)."""
    if fold is not None:  # fold each chunk once, not once per needle
        chunks = [dataclasses.replace(c, text=fold(c.text)) for c in chunks]
    read = {None: chunks}  # the chunks as each passage's rule reads them, each read once
    by_needle: dict[tuple[str, Callable[[str], str] | None], set[int]] = {}
    for p in (p for q in queries for p in q.passages):
        rule = p.fold
        if (p.needle, rule) not in by_needle:
            needle = p.needle if fold is None else fold(p.needle)
            if rule is not None:
                if rule not in read:
                    read[rule] = [dataclasses.replace(c, text=rule(c.text)) for c in chunks]
                needle = rule(needle)
            by_needle[(p.needle, rule)] = set(containing(read[rule], needle))
    return [set().union(*(by_needle[(p.needle, p.fold)] for p in q.passages)) for q in queries]


def hits_at(ranks: Ranks, k: int) -> np.ndarray:
    """Boolean per query: is the first hit within the top ``k`` (k >= 1)?"""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return np.array([r is not None and r <= k for r in ranks], dtype=bool)


def recall_at(ranks: Ranks, k: int) -> float:
    """Fraction of queries whose first hit is within the top ``k``, in [0, 1]."""
    _check_ranks(ranks)
    return float(hits_at(ranks, k).mean())


def mrr(ranks: Ranks) -> float:
    """Mean reciprocal rank over the full ranking: mean of ``1 / rank``, 0 for ``None``."""
    _check_ranks(ranks)
    return float(np.mean([0.0 if r is None else 1.0 / r for r in ranks]))


@dataclass(frozen=True)
class RecallAt:
    """Recall@k of ``n`` queries with its Wilson interval ``[lo, hi]``."""

    k: int
    hits: int
    n: int
    lo: float
    hi: float

    @property
    def value(self) -> float:
        return self.hits / self.n


@dataclass(frozen=True)
class Summary:
    """One system on one query set: Recall@k with intervals, MRR, queries without a hit."""

    n: int
    recall: dict[int, RecallAt]
    mrr: float
    no_hit: int
    level: float


def summary(ranks: Ranks, ks: Sequence[int] = (1, 4, 8, 20), level: float = 0.95) -> Summary:
    """Recall@k for each ``k`` in ``ks`` with Wilson intervals at ``level``, MRR, and misses."""
    _check_ranks(ranks)
    n = len(ranks)
    recall = {}
    for k in ks:
        hits = int(hits_at(ranks, k).sum())
        recall[k] = RecallAt(k, hits, n, *wilson(hits, n, level))
    no_hit = sum(r is None for r in ranks)
    return Summary(n=n, recall=recall, mrr=mrr(ranks), no_hit=no_hit, level=level)


def summary_table(
    systems: Mapping[str, Ranks], ks: Sequence[int] = (1, 4, 8, 20), level: float = 0.95
) -> pd.DataFrame:
    """One row per system, indexed by name.

    Columns: ``n``; ``R@k``, ``R@k lo``, ``R@k hi`` for each k; ``MRR``; ``no hit``.
    """
    rows = {}
    for name, ranks in systems.items():
        s = summary(ranks, ks, level)
        row: dict[str, float] = {"n": s.n}
        for k, rec in s.recall.items():
            row |= {f"R@{k}": rec.value, f"R@{k} lo": rec.lo, f"R@{k} hi": rec.hi}
        rows[name] = row | {"MRR": s.mrr, "no hit": s.no_hit}
    return pd.DataFrame.from_dict(rows, orient="index")


def paired_at(a: Ranks, b: Ranks, k: int) -> Paired:
    """System ``a`` against ``b`` on the same queries: wins, losses and ties at ``k``."""
    return paired(hits_at(a, k), hits_at(b, k))


def paired_table(
    systems: Mapping[str, Ranks], pairs: Sequence[tuple[str, str]], ks: Sequence[int]
) -> pd.DataFrame:
    """One row per (pair, k): ``a``, ``b``, ``k``, ``wins``, ``losses``, ``p``.

    ``systems`` maps a name to its first-hit ranks (one per query, same query order for
    every system); a query is a hit at k when its rank is <= k.
    """
    rows = []
    for a, b in pairs:
        for k in ks:
            r = paired_at(systems[a], systems[b], k)
            rows.append({"a": a, "b": b, "k": k, "wins": r.wins, "losses": r.losses, "p": r.p})
    return pd.DataFrame(rows, columns=["a", "b", "k", "wins", "losses", "p"])


# --- span ground truth -----------------------------------------------------------------


def chunk_span(chunk: Chunk, strategy: str | Strategy) -> Span:
    """The document characters a chunk's embedded ``text`` holds: its content and its overlap.

    For a strategy with an overlap (B, D, F) the span starts up to
    :data:`rag_lab.chunking.OVERLAP` characters before ``chunk.start``; it always ends at
    ``chunk.end``. A header (E, F) is not document text and is left out. The strategy is
    asked for because a chunk does not record it, and a body's first line can look like a
    header (``[{'content': …`` opens Chroma's chat logs).

    >>> from rag_lab.chunking import Chunk
    >>> chunk_span(Chunk("d", 1, "[T]\\nlap. Body.", "Body.", "", 10, 15), "F")
    Span(doc='d', start=5, end=15)
    """
    s = as_strategy(strategy)
    # The header is one line, "[title > section]", then a newline (chunking._header).
    body = chunk.text.partition("\n")[2] if s.header else chunk.text
    return Span(chunk.doc_id, chunk.end - len(body), chunk.end)


def chunk_spans(chunks: Sequence[Chunk], strategy: str | Strategy) -> list[Span]:
    """:func:`chunk_span` of every chunk, in order: position ``i`` is chunk ``i``'s span."""
    s = as_strategy(strategy)
    return [chunk_span(c, s) for c in chunks]


def span_first_hit_rank(
    ranking: Sequence[int], chunks: Sequence[Span], spans: Sequence[Span]
) -> int | None:
    """The 1-based rank by which every span of ``spans`` lies whole in some chunk ranked so far.

    ``ranking`` lists chunk positions, best first; ``chunks`` are the chunks' spans
    (:func:`chunk_spans`). Different spans may be covered by different chunks, so the
    result is the largest, over the spans, of the first rank whose chunk covers that span;
    ``None`` when some span is covered by no ranked chunk. A question is answered within k
    exactly when this rank is ``<= k``, so :func:`recall_at`, :func:`mrr` and
    :func:`summary` apply unchanged.
    """
    if not spans:
        raise ValueError("a question needs at least one span")
    worst = 0
    for span in spans:
        rank = next((r for r, i in enumerate(ranking, start=1) if span.within(chunks[i])), None)
        if rank is None:
            return None
        worst = max(worst, rank)
    return worst


def span_first_hit_ranks(
    rankings: Sequence[Sequence[int]],
    chunks: Sequence[Span],
    spans_per_query: Sequence[Sequence[Span]],
) -> list[int | None]:
    """:func:`span_first_hit_rank` for each query; rankings and spans are indexed by query.

    The same result, computed with arrays: each distinct span's covering chunks once, then
    per query the rank of every chunk (an inverse permutation) and a minimum.
    """
    if len(rankings) != len(spans_per_query):
        raise ValueError(f"{len(rankings)} rankings but {len(spans_per_query)} span lists")
    docs = np.array([c.doc for c in chunks], dtype=object)
    starts = np.array([c.start for c in chunks], dtype=np.int64)
    ends = np.array([c.end for c in chunks], dtype=np.int64)
    covering: dict[Span, np.ndarray] = {}
    out: list[int | None] = []
    for ranking, spans in zip(rankings, spans_per_query, strict=True):
        if not spans:
            raise ValueError("a question needs at least one span")
        order = np.asarray(ranking, dtype=np.int64)
        rank_of = np.full(len(chunks), np.iinfo(np.int64).max, dtype=np.int64)
        rank_of[order] = np.arange(1, len(order) + 1)
        worst = 0
        for span in spans:
            if span not in covering:
                covering[span] = np.flatnonzero(
                    (docs == span.doc) & (starts <= span.start) & (ends >= span.end)
                )
            found = rank_of[covering[span]]
            best = int(found.min()) if len(found) else None
            if best is None or best > len(order):
                worst = None
                break
            worst = max(worst, best)
        out.append(worst)
    return out


def destroyed_spans(chunks: Sequence[Span], spans: Iterable[Span]) -> list[Span]:
    """The spans that no chunk covers whole, in the order given: no ranking can retrieve them.

    ``chunks`` are the spans of one strategy's chunks (:func:`chunk_spans`); the
    offset-based counterpart of a needle that no chunk's ``text`` holds.
    """
    by_doc: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in chunks:
        by_doc[c.doc].append((c.start, c.end))
    # Per document, chunk starts sorted, and the furthest end among chunks starting so far:
    # a span is covered iff some chunk starting at or before it ends at or after its end.
    reach: dict[str, tuple[list[int], list[int]]] = {}
    for doc, pieces in by_doc.items():
        pieces.sort()
        ends, furthest = [], -1
        for _, end in pieces:
            furthest = max(furthest, end)
            ends.append(furthest)
        reach[doc] = ([start for start, _ in pieces], ends)
    lost = []
    for span in spans:
        starts, ends = reach.get(span.doc, ([], []))
        n = bisect.bisect_right(starts, span.start)
        if n == 0 or ends[n - 1] < span.end:
            lost.append(span)
    return lost


class SpanScores(NamedTuple):
    """Chroma's character-level scores of one question, each in [0, 1]."""

    recall: float
    precision: float
    iou: float


Range = tuple[str, int, int]
"""``(doc_id, start, end)``: characters ``[start, end)`` of one document."""


def span_scores(references: Sequence[Range], retrieved: Sequence[Range]) -> SpanScores:
    """Chroma's recall, precision and IoU of retrieved chunks against reference excerpts.

    Smith & Troynikov, *Evaluating Chunking Strategies for Retrieval* (Chroma, 2024), as
    computed by ``_scores_from_dataset_and_retrievals`` in
    ``chunking_evaluation/evaluation_framework/base_evaluation.py`` of
    github.com/brandonstarxel/chunking_evaluation (read at commit 23ee9651e861, the copy
    the lab could consult; the data is pinned at d451fc4cf56e). Both arguments are
    ``(doc_id, start, end)`` triples; ``retrieved`` is the top k, already cut. With
    ``covered`` the characters of the references that lie inside some retrieved chunk of
    the same document (counted once)::

        recall    = |covered| / Σ |reference|
        precision = |covered| / Σ |retrieved chunk|
        iou       = |covered| / (Σ |retrieved chunk| + Σ |reference not covered|)

    Their code's behaviour, reproduced on purpose:

    1. Ranges are half-open, ``[start, end)``, and a length is ``end - start``
       (``sum_of_ranges``), as Python slices.
    2. ``intersect_two_ranges`` accepts ``start == end``, so a chunk that only touches a
       reference (one ends where the other starts) "intersects" it with length 0. In this
       function that changes no number: the empty piece adds 0 to the numerator and cuts
       the uncovered part into two that keep its length. (In ``_full_precision_score``,
       precision Ω, not computed here, it counts the touching chunk as highlighted.)
    3. The precision denominator is the summed length of *all* retrieved chunks, of any
       document, each counted every time: overlapping chunks count their shared characters
       twice. (Their code builds the union of the intersecting chunks,
       ``denominator_chunks_sets``, and never uses it.)
    4. So the IoU denominator is not the size of a union: it is that same sum plus the
       reference characters no chunk covers. With overlapping chunks (an overlap
       strategy) IoU is below the true Jaccard index of the two sets of characters.
    5. Reference lengths are summed, not united, in the recall denominator, and the
       uncovered part is taken per reference (``difference`` on each): were two references
       of a question to overlap, recall could not reach 1. (No two overlap in the pinned
       ``questions_df.csv``.)
    6. Only chunks of a reference's own document cover it (their ``corpus_id`` check;
       here it is per reference, which is the same when all share one document).
    7. They divide unguarded, raising ``ZeroDivisionError`` for no references or no
       retrieved characters; here that is a :class:`ValueError` saying which.

    >>> span_scores([("d", 10, 20)], [("d", 0, 15), ("e", 0, 5)])
    SpanScores(recall=0.5, precision=0.25, iou=0.2)
    """
    ref_total = sum(end - start for _, start, end in references)
    chunk_total = sum(end - start for _, start, end in retrieved)
    if not references or ref_total <= 0:
        raise ValueError("no reference characters: recall is undefined")
    if chunk_total <= 0:
        raise ValueError("no retrieved characters: precision is undefined")
    chunks_by_doc: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for doc, start, end in retrieved:
        chunks_by_doc[doc].append((start, end))
    pieces: dict[str, list[tuple[int, int]]] = defaultdict(list)  # chunk ∩ reference
    uncovered = 0
    for doc, start, end in references:
        inside = [(max(start, s), min(end, e)) for s, e in chunks_by_doc.get(doc, ())]
        inside = [(lo, hi) for lo, hi in inside if lo < hi]
        pieces[doc] += inside
        uncovered += (end - start) - _measure(inside)
    covered = sum(_measure(p) for p in pieces.values())
    return SpanScores(
        recall=covered / ref_total,
        precision=covered / chunk_total,
        iou=covered / (chunk_total + uncovered),
    )


def _measure(ranges: Iterable[tuple[int, int]]) -> int:
    """How many offsets the union of half-open ranges holds."""
    total, reach = 0, None
    for start, end in sorted(ranges):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _check_ranks(ranks: Ranks) -> None:
    if len(ranks) == 0:
        raise ValueError("no queries")
    if any(r is not None and r < 1 for r in ranks):
        raise ValueError("ranks are 1-based: every rank must be >= 1 or None")
