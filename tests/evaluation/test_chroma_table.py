"""Chroma's table: each published row run with their chunker, metric and k."""

from __future__ import annotations

from fakes import HashEncoder
from rag_lab.documents import Document
from rag_lab.evaluation.chroma_table import PUBLISHED, Published, run
from rag_lab.sources.chroma.chunkers import TokenChunker
from rag_lab.spans import Span, SpanQuestion


def test_a_row_scores_every_question_with_chromas_metric():
    text = "".join(f"Paragraph {i} talks about topic {i} at length.\n\n" for i in range(60))
    doc = Document("c", "c", text, format="plain")
    start = text.index("Paragraph 7 ")
    excerpt = Span("c", start, start + len("Paragraph 7 talks about topic 7"))
    questions = [SpanQuestion(f"q{i}", "Paragraph 7 talks about topic 7", (excerpt,)) for i in (0, 1)]
    rows = run([doc], questions, HashEncoder(), [Published(TokenChunker("fixed", 20, 0), 50.0)], k=60)
    (row,) = rows
    # k is every chunk: the excerpt is covered whole, so recall is 100 %.
    assert row.chunks > 1 and row.recall.tolist() == [1.0, 1.0]
    assert row.mean() == (100.0, 100.0, 100.0)  # no spread, no width
    (top1,) = run([doc], questions, HashEncoder(), [Published(TokenChunker("fixed", 20, 0), 50.0)], k=1)
    assert (top1.recall <= 1).all() and (top1.precision <= 1).all()


def test_the_published_rows_are_the_four_quoted():
    assert [p.chunker.name for p in PUBLISHED] == [
        "fixed 250/0", "fixed 250/125", "recursive 250/0", "recursive 200/0",
    ]  # fmt: skip
