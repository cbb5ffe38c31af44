"""The chapter's claims as hypotheses, judged on any corpus's records into ledger entries.

One place for every claim a suite can test: the chapter's paired comparisons of chunkings
and of retrievers, its counts of destroyed answers and of chunks past the encoder's window,
and its figures for the refusal gate. Each function takes a suite's record and a benchmark
name and returns :class:`~rag_lab.evaluation.ledger.Entry` records for claims named by id:
what each says is declared in ``rag_lab/claims/chapter.yaml``, its verdict is the one rule's
(:func:`rag_lab.claims.judge.judge`). The notebooks and ``rag-lab evaluate`` call the same
functions.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from rag_lab import gate
from rag_lab.claims.judge import IntervalRecord
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, twins
from rag_lab.evaluation.chunking import Chunking
from rag_lab.evaluation.ledger import (
    Entry,
    PairedClaim,
    count_entry,
    entry,
    fixed_entry,
    paired_entries,
    value_entry,
)
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.retrieval import Retrieval
from rag_lab.metrics import hits_at
from rag_lab.stats import ALPHA, clustered_wilson, ratio_of_means, wilson

STRATEGY_CLAIMS = ["E>A@R20", "E>C@R20", "F<E@R20", "B=A@R8", "B=A@R20", "C>A@R20"]
"""Between chunkings under dense retrieval (declared in ``rag_lab/claims/chapter.yaml``);
C vs A separates the boundaries' share of E vs A from the header's, and is a control."""
HEADER_CLAIMS = frozenset({"E>A@R20", "E>C@R20"})
"""The claims about the header: not testable on documents without sections."""

SYSTEM_CLAIMS = [
    "BM25>dense@R1",
    "BM25<dense@R8",
    "hybrid>BM25@R4",
    "hybrid=dense@R4",
    *(f"hybrid>dense@R{k}" for k in (1, 8, 20)),
]
"""Between first-stage retrievers on one chunking. The chapter reports hybrid "better in
every recall column" by point estimates; those k are exploratory here."""


def destroyed_entries(
    destroyed: Mapping[str, int], of: int, notebook: str, benchmark: str
) -> list[Entry]:
    """Blind cuts destroy answers (some under A); overlap prevents it (none under B).
    ``destroyed`` counts, per strategy, the questions no chunk can answer."""
    at = {"notebook": notebook, "benchmark": benchmark}
    blind, overlap = destroyed["A"], destroyed["B"]
    return [
        count_entry("A-destroys", **at, holds=blind > 0, here=f"{blind} of {of}", estimate=blind),
        count_entry(
            "B-destroys-none",
            **at,
            holds=overlap == 0,
            here=f"{overlap} of {of}",
            estimate=overlap,
        ),
    ]


def chunking_entries(m: Chunking, notebook: str = "02", benchmark: str = "d2l") -> list[Entry]:
    """Destroyed answers (:func:`destroyed_entries`) and chunks past the window (the header
    and the overlap each add some): counts, exact on the corpus. The window is the
    encoder's, as the run measured it, so the metric names it."""
    at = {"notebook": notebook, "benchmark": benchmark}
    over = {s: m.pieces.over(s) for s in ("C", "E", "F")}
    window = m.pieces.window
    counts = {s: m.destroyed.count(s) for s in m.destroyed.questions}
    share = float(m.pieces.table.loc["E", "header share"])
    return [
        *destroyed_entries(counts, m.destroyed.of, notebook, benchmark),
        value_entry(
            "header-share",
            **at,
            estimate=share,
            interval=(share, share),  # a count of the whole corpus: no sampling
            method="exact",
            here=f"{int(m.pieces.table.loc['E', 'header word-pieces']):,} of "
            f"{int(m.pieces.table.loc['E', 'embedded word-pieces']):,} word-pieces",
        ),
        count_entry(
            "header-window",
            **at,
            holds=over["E"] > over["C"],
            here=f"C {over['C']}, E {over['E']}",
            estimate=over["E"] - over["C"],
            metric=f"chunks past {window}, E against C",
        ),
        count_entry(
            "overlap-window",
            **at,
            holds=over["F"] > over["E"],
            here=f"E {over['E']}, F {over['F']}",
            estimate=over["F"] - over["E"],
            metric=f"chunks past {window}, F against E",
        ),
    ]


