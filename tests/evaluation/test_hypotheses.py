"""The chapter's claims built on a suite's records: ids in, the declared words and the one
rule's verdicts out, with the numbers the records hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rag_lab.claims import Direction, claim
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, hypotheses
from rag_lab.evaluation.chunking import Chunking, Destroyed, WordPieces
from rag_lab.evaluation.refusal import Matrices, refusal_of
from rag_lab.evaluation.retrieval import compare
from rag_lab.questions import Negative, Query, Question


def _declared(e) -> None:
    """Every word of the entry is the declaration's."""
    c = claim(e.claim)
    assert (e.statement, e.direction, e.chapter, e.role, e.family) == (
        c.statement, c.direction, c.chapter, c.role, c.family,
    )  # fmt: skip


def clusters(n: int) -> list[str]:
    return [f"q{i // 2}" for i in range(2 * n)]


def test_the_claim_lists_are_declared_ids():
    for cid in (*hypotheses.STRATEGY_CLAIMS, *hypotheses.SYSTEM_CLAIMS):
        assert claim(cid).compare is not None
    assert hypotheses.HEADER_CLAIMS <= set(hypotheses.STRATEGY_CLAIMS)


def test_paired_reference_is_the_declared_chapter_result():
    assert chapter.paired_reference("E", "A", 20) == claim("E>A@R20").chapter
    assert chapter.paired_reference("F", "E", 20) == claim("F<E@R20").chapter
    assert chapter.paired_reference("C", "A", 20) == ""  # the control: the chapter has none
    assert chapter.paired_reference("E", "A", 8) == ""


def _strategies(n: int = 16):
    # E finds every query, A none, C half the questions, B as A, F as E.
    hit, miss = [1] * (2 * n), [None] * (2 * n)
    half = [1] * n + [None] * n
    ranks = {"A": miss, "B": miss, "C": half, "E": hit, "F": hit}
    return compare(ranks, [("E", "A")], (20,), clusters(n))


NONE_LOST = {"A": (), "B": ()}


def test_strategy_entries_judge_the_declared_comparisons():
    entries = {e.claim: e for e in hypotheses.strategy_entries(_strategies(), destroyed=NONE_LOST)}
    assert list(entries) == hypotheses.STRATEGY_CLAIMS
    for e in entries.values():
        _declared(e)
    ea = entries["E>A@R20"]
    assert ea.verdict is Verdict.REPRODUCES and ea.estimate == pytest.approx(1.0)
    assert ea.here == "+16/−0 of 16 questions" and ea.p_adjusted is not None
    assert entries["C>A@R20"].p_adjusted is None  # exploratory: unadjusted
    # B equals A on every question: no variation, which is no reproduction
    assert entries["B=A@R8"].verdict is Verdict.NO_VARIATION
    assert entries["B=A@R8"].margin == claim("B=A@R8").margin
    assert entries["F<E@R20"].estimate == 0.0


def test_overlap_is_judged_on_the_questions_neither_strategy_destroys():
    # A destroys (and so misses) questions 0-3, which B rescues; elsewhere both find all.
    n = 16
    ranks = {s: [1] * (2 * n) for s in "BCEF"} | {"A": [None] * 8 + [1] * (2 * n - 8)}
    r = compare(ranks, [("B", "A")], (20,), clusters(n))
    lost = {"A": ("q0", "q1", "q2", "q3"), "B": ()}
    entries = {e.claim: e for e in hypotheses.strategy_entries(r, destroyed=lost)}
    # all 16 questions would give B +0.25 by rescue alone; on the 12 that survive, nothing
    assert entries["B=A@R20"].verdict is Verdict.NO_VARIATION
    assert entries["B=A@R20"].estimate == 0.0 and "of 12 questions" in entries["B=A@R20"].here
    assert "of 16 questions" in entries["E>A@R20"].here  # the other claims: every question


def test_without_sections_the_header_claims_are_not_testable():
    entries = hypotheses.strategy_entries(
        _strategies(), "10", "chroma", sections=False, destroyed=NONE_LOST
    )
    ids = [e.claim for e in entries]
    assert ids[-2:] == ["E>A@R20", "E>C@R20"] and len(ids) == len(hypotheses.STRATEGY_CLAIMS)
    for e in entries[-2:]:
        _declared(e)
        assert e.verdict is Verdict.NOT_TESTABLE and e.direction is Direction.BETTER
        assert e.estimate is None and e.metric == "R@20"


