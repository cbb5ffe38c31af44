"""Notebook 07's views: the prompt unchanged and its size, the server's table in two, the quote
audit and the refusals as counts, and the claims judged on them."""

from __future__ import annotations

from rag_lab.citations import Citation
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter
from rag_lab.experiments import nb07_citations as nb07
from rag_lab.pipeline import Answer, Refusal
from rag_lab.questions import Query, Question

QUOTE = "The `MSELoss` class computes the mean squared error. " * 4


def cite(i: int, doc: str, quote: str = QUOTE) -> Citation:
    return Citation(i, doc, doc.title(), "Defining the Loss", "#char=3518,3853", quote, 0.5)


def test_the_prompt_view_keeps_the_prompt_and_the_size_table_counts_it():
    prompt = "x " * 126 + "\n\nSOURCES\n"
    view = nb07.prompt_view(prompt)
    assert view.text == prompt
    assert max(map(len, repr(view).splitlines())) <= 100
    size = nb07.prompt_size(prompt, 80, 90).frame
    assert size["here"].tolist() == [f"{len(prompt):,}", "4", "252", "80", "90"]
    assert size["chapter"].tolist() == ["–", "–", "–", str(chapter.PROMPT_TOKENS), "–"]


def test_the_sources_table_counts_the_sources_and_names_the_needles():
    query = Query(Question("q19", "d", "MSELoss", "c?", "t?"), "ticket")
    cited = [cite(1, "11-linear-regression-concise"), cite(2, "x", "q")]
    result = Answer("t?", "prompt", cited, [], None)
    row = nb07.sources_table(result, query).frame.loc["q19/ticket"]
    assert row.tolist() == [2, "[1]"]
    refused = nb07.sources_table(Refusal("t?", 0.675, 0.8), query).frame.loc["q19/ticket"]
    assert refused.tolist() == [0, "none"]


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


def test_the_audit_table_counts_and_the_claims_judge_it():
    audit = nb07.QuoteAudit(queries=64, answered=63, citations=240, mismatched=[])
    assert nb07.audit_table(audit).frame["count"].tolist() == [64, 63, 1, 240, 240, 0]
    part = {e.claim: e for e in nb07.entries(audit, 18, 30, 355)}
    assert set(part) == set(nb07.HEADLINE)
    assert part["locators-exact"].verdict is Verdict.BY_CONSTRUCTION
    assert part["locators-exact"].here == "240 of 240 exact"
    assert part["refusal-no-call"].here == "18 of 30"
    assert part["prompt-size"].verdict is Verdict.NOT_TESTABLE
    broken = nb07.QuoteAudit(64, 63, 240, [cite(1, "d")])
    assert nb07.audit_table(broken).frame["count"].tolist()[-2:] == [239, 1]
    assert nb07.entries(broken, 18, 30, 355)[0].verdict is Verdict.CONTRADICTED
    assert nb07.entries(audit, 0, 30, 355)[1].verdict is Verdict.CONTRADICTED
