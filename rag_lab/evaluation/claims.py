"""The chapter's claims as hypotheses, judged on any corpus's records into ledger entries.

One place for every claim a suite can test: the chapter's paired comparisons of chunkings
and of retrievers, its counts of destroyed answers and of chunks past the encoder's window,
and its figures for the refusal gate. Each function takes a suite's record and a benchmark
name and returns :class:`~rag_lab.evaluation.ledger.Entry` records, judged by the ledger's
one rule; the notebooks and ``rag-lab evaluate`` call the same functions.
"""

from __future__ import annotations

from collections.abc import Mapping

from rag_lab import gate
from rag_lab.evaluation import chapter
from rag_lab.evaluation.chunking import Chunking
from rag_lab.evaluation.ledger import (
    EXPLORATORY,
    Direction,
    Entry,
    PairedClaim,
    count_entry,
    fixed_entry,
    paired_entries,
    value_entry,
)
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.retrieval import Retrieval
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.metrics import hits_at
from rag_lab.stats import clustered_wilson, wilson

BETTER, WORSE, SAME = Direction.BETTER, Direction.WORSE, Direction.SAME


def _ref(a: str, b: str, k: int) -> tuple[int, int, str | None] | None:
    return chapter.PAIRED.get((a, b, k))


STRATEGY_CLAIMS = (
    PairedClaim("E>A@R20", "boundaries with a header beat blind cuts", "E", "A", 20, BETTER,
                _ref("E", "A", 20)),
    PairedClaim("E>C@R20", "the header, on the same cuts, buys recall", "E", "C", 20, BETTER,
                _ref("E", "C", 20)),
    PairedClaim("F<E@R20", "overlap on top of the header hurts", "F", "E", 20, WORSE,
                _ref("F", "E", 20)),
    PairedClaim("B=A@R8", "overlap does not improve ranking (R@8)", "B", "A", 8, SAME,
                _ref("B", "A", 8)),
    PairedClaim("B=A@R20", "overlap does not improve ranking (R@20)", "B", "A", 20, SAME,
                _ref("B", "A", 20)),
    PairedClaim("C>A@R20", "boundaries alone beat blind cuts (the control)", "C", "A", 20,
                BETTER, family=EXPLORATORY),
)  # fmt: skip
"""Between chunkings under dense retrieval; C vs A separates the boundaries' share of E vs A
from the header's, and is a control, not a chapter claim."""
HEADER_CLAIMS = frozenset({"E>A@R20", "E>C@R20"})
"""The claims about the header: not testable on documents without sections."""

SYSTEM_CLAIMS = (
    PairedClaim("BM25>dense@R1", "BM25 beats dense at the top (the chapter: more than doubles "
                "its R@1)", "BM25", "dense", 1, BETTER),
    PairedClaim("BM25<dense@R8", "BM25 loses to dense by rank 8", "BM25", "dense", 8, WORSE),
    PairedClaim("hybrid>BM25@R4", "fusion beats BM25 at R@4", "hybrid", "BM25", 4, BETTER,
                _ref("hybrid", "BM25", 4)),
    PairedClaim("hybrid=dense@R4", "fusion is indistinguishable from dense", "hybrid", "dense",
                4, SAME, _ref("hybrid", "dense", 4)),
    *(
        PairedClaim(f"hybrid>dense@R{k}", f"fusion is better than dense at R@{k}", "hybrid",
                    "dense", k, BETTER, family=EXPLORATORY)
        for k in (1, 8, 20)
    ),
)  # fmt: skip
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
        count_entry(
            **at,
            claim="A-destroys",
            statement="blind cuts destroy answers",
            metric="questions no chunk of A answers",
            holds=blind > 0,
            here=f"{blind} of {of}",
            chapter=f"{chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']}",
            rule="reproduces when A destroys at least one",
            estimate=blind,
        ),
        count_entry(
            **at,
            claim="B-destroys-none",
            statement="a 64-character overlap prevents it",
            metric="questions no chunk of B answers",
            holds=overlap == 0,
            here=f"{overlap} of {of}",
            chapter=f"{chapter.DESTROYED_WITH_OVERLAP}",
            rule="reproduces when B destroys none",
            estimate=overlap,
        ),
    ]


