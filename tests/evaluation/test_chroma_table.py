"""Chroma's table: each published row run with their chunker, metric and k."""

from __future__ import annotations

import pytest
from fakes import HashEncoder

from rag_lab.documents import Document
from rag_lab.evaluation.chroma_table import PUBLISHED, Published, Row, run
from rag_lab.sources.chroma.chunkers import TokenChunker
from rag_lab.spans import Span, SpanQuestion


def test_a_row_scores_every_question_with_chromas_metric():
    text = "".join(f"Paragraph {i} talks about topic {i} at length.\n\n" for i in range(60))
    doc = Document("c", "c", text, format="plain")
    start = text.index("Paragraph 7 ")
    excerpt = Span("c", start, start + len("Paragraph 7 talks about topic 7"))
    questions = [
        SpanQuestion(f"q{i}", "Paragraph 7 talks about topic 7", (excerpt,)) for i in (0, 1)
    ]
    rows = run(
        [doc], questions, HashEncoder(), [Published(TokenChunker("fixed", 20, 0), 50.0)], k=60
    )
    (row,) = rows
    # k is every chunk: the excerpt is covered whole, so recall is 100 %.
    assert row.chunks > 1 and row.recall.tolist() == [1.0, 1.0]
    assert row.mean() == (100.0, 100.0, 100.0)  # no spread, no width
    (top1,) = run(
        [doc], questions, HashEncoder(), [Published(TokenChunker("fixed", 20, 0), 50.0)], k=1
    )
    assert (top1.recall <= 1).all() and (top1.precision <= 1).all()


def test_the_published_rows_are_the_four_quoted():
    assert [p.chunker.name for p in PUBLISHED] == [
        "fixed 250/0", "fixed 250/125", "recursive 250/0", "recursive 200/0",
    ]  # fmt: skip


def _row(published: Published, recall: list[float]) -> Row:
    import numpy as np

    values = np.array(recall)
    return Row(published, 10, values, values / 10, values / 20)


def test_entries_judge_each_published_row_as_a_value_in_fractions():
    from rag_lab.claims import claim
    from rag_lab.claims.verdicts import Verdict
    from rag_lab.evaluation.chroma_table import entries

    fixed = Published(TokenChunker("fixed", 250, 0), 77.1)
    rows = [
        _row(fixed, [0.7, 0.8, 0.75, 0.85] * 50),  # mean 0.775, narrow: within ±0.10 of 0.771
        _row(Published(TokenChunker("recursive", 200, 0), 75.7), [0.3, 0.4] * 100),  # far below
        _row(Published(TokenChunker("fixed", 250, 125), 82.4), [0.0, 1.0] * 5),  # wide
    ]
    same, low, wide = entries(rows)
    assert same.claim == "chroma-fixed-250/0@5" and same.notebook == "10"
    assert same.benchmark == "chroma" and same.chapter == claim(same.claim).chapter
    assert same.chapter_effect == pytest.approx(0.771)
    # the declared margin of a published row, narrower than the ledger's ±0.10
    assert same.margin == claim(same.claim).margin == 0.05 and same.method == "student_t"
    assert same.estimate == pytest.approx(0.775)
    assert same.ci[0] < 0.775 < same.ci[1] < 1  # a fraction, not percent
    assert same.verdict is Verdict.REPRODUCES
    assert low.verdict is Verdict.EXCLUDES_CHAPTER_EFFECT and low.estimate == pytest.approx(0.35)
    assert wide.verdict is Verdict.INCONCLUSIVE  # 0.5 [0.12, 0.88]: includes 0.824, too wide
    assert "200 questions" in same.here and "10 chunks" in same.here
