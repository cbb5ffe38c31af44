"""Notebook 07's views: the prompt's size and the table only the server keeps."""

from __future__ import annotations

from rag_lab.citations import Citation
from rag_lab.experiments import nb07_citations as nb07
from rag_lab.pipeline import Answer

NEEDLE = "The `MSELoss` class computes the mean squared error."


def cite(i: int, quote: str, start: int = 0, doc: str = "d") -> Citation:
    return Citation(i, doc, doc, "Loss", f"#char={start},{start + len(quote)}", quote, 0.5)


def test_the_prompt_size_counts_characters_lines_and_tokens():
    prompt = "x " * 126 + "\n\nSOURCES\n"
    size = nb07.prompt_size(prompt, 80, 90)
    assert size.tolist() == [len(prompt), 4, 252, 80, 90]


def test_the_server_table_says_which_sources_hold_the_needle_whole():
    cited = [cite(1, NEEDLE, 23), cite(2, "The end.", 76)]
    frame = nb07.server_table(Answer("q?", "prompt", cited, [], None), NEEDLE).frame
    assert frame["needle"].tolist() == [True, False]
    assert frame["locator"].tolist() == ["#char=23,75", "#char=76,84"]
    assert "quote" not in frame