def chunking_entries(m: Chunking, notebook: str = "02", benchmark: str = "d2l") -> list[Entry]:
    """Destroyed answers (:func:`destroyed_entries`) and chunks past the window (the header
    and the overlap each add some): counts, exact on the corpus."""
    at = {"notebook": notebook, "benchmark": benchmark}
    over = {s: m.pieces.over(s) for s in ("C", "E", "F")}
    window = m.pieces.window
    counts = {s: m.destroyed.count(s) for s in m.destroyed.questions}
    return [
        *destroyed_entries(counts, m.destroyed.of, notebook, benchmark),
        count_entry(
            **at,
            claim="header-window",
            statement=f"the header pushes chunks past the {window}-word-piece window",
            metric=f"chunks past {window}, E against C",
            holds=over["E"] > over["C"],
            here=f"C {over['C']}, E {over['E']}",
            chapter=f"E {chapter.OVER_WINDOW['E']}",
            rule="reproduces when E has more than C",
            estimate=over["E"] - over["C"],
        ),
        count_entry(
            **at,
            claim="overlap-window",
            statement="overlap on top of the header pushes more past it",
            metric=f"chunks past {window}, F against E",
            holds=over["F"] > over["E"],
            here=f"E {over['E']}, F {over['F']}",
            chapter=f"E {chapter.OVER_WINDOW['E']}, F {chapter.OVER_WINDOW['F']}",
            rule="reproduces when F has more than E",
            estimate=over["F"] - over["E"],
        ),
    ]


def strategy_entries(
    r: Retrieval, notebook: str = "03", benchmark: str = "d2l", *, sections: bool = True
) -> list[Entry]:
    """The chapter's comparisons of chunkings; without ``sections`` (documents without
    headings, where the header is a constant) its header claims are not testable."""
    claims = [c for c in STRATEGY_CLAIMS if sections or c.claim not in HEADER_CLAIMS]
    entries = paired_entries(notebook, benchmark, claims, r.ranks, r.clusters)
    if sections:
        return entries
    reason = (
        "the documents have no sections: every chunk's header is the same document name, so "
        "it cannot tell chunks apart"
    )
    return entries + [
        fixed_entry(
            notebook=notebook,
            benchmark=benchmark,
            claim=c.claim,
            statement=c.statement,
            verdict=Verdict.NOT_TESTABLE,
            reason=reason,
            metric=f"R@{c.k}",
            direction=c.direction,
        )
        for c in STRATEGY_CLAIMS
        if c.claim in HEADER_CLAIMS
    ]


def system_entries(r: Retrieval, notebook: str = "04", benchmark: str = "d2l") -> list[Entry]:
    """The chapter's comparisons of dense, BM25 and hybrid, and its "better in every recall
    column" (a statement about point estimates, counted exactly)."""
    entries = paired_entries(notebook, benchmark, SYSTEM_CLAIMS, r.ranks, r.clusters)
    dense8, bm25_8 = hits_at(r.ranks["dense"], 8), hits_at(r.ranks["BM25"], 8)
    only_dense, only_bm25 = int((dense8 & ~bm25_8).sum()), int((~dense8 & bm25_8).sum())
    entries.append(
        count_entry(
            notebook=notebook,
            benchmark=benchmark,
            claim="different-failures",
            statement="dense and BM25 fail on different queries",
            metric="queries only one of them finds by rank 8",
            holds=only_dense > 0 and only_bm25 > 0,
            here=f"{only_dense} only by dense, {only_bm25} only by BM25",
            rule="reproduces when each finds some query the other misses",
        )
    )
    below = [k for k in r.recall.ks if r.recall["hybrid"].at(k) < r.recall["dense"].at(k)]
    entries.append(
        count_entry(
            notebook=notebook,
            benchmark=benchmark,
            claim="hybrid-every-column",
            statement="fusion is better than dense in every recall column (point estimates)",
            metric="R@k of hybrid against dense",
            holds=not below,
            here=("below dense at " + ", ".join(f"R@{k}" for k in below))
            if below
            else "never below",
            chapter="better at every k",
            rule="reproduces when hybrid's R@k is below dense's at no k",
        )
    )
    return entries


