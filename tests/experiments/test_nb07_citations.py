"""Notebook 07's views: the prompt unchanged, the server's table in two, the refusals, and a
reading worded by the ledger's verdicts."""

from __future__ import annotations

from rag_lab.citations import Citation
from rag_lab.evaluation import chapter
from rag_lab.experiments import nb07_citations as nb07
from rag_lab.pipeline import Refusal

QUOTE = "The `MSELoss` class computes the mean squared error. " * 4


def cite(i: int, doc: str, quote: str = QUOTE) -> Citation:
    return Citation(i, doc, doc.title(), "Defining the Loss", "#char=3518,3853", quote, 0.5)


def test_the_prompt_view_keeps_the_prompt_and_says_how_long_its_lines_are():
    prompt = "x " * 126 + "\n\nSOURCES\n"
    view = nb07.prompt_view(prompt)
    assert view.text == prompt
    assert "4 lines, the longest 252" in view.caption
    assert max(map(len, repr(view).splitlines())) <= 100


def test_the_server_table_splits_where_from_what_and_keeps_the_whole_quote():
    cited = [cite(1, "11-linear-regression-concise"), cite(2, "x", "q")]
    where, quotes = nb07.citation_tables(cited)
    assert list(where.frame.columns) == ["document", "section", "locator", "distance"]
    assert quotes.frame.loc[1, "quote"] == QUOTE  # whole, shortened only when shown
    assert quotes.frame["characters"].tolist() == [len(QUOTE), 1]
    shown = quotes.shown()["quote"].iloc[0]
    assert shown.endswith("…") and len(shown) == 80
    assert where.width <= 100 and quotes.width <= 100


def test_the_refusal_table_shows_the_first_ones_in_the_order_given():
    refusals = [Refusal(f"query {i}", 0.675, 0.9 - i / 100) for i in range(5)]
    table = nb07.refusal_table(refusals, n=3)
    assert table.frame["negative query"].tolist() == ["query 0", "query 1", "query 2"]
    assert "The 3 negatives" in table.caption and "0.675" in table.caption


def test_the_reading_says_the_ledgers_verdict():
    audit = nb07.QuoteAudit(queries=64, answered=63, citations=240, mismatched=[])
    text = nb07.reading(audit, 18, 30, 355)
    assert "**Locators from offsets** (by construction)" in text
    assert "**Prompt size** (not testable here)" in text
    assert f"{355 / chapter.PROMPT_TOKENS:.2f} times the chapter's" in text
    broken = nb07.QuoteAudit(64, 63, 240, [cite(1, "d")])
    assert "**Locators from offsets** (contradicted)" in nb07.reading(broken, 18, 30, 355)
    assert {e.claim for e in nb07.entries(audit, 18, 30, 355)} == set(nb07.HEADLINE)