SURVIVING_CLAIMS = frozenset({"B=A@R8", "B=A@R20"})
"""Overlap's effect on ranking, judged on the questions neither A nor B destroys: on the
others B wins by rescue, which is its own claim (``B-destroys-none``)."""


def strategy_entries(
    r: Retrieval,
    notebook: str = "03",
    benchmark: str = "d2l",
    *,
    sections: bool = True,
    destroyed: Mapping[str, Collection[Hashable]],
) -> list[Entry]:
    """The chapter's comparisons of chunkings; without ``sections`` (documents without
    headings, where the header is a constant) its header claims are not testable.
    ``destroyed`` names, per strategy, the questions no chunk of it answers: the overlap
    claims are judged on the questions neither compared strategy destroys."""
    surviving = frozenset(r.clusters) - set(destroyed["A"]) - set(destroyed["B"])
    untestable = {c: HEADER_REASON for c in HEADER_CLAIMS if not sections}
    if not surviving:
        untestable |= dict.fromkeys(SURVIVING_CLAIMS, SURVIVING_REASON)
    claims = [
        PairedClaim(c, questions=surviving if c in SURVIVING_CLAIMS else None)
        for c in STRATEGY_CLAIMS
        if c not in untestable
    ]
    at = {"notebook": notebook, "benchmark": benchmark}
    return paired_entries(notebook, benchmark, claims, r.ranks, r.clusters) + [
        fixed_entry(c, **at, verdict=Verdict.NOT_TESTABLE, reason=why)
        for c in STRATEGY_CLAIMS
        if (why := untestable.get(c))
    ]


HEADER_REASON = (
    "the documents have no sections: every chunk's header is the same document name, so it "
    "cannot tell chunks apart"
)
SURVIVING_REASON = "A or B destroys every question: none is left to compare their ranking on"


def system_entries(r: Retrieval, notebook: str = "04", benchmark: str = "d2l") -> list[Entry]:
    """The chapter's comparisons of dense, BM25 and hybrid, and its "better in every recall
    column" (a statement about point estimates, counted exactly)."""
    at = {"notebook": notebook, "benchmark": benchmark}
    entries = paired_entries(notebook, benchmark, SYSTEM_CLAIMS, r.ranks, r.clusters)
    dense8, bm25_8 = hits_at(r.ranks["dense"], 8), hits_at(r.ranks["BM25"], 8)
    only_dense, only_bm25 = int((dense8 & ~bm25_8).sum()), int((~dense8 & bm25_8).sum())
    entries.append(
        count_entry(
            "different-failures",
            **at,
            holds=only_dense > 0 and only_bm25 > 0,
            here=f"{only_dense} only by dense, {only_bm25} only by BM25",
        )
    )
    bm25_1, dense1 = hits_at(r.ranks["BM25"], 1), hits_at(r.ranks["dense"], 1)
    ratio, ci = ratio_of_means(bm25_1, dense1, r.clusters)
    entries.append(
        entry(
            "BM25-doubles-dense@R1",
            **at,
            record=IntervalRecord(ratio, ci, "fieller_questions"),
            here=f"{bm25_1.mean():.3f} / {dense1.mean():.3f}",
            estimate=ratio,
            ci=ci,
            method="fieller_questions",
        )
    )
    below = [k for k in r.recall.ks if r.recall["hybrid"].at(k) < r.recall["dense"].at(k)]
    entries.append(
        count_entry(
            "hybrid-every-column",
            **at,
            holds=not below,
            here=("below dense at " + ", ".join(f"R@{k}" for k in below))
            if below
            else "never below",
        )
    )
    return entries


