"""Notebook 07's counts: the prompt's size, the server's table, the quote audit and the
refusals, and the claims judged on them."""

from __future__ import annotations

import pandas as pd
from fakes import DOC, FixedRetriever

from rag_lab.citations import Citation, Hit
from rag_lab.claims.verdicts import Verdict
from rag_lab.experiments import nb07_citations as nb07
from rag_lab.pipeline import Answer
from rag_lab.questions import Negative, Query, Question

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


class ByQuestion:
    """The two chunks of ``fakes.DOC``, at distances that depend on the question."""

    def __init__(self, distances: dict[str, list[float]]) -> None:
        self.distances = distances

    def nearest(self, question: str, k: int) -> list[Hit]:
        return FixedRetriever(self.distances[question]).nearest(question, k)


def test_the_audit_counts_every_quote_against_its_document():
    question = Question("q1", DOC.id, "First fact.", "first?", "first??")
    queries = [Query(question, "course"), Query(question, "ticket")]
    retriever = ByQuestion({"first?": [0.3, 0.5], "first??": [0.9, 0.8]})
    audit = nb07.quote_audit(queries, retriever, 0.675, {DOC.id: DOC.text})
    assert audit.tolist() == [2, 1, 1, 2, 2, 0]
    moved = nb07.quote_audit(queries, retriever, 0.675, {DOC.id: "x" + DOC.text})
    assert moved["quotes that differ"] == 2


def test_the_refusals_come_farthest_first():
    negatives = [Negative(f"n{i}", "offtopic", f"n{i}?") for i in range(3)]
    retriever = ByQuestion({"n0?": [0.8, 0.85], "n1?": [0.95, 0.9], "n2?": [0.3, 0.4]})
    refusals = nb07.negative_refusals(negatives, retriever, 0.675)
    assert [r.question for r in refusals] == ["n1?", "n0?"]
    assert [r.nearest for r in refusals] == [0.9, 0.8]


def test_the_claims_are_judged_on_the_counts():
    audit = pd.Series({"citations": 240, "exact quotes": 240, "quotes that differ": 0})
    part = {e.claim: e for e in nb07.entries(audit, 18, 30, 355)}
    assert list(part) == list(nb07.HEADLINE)
    assert part["locators-exact"].verdict is Verdict.BY_CONSTRUCTION
    assert part["locators-exact"].here == "240 of 240 exact"
    assert part["refusal-no-call"].here == "18 of 30"
    assert part["prompt-size"].verdict is Verdict.NOT_TESTABLE
    assert part["prompt-size"].here == "355 tokens"
    broken = pd.Series({"citations": 240, "exact quotes": 239, "quotes that differ": 1})
    assert nb07.entries(broken, 18, 30, 355)[0].verdict is Verdict.CONTRADICTED
    assert nb07.entries(audit, 0, 30, 355)[1].verdict is Verdict.CONTRADICTED
