"""metrics: first-hit ranks, Recall@k, MRR and the summary tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.chunking import OVERLAP, STRATEGIES, chunk_corpus
from rag_lab.documents import Document
from rag_lab.metrics import (
    SpanScores,
    chunk_span,
    chunk_spans,
    destroyed_spans,
    first_hit_rank,
    first_hit_ranks,
    hits_at,
    mrr,
    paired_table,
    recall_at,
    span_first_hit_rank,
    span_first_hit_ranks,
    span_scores,
    summary,
    summary_table,
)
from rag_lab.spans import Span
from rag_lab.stats import wilson


def test_first_hit_rank():
    assert first_hit_rank([5, 3, 9, 1], {9, 3}) == 2
    assert first_hit_rank([5, 3, 9, 1], {1}) == 4
    assert first_hit_rank([5, 3], {7}) is None
    assert first_hit_rank([], {7}) is None


def test_first_hit_ranks():
    assert first_hit_ranks([[1, 2], [2, 1], [3]], [{1}, {1}, {1}]) == [1, 2, None]
    with pytest.raises(ValueError, match="2 rankings but 1 relevant sets"):
        first_hit_ranks([[1], [2]], [{1}])


RANKS = [1, 3, None, 5, 2, 1, None, 20]


def test_hits_and_recall():
    assert hits_at(RANKS, 1).tolist() == [True, False, False, False, False, True, False, False]
    assert hits_at(RANKS, 3).tolist() == [True, True, False, False, True, True, False, False]
    assert recall_at(RANKS, 1) == 2 / 8
    assert recall_at(RANKS, 4) == 4 / 8
    assert recall_at(RANKS, 20) == 6 / 8
    assert recall_at(RANKS, 1000) == 6 / 8  # None never becomes a hit


def test_mrr_over_the_full_ranking():
    expected = (1 + 1 / 3 + 0 + 1 / 5 + 1 / 2 + 1 + 0 + 1 / 20) / 8
    assert mrr(RANKS) == pytest.approx(expected, rel=1e-15)
    assert mrr([None, None]) == 0.0


def test_summary():
    s = summary(RANKS, ks=(1, 4), level=0.9)
    assert (s.n, s.no_hit, s.level) == (8, 2, 0.9)
    assert s.mrr == mrr(RANKS)
    assert list(s.recall) == [1, 4]
    r4 = s.recall[4]
    assert (r4.k, r4.hits, r4.n, r4.value) == (4, 4, 8, 0.5)
    assert (r4.lo, r4.hi) == wilson(4, 8, 0.9)


def test_summary_table():
    table = summary_table({"dense": RANKS, "bm25": [1, 1, None, 2]}, ks=(1, 4))
    assert list(table.index) == ["dense", "bm25"]
    assert list(table.columns) == [
        "n",
        "R@1",
        "R@1 lo",
        "R@1 hi",
        "R@4",
        "R@4 lo",
        "R@4 hi",
        "MRR",
        "no hit",
    ]
    row = table.loc["bm25"]
    assert (row["n"], row["R@1"], row["R@4"], row["no hit"]) == (4, 0.5, 0.75, 1)
    assert (row["R@4 lo"], row["R@4 hi"]) == wilson(3, 4)
    assert row["MRR"] == pytest.approx((1 + 1 + 0 + 0.5) / 4)


def test_paired_table():
    systems = {"E": [1, 2, None, 8, 1], "A": [3, None, None, 1, 2]}
    table = paired_table(systems, [("E", "A")], ks=[1, 4])
    assert list(table.columns) == ["a", "b", "k", "wins", "losses", "p"]
    # k = 1: E hits queries 0, 4 and A hits 3.  k = 4: E hits 0, 1, 4 and A hits 0, 3, 4.
    assert table.to_dict("records") == [
        {"a": "E", "b": "A", "k": 1, "wins": 2, "losses": 1, "p": 1.0},
        {"a": "E", "b": "A", "k": 4, "wins": 1, "losses": 1, "p": 1.0},
    ]


def test_bad_inputs():
    with pytest.raises(ValueError, match="no queries"):
        recall_at([], 1)
    with pytest.raises(ValueError, match="no queries"):
        mrr([])
    with pytest.raises(ValueError, match="1-based"):
        mrr([0, 1])
    with pytest.raises(ValueError, match="k must be >= 1"):
        recall_at([1], 0)


ranks_lists = st.lists(st.none() | st.integers(1, 30), min_size=1, max_size=40)


@given(ranks_lists)
def test_recall_grows_with_k_up_to_the_share_with_a_hit(ranks):
    recalls = [recall_at(ranks, k) for k in range(1, 32)]
    assert recalls == sorted(recalls)
    assert recalls[-1] == sum(r is not None for r in ranks) / len(ranks)


@given(ranks_lists)
def test_mrr_lies_between_recall_at_1_and_recall_at_infinity(ranks):
    assert recall_at(ranks, 1) <= mrr(ranks) + 1e-12
    assert mrr(ranks) <= recall_at(ranks, 30) + 1e-12


# --- span ground truth -----------------------------------------------------------------------

PLAIN = Document("p", "P", "x" * 1100, format="plain")
PROSE = Document(
    "d",
    "Doc",
    "# Doc\n\n## One\n\n"
    + "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(8))
    + "\n\n## Two\n\nLast words here.\n",
)


def test_a_chunk_span_is_its_content_plus_its_overlap():
    # Blind cuts every 512: A's chunks are [0, 512), [512, 1024), [1024, 1100); B's embedded
    # bodies start 64 back: 512 - 64 = 448 and 1024 - 64 = 960.
    assert chunk_spans(chunk_corpus([PLAIN], "A"), "A") == [
        Span("p", 0, 512),
        Span("p", 512, 1024),
        Span("p", 1024, 1100),
    ]
    assert chunk_spans(chunk_corpus([PLAIN], "B"), "B") == [
        Span("p", 0, 512),
        Span("p", 448, 1024),
        Span("p", 960, 1100),
    ]


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_a_chunk_span_slices_back_to_the_embedded_body(name):
    chunks = chunk_corpus([PROSE], name)
    prev = None
    for c in chunks:
        span = chunk_span(c, name)
        body = PROSE.text[span.start : span.end]
        header = f"[Doc > {c.section}]\n" if STRATEGIES[name].header else ""
        assert c.text == header + body  # the header is not document text
        assert span.end == c.end
        overlapping = STRATEGIES[name].overlap and prev is not None
        assert span.start == (max(prev.start, prev.end - OVERLAP) if overlapping else c.start)
        prev = c


def test_an_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="Unknown strategy 'G'"):
        chunk_span(chunk_corpus([PLAIN], "A")[0], "G")


SPANS = [Span("d", 0, 10), Span("d", 10, 20), Span("d", 5, 15), Span("e", 0, 10)]
"""Chunk spans by position: 0, 1 and 2 in document d, 3 in document e."""


def test_span_first_hit_rank_waits_for_every_span():
    # [d 2, 8) is inside chunk 0 only, ranked 3rd; [d 12, 18) inside chunk 1, ranked 2nd.
    assert span_first_hit_rank([3, 1, 0], SPANS, [Span("d", 2, 8)]) == 3
    assert span_first_hit_rank([3, 1, 0], SPANS, [Span("d", 2, 8), Span("d", 12, 18)]) == 3
    assert span_first_hit_rank([1, 0], SPANS, [Span("d", 12, 18)]) == 1
    # [d 8, 12) crosses the cut at 10: only chunk 2, [5, 15), holds it whole.
    assert span_first_hit_rank([0, 1], SPANS, [Span("d", 8, 12)]) is None
    assert span_first_hit_rank([1, 2], SPANS, [Span("d", 8, 12)]) == 2
    # The same offsets in another document are not a hit.
    assert span_first_hit_rank([3], SPANS, [Span("d", 0, 10)]) is None
    assert span_first_hit_rank([3], SPANS, [Span("e", 0, 10)]) == 1
    with pytest.raises(ValueError, match="at least one span"):
        span_first_hit_rank([0], SPANS, [])


def test_span_first_hit_ranks_feed_the_usual_metrics():
    ranks = span_first_hit_ranks(
        [[3, 1, 0], [0, 1], [2]], SPANS, [[Span("d", 2, 8)], [Span("d", 8, 12)], [Span("d", 9, 11)]]
    )
    assert ranks == [3, None, 1]
    assert recall_at(ranks, 1) == 1 / 3
    assert mrr(ranks) == pytest.approx((1 / 3 + 0 + 1) / 3)
    with pytest.raises(ValueError, match="2 rankings but 1 span lists"):
        span_first_hit_ranks([[0], [1]], SPANS, [[Span("d", 0, 1)]])


def test_destroyed_spans_are_those_no_chunk_holds_whole():
    wanted = [Span("d", 2, 8), Span("d", 8, 12), Span("d", 4, 16), Span("e", 0, 1)]
    wanted += [Span("d", 0, 20), Span("f", 0, 1)]
    # [4, 16) is wider than every chunk of d; f has no chunks.
    lost = [Span("d", 4, 16), Span("d", 0, 20), Span("f", 0, 1)]
    assert destroyed_spans(SPANS, wanted) == lost
    assert destroyed_spans(SPANS[:3], wanted) == [lost[0], Span("e", 0, 1), *lost[1:]]


_span = st.builds(
    lambda doc, a, n: Span(doc, a, a + n),
    st.sampled_from("de"),
    st.integers(0, 60),
    st.integers(1, 30),
)


@given(st.lists(_span, max_size=12), st.lists(_span, min_size=1, max_size=6))
def test_destroyed_spans_agree_with_a_scan_of_every_chunk(chunks, spans):
    expected = [s for s in spans if not any(s.within(c) for c in chunks)]
    assert destroyed_spans(chunks, spans) == expected


# --- Chroma's span scores ----------------------------------------------------------------------


def test_span_scores_by_hand():
    # One chunk exactly on the reference.
    assert span_scores([("d", 10, 20)], [("d", 10, 20)]) == SpanScores(1.0, 1.0, 1.0)
    # Touching at offset 10 only: an intersection of length 0, so nothing is covered;
    # precision 0 / 10, IoU 0 / (10 + 10).
    assert span_scores([("d", 10, 20)], [("d", 0, 10)]) == SpanScores(0.0, 0.0, 0.0)
    # Plus a chunk on the reference: covered 10; precision 10 / (10 + 10); IoU 10 / (20 + 0).
    both = span_scores([("d", 10, 20)], [("d", 0, 10), ("d", 10, 20)])
    assert both == SpanScores(1.0, 0.5, 0.5)
    # Overlapping chunks count their shared [10, 15) twice: covered |[10, 20)| = 10,
    # precision 10 / (10 + 10), IoU 10 / (20 + 0) = 0.5, not the Jaccard 10 / |[5, 20)|.
    assert span_scores([("d", 10, 20)], [("d", 5, 15), ("d", 10, 20)]) == SpanScores(1, 0.5, 0.5)
    # A chunk of another document counts in precision only: covered [5, 10) = 5;
    # recall 5 / 10; precision 5 / (10 + 5); IoU 5 / (15 + 5 uncovered).
    other = span_scores([("d", 0, 10)], [("e", 0, 10), ("d", 5, 10)])
    assert other == pytest.approx(SpanScores(0.5, 1 / 3, 0.25))
    # Two references, one chunk across both: covered [5, 10) + [20, 25) = 10 of 20;
    # precision 10 / 20; IoU 10 / (20 + 5 + 5 uncovered).
    two = span_scores([("d", 0, 10), ("d", 20, 30)], [("d", 5, 25)])
    assert two == pytest.approx(SpanScores(0.5, 0.5, 1 / 3))
    # Overlapping references are summed, not united: covered 15 of 10 + 10 = 20, so recall
    # 0.75 though every character is retrieved; precision 15 / 15; IoU 15 / (15 + 0).
    assert span_scores([("d", 0, 10), ("d", 5, 15)], [("d", 0, 15)]) == SpanScores(0.75, 1, 1)


def test_span_scores_refuse_empty_denominators():
    with pytest.raises(ValueError, match="no reference characters"):
        span_scores([], [("d", 0, 5)])
    with pytest.raises(ValueError, match="no retrieved characters"):
        span_scores([("d", 0, 5)], [])


_range = st.tuples(st.sampled_from("de"), st.integers(0, 80), st.integers(1, 40)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)


@given(st.lists(_range, min_size=1, max_size=5), st.lists(_range, min_size=1, max_size=8))
def test_span_scores_lie_in_the_unit_interval(refs, retrieved):
    scores = span_scores(refs, retrieved)
    assert all(0 <= x <= 1 for x in scores)
    assert scores.iou <= scores.precision + 1e-12


def _disjoint(ranges):
    """Keep the ranges that overlap no earlier one of the same document."""
    kept = []
    for doc, a, b in ranges:
        if all(d != doc or b <= s or e <= a for d, s, e in kept):
            kept.append((doc, a, b))
    return kept


@given(st.lists(_range, min_size=1, max_size=5), st.lists(_range, min_size=1, max_size=8))
def test_with_disjoint_references_iou_is_at_most_recall(refs, retrieved):
    scores = span_scores(_disjoint(refs), retrieved)
    assert scores.iou <= scores.recall + 1e-12


@given(st.lists(_range, min_size=1, max_size=5), st.lists(_range, max_size=5))
def test_a_chunk_over_every_reference_gives_recall_one(refs, others):
    refs = [("d", a, b) for _, a, b in refs]
    cover = ("d", min(a for _, a, _ in refs), max(b for _, _, b in refs))
    scores = span_scores(_disjoint(refs), [*others, cover])
    assert scores.recall == 1.0


@given(st.lists(_range, min_size=1, max_size=5), st.lists(_range, min_size=1, max_size=8))
def test_chunks_of_another_document_change_only_the_denominators(refs, retrieved):
    refs = [("d", a, b) for _, a, b in refs]
    before = span_scores(refs, retrieved)
    after = span_scores(refs, [*retrieved, ("z", 0, 7)])
    assert after.recall == before.recall
    assert after.precision <= before.precision and after.iou <= before.iou


_spans = st.builds(
    lambda doc, start, length: Span(doc, start, start + length),
    st.sampled_from(["a", "b"]),
    st.integers(0, 60),
    st.integers(1, 30),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_spans, min_size=1, max_size=12), st.data())
def test_the_array_version_equals_the_definition_query_by_query(chunks, data):
    # Rankings may be partial (a chunk never ranked can cover nothing), spans may be covered
    # by several chunks, by none, or only by a chunk left out of the ranking.
    queries = data.draw(st.lists(st.lists(_spans, min_size=1, max_size=3), min_size=1, max_size=4))
    rankings = [
        data.draw(st.permutations(range(len(chunks))))[: data.draw(st.integers(0, len(chunks)))]
        for _ in queries
    ]
    expected = [span_first_hit_rank(r, chunks, s) for r, s in zip(rankings, queries, strict=True)]
    assert span_first_hit_ranks(rankings, chunks, queries) == expected