def refusal_entries(g: Refusal, notebook: str = "06", benchmark: str = "d2l") -> list[Entry]:
    """The gate: the distributions overlap (a count), the chapter's bluff and refusal rates at
    its two cutoffs (values), and what holds by construction."""
    at = {"notebook": notebook, "benchmark": benchmark}
    both = g.overlap.iloc[-1]  # every phrasing together: "both", or "all" if not two
    hi, lo = g.at(chapter.CUTOFF), g.at(chapter.STRICT_CUTOFF)
    p, m = g.negatives, g.answerable
    bluffs_hi, bluffs_lo, refused_lo = int(hi["bluffs"]), int(lo["bluffs"]), int(lo["refused"])
    return [
        fixed_entry(
            "no-cutoff-bluffs",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            reason=f"without a cutoff the gate keeps the nearest {gate.MAX_KEPT} chunks, "
            "however far",
            here=f"{int(g.at(None)['bluffs'])} of {p}",
        ),
        count_entry(
            "distances-overlap",
            **at,
            holds=bool(both["overlap"]),
            here=f"worst in {both['worst in-domain']:.3f}, best out "
            f"{both['best out-of-domain']:.3f}",
        ),
        _rate("bluffs@0.675", at, bluffs_hi, p, wilson(bluffs_hi, p), "wilson"),
        _rate("bluffs@0.525", at, bluffs_lo, p, wilson(bluffs_lo, p), "wilson"),
        _rate(
            "refused@0.525",
            at,
            refused_lo,
            m,
            clustered_wilson(g.refused_at(lo), g.clusters),
            "clustered_wilson",
        ),
        fixed_entry(
            "strict-trades",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            reason="a lower cutoff keeps a subset of what a higher one keeps: it can only "
            "answer fewer negatives and refuse more answerable queries",
            here=f"{bluffs_lo} against {bluffs_hi} bluffs, {refused_lo} against "
            f"{int(hi['refused'])} refused",
        ),
    ]


def distance_entries(
    identity_unit: float,
    gated: Refusal,
    traps: pd.DataFrame,
    calibrated: twins.Calibration,
    raw: np.ndarray,
    lengths: Sequence[int],
    notebook: str = "06",
    benchmark: str = "d2l",
) -> list[Entry]:
    """The distances: the identity on unit vectors (``identity_unit``, its float32 error), the
    gate (:func:`refusal_entries`), the length-norm claim by Spearman's test of independence of
    text length and unnormalised norm (``raw``), the literal-match bluff judged on the traps
    (:func:`rag_lab.evaluation.identifiers.trap_table`), and the twins' calibration."""
    at = {"notebook": notebook, "benchmark": benchmark}
    landed = traps[traps["passes"] & traps["holds rare term"]]
    rho, p = sps.spearmanr(lengths, np.linalg.norm(np.asarray(raw, np.float64), axis=1))
    return [
        fixed_entry(
            "identity",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            reason="an identity of unit vectors (‖a − b‖² = 2 − 2 a·b); measured, the float32 "
            f"error is {identity_unit:.1e}",
            here=f"max error {identity_unit:.1e}",
        ),
        *refusal_entries(gated, notebook, benchmark),
        count_entry(
            "length-norm",
            **at,
            holds=bool(p < ALPHA),
            here=f"Spearman {rho:+.3f} over {len(lengths)} chunks, p = {p:.1e}",
            estimate=float(rho),
        ),
        count_entry(
            "literal-match-bluff",
            **at,
            holds=len(landed) > 0,
            here=", ".join(f"{i} at {d:.3f}" for i, d in landed["distance"].items()) or "none",
        ),
        *twins.entries(calibrated, notebook, benchmark),
    ]


def _rate(
    claim_id: str, at: Mapping[str, str], k: int, n: int, ci: tuple[float, float], method: str
) -> Entry:
    """A rate the chapter reports: ``k`` of ``n`` with its interval."""
    return value_entry(
        claim_id, **at, estimate=k / n, interval=ci, method=method, here=f"{k} of {n}"
    )