def refusal_entries(g: Refusal, notebook: str = "06", benchmark: str = "d2l") -> list[Entry]:
    """The gate: the distributions overlap (a count), the chapter's bluff and refusal rates at
    its two cutoffs (values), and what holds by construction."""
    at = {"notebook": notebook, "benchmark": benchmark}
    both = g.overlap.loc["both"]
    hi, lo = g.at(chapter.CUTOFF), g.at(chapter.STRICT_CUTOFF)
    p, m = g.negatives, g.answerable
    bluffs_hi, bluffs_lo, refused_lo = int(hi["bluffs"]), int(lo["bluffs"]), int(lo["refused"])
    negatives = f"{chapter.NEGATIVES}"
    return [
        fixed_entry(
            **at,
            claim="no-cutoff-bluffs",
            statement="without a cutoff every negative is answered",
            verdict=Verdict.BY_CONSTRUCTION,
            reason=f"without a cutoff the gate keeps the nearest {gate.MAX_KEPT} chunks, "
            "however far",
            metric="bluffs at no cutoff",
            chapter=f"{chapter.BLUFFS[None]} of {negatives}",
            here=f"{int(g.at(None)['bluffs'])} of {p}",
        ),
        count_entry(
            **at,
            claim="distances-overlap",
            statement="in-domain and out-of-domain distances overlap",
            metric="worst answerable distance against the best negative's",
            holds=bool(both["overlap"]),
            here=f"worst in {both['worst in-domain']:.3f}, best out "
            f"{both['best out-of-domain']:.3f}",
            chapter=f"worst in {chapter.WORST_IN_DOMAIN}, best out {chapter.BEST_OUT_OF_DOMAIN}",
            rule="reproduces when the worst answerable distance exceeds the best negative's",
        ),
        value_entry(
            **at,
            claim="bluffs@0.675",
            statement=f"a cutoff of {chapter.CUTOFF} still answers a third of the negatives",
            metric=f"bluff rate at {chapter.CUTOFF}",
            chapter_value=chapter.BLUFFS[chapter.CUTOFF] / chapter.NEGATIVES,
            estimate=bluffs_hi / p,
            interval=wilson(bluffs_hi, p),
            chapter=f"{chapter.BLUFFS[chapter.CUTOFF]} of {negatives}",
            here=f"{bluffs_hi} of {p}",
        ),
        value_entry(
            **at,
            claim="bluffs@0.525",
            statement=f"a cutoff of {chapter.STRICT_CUTOFF} answers few negatives",
            metric=f"bluff rate at {chapter.STRICT_CUTOFF}",
            chapter_value=chapter.BLUFFS[chapter.STRICT_CUTOFF] / chapter.NEGATIVES,
            estimate=bluffs_lo / p,
            interval=wilson(bluffs_lo, p),
            chapter=f"{chapter.BLUFFS[chapter.STRICT_CUTOFF]} of {negatives}",
            here=f"{bluffs_lo} of {p}",
        ),
        value_entry(
            **at,
            claim="refused@0.525",
            statement=f"a cutoff of {chapter.STRICT_CUTOFF} refuses a fifth of the answerable",
            metric=f"refusal rate at {chapter.STRICT_CUTOFF}",
            chapter_value=chapter.REFUSED_ANSWERABLE[chapter.STRICT_CUTOFF]
            / chapter.CORPUS["queries"],
            estimate=refused_lo / m,
            interval=clustered_wilson(g.refused_at(lo), g.clusters),
            chapter=f"{chapter.REFUSED_ANSWERABLE[chapter.STRICT_CUTOFF]} of "
            f"{chapter.CORPUS['queries']}",
            here=f"{refused_lo} of {m}",
        ),
        fixed_entry(
            **at,
            claim="strict-trades",
            statement=f"{chapter.STRICT_CUTOFF} trades bluffs for refusals",
            verdict=Verdict.BY_CONSTRUCTION,
            reason="a lower cutoff keeps a subset of what a higher one keeps: it can only "
            "answer fewer negatives and refuse more answerable queries",
            metric=f"bluffs and refusals at {chapter.STRICT_CUTOFF} against {chapter.CUTOFF}",
            here=f"{bluffs_lo} against {bluffs_hi} bluffs, {refused_lo} against "
            f"{int(hi['refused'])} refused",
        ),
    ]