def test_system_entries_and_the_two_counts():
    n = 16
    dense = [1] * n + [9] * n  # by rank 8: the first 16 queries
    bm25 = [1] * (n // 2) + [None] * (n // 2) + [1] * n  # misses 8 of those, finds the rest
    hybrid = [1] * (2 * n)
    ranks = {"dense": dense, "BM25": bm25, "hybrid": hybrid}
    r = compare(ranks, [("BM25", "dense")], (1, 8), clusters(n))
    entries = {e.claim: e for e in hypotheses.system_entries(r)}
    assert list(entries) == [
        *hypotheses.SYSTEM_CLAIMS,
        "different-failures",
        "BM25-doubles-dense@R1",
        "hybrid-every-column",
    ]
    doubles = entries["BM25-doubles-dense@R1"]  # 24 of 32 at rank 1 against 16 of 32
    lo, hi = doubles.ci
    assert doubles.estimate == pytest.approx(1.5) and lo < 1.5 < hi
    assert doubles.verdict is (Verdict.CONTRADICTED if hi < 2 else Verdict.INCONCLUSIVE)
    for e in entries.values():
        _declared(e)
    failures = entries["different-failures"]
    assert failures.verdict is Verdict.REPRODUCES and failures.reason == claim(failures.claim).rule
    assert failures.here == "8 only by dense, 16 only by BM25"
    every = entries["hybrid-every-column"]
    assert every.verdict is Verdict.REPRODUCES and every.here == "never below"


def _chunking(over: dict[str, int], destroyed: dict[str, tuple[str, ...]]) -> Chunking:
    table = pd.DataFrame({"over window": over}).rename_axis("strategy")
    table["embedded word-pieces"] = 1000
    table["header word-pieces"] = 200
    table["header share"] = 0.2
    return Chunking(None, Destroyed(destroyed, 32), WordPieces(table, 128, {}))


def test_chunking_entries_count_and_name_the_run_window():
    m = _chunking({"C": 2, "E": 5, "F": 5}, {"A": ("q1", "q2"), "B": ()})
    entries = {e.claim: e for e in hypotheses.chunking_entries(m)}
    assert list(entries) == [
        "A-destroys", "B-destroys-none", "header-share", "header-window", "overlap-window",
    ]  # fmt: skip
    share = entries.pop("header-share")
    _declared(share)
    # a fifth of E's word-pieces, within 0.05 of the chapter's 21.2 %: exact, no sampling
    assert share.verdict is Verdict.REPRODUCES and share.ci == (0.2, 0.2)
    assert share.here == "200 of 1,000 word-pieces" and share.method == "exact"
    for e in entries.values():
        _declared(e)
        assert e.reason == claim(e.claim).rule
    assert (entries["A-destroys"].verdict, entries["A-destroys"].estimate) == (
        Verdict.REPRODUCES, 2,
    )  # fmt: skip
    assert entries["A-destroys"].here == "2 of 32"
    assert entries["B-destroys-none"].verdict is Verdict.REPRODUCES
    header, overlap = entries["header-window"], entries["overlap-window"]
    assert (header.verdict, header.estimate) == (Verdict.REPRODUCES, 3)
    assert (overlap.verdict, overlap.estimate) == (Verdict.CONTRADICTED, 0)
    # the window is the run's encoder's, not a number of the claims file
    assert header.metric == "chunks past 128, E against C"
    assert "128" not in claim("header-window").statement + claim("header-window").metric


def _refusal():
    # 30 negatives: 2 nearest at 0.5, 8 at 0.6, 20 at 0.9; 32 questions in two phrasings:
    # 6 questions (12 queries) nearest at 0.55, the rest at 0.3. Two chunks, the needle in 0.
    negatives = np.array([[d, 1.0] for d in [0.5] * 2 + [0.6] * 8 + [0.9] * 20])
    near = [0.55] * 6 + [0.3] * 26
    answerable = np.array([[d, 1.0] for d in near + near])
    qs = [Question(f"q{i}", "d", "n", "c", "t") for i in range(32)]
    queries = [Query(q, p) for p in ("course", "ticket") for q in qs]
    negs = [Negative(f"n{i}", "offtopic", "?") for i in range(30)]
    m = Matrices(answerable, negatives, [{0}] * 64)
    return refusal_of(m, queries, negs)


def test_refusal_entries_read_the_sweep():
    entries = {e.claim: e for e in hypotheses.refusal_entries(_refusal())}
    assert list(entries) == [
        "no-cutoff-bluffs", "distances-overlap", "bluffs@0.675", "bluffs@0.525",
        "refused@0.525", "strict-trades",
    ]  # fmt: skip
    for e in entries.values():
        _declared(e)
    assert entries["no-cutoff-bluffs"].verdict is Verdict.BY_CONSTRUCTION
    assert entries["no-cutoff-bluffs"].here == "30 of 30"
    assert entries["distances-overlap"].verdict is Verdict.REPRODUCES  # 0.55 > 0.5
    hi, lo, refused = entries["bluffs@0.675"], entries["bluffs@0.525"], entries["refused@0.525"]
    assert (hi.estimate, hi.here, hi.method) == (pytest.approx(10 / 30), "10 of 30", "wilson")
    assert (lo.estimate, lo.here) == (pytest.approx(2 / 30), "2 of 30")
    assert (refused.estimate, refused.here) == (pytest.approx(12 / 64), "12 of 64")
    assert refused.method == "clustered_wilson"
    for e in (hi, lo, refused):
        # the chapter's own counts, but 30 negatives and 32 questions: too wide for ±0.10
        assert e.chapter_effect == claim(e.claim).chapter_effect
        assert e.ci[0] < e.chapter_effect < e.ci[1]
        assert e.verdict is Verdict.INCONCLUSIVE and e.margin == claim(e.claim).margin
    assert entries["strict-trades"].here == "2 against 10 bluffs, 12 against 0 refused"
