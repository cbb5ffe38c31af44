"""Queries through the pipeline on hand-made outcomes: the rate and calls tables, the quote
audit, the refusals, the identifier probe and the claims of notebooks 07 and 09 judged on
them. No model runs here."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import DOC, FixedRetriever

from rag_lab.citations import Citation, Hit
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import generation
from rag_lab.models.generator import Generation
from rag_lab.pipeline import Answer, Refusal
from rag_lab.questions import Negative, Query, Question
from rag_lab.stats import clustered_wilson

SOURCES = [
    Citation(1, "05-autograd", "Autograd", "Intro", "#char=0,40", "the needle is here", 0.4),
    Citation(2, "06-probability", "Probability", "Intro", "#char=0,40", "something else", 0.5),
]


def outcome(id_, text, *, unit, negative=False, cached=True, budget=False):
    """One query's row, as :func:`generation.run` makes it: ``text`` None means the gate refused."""
    if text is None:
        result, call = Refusal("q?", 0.675, 0.8), None
    else:
        result = Answer("q?", "prompt", SOURCES, [], text)
        call = Generation(text, "Tiny (GGUF)", "0" * 64, 200, 30, budget, 10.0, cached)
    row = generation.outcome(result, None if negative else "needle", call)
    return {"id": id_, "question": "q?", "unit": unit} | row


@pytest.fixture
def outcomes():
    return pd.DataFrame(
        [
            outcome("q1/course", "The needle [1].", unit="q1"),  # needle's source, with words
            outcome("q1/ticket", "[1]", unit="q1"),  # markers only
            outcome("q2/course", "Something [2].", unit="q2"),  # another source only
            outcome("q2/ticket", "No idea at all.", unit="q2", budget=True),  # nothing
            outcome("q3/course", "The sources do not contain it [1] [7].", unit="q3"),  # declines
            outcome("q3/ticket", None, unit="q3"),  # refused by the gate
            outcome("n1", "Here is how [2].", unit="n1", negative=True),
            outcome("n2", "Just do it.", unit="n2", negative=True, cached=False),
            outcome("n3", None, unit="n3", negative=True),
        ]
    )


def test_the_parts_are_answerable_negatives_and_the_negatives_let_through(outcomes):
    answerable, negatives, slipped = generation.parts(outcomes)
    assert answerable.id.tolist()[-1] == "q3/ticket" and negatives.id.tolist()[0] == "n1"
    assert slipped.id.tolist() == ["n1", "n2"]


def test_the_rate_table_gives_each_rate_with_its_interval_by_question(outcomes):
    answerable = generation.parts(outcomes)[0]
    refused = generation.rate_table(answerable, ["refused"]).frame.loc["refused"]
    lo, hi = clustered_wilson(answerable.refused, answerable.unit)  # six queries, 3 questions
    assert refused.tolist() == pytest.approx([1, 6, 1 / 6, lo, hi])
    by_query = clustered_wilson(answerable.refused, range(6))
    assert hi - lo > by_query[1] - by_query[0]


def test_the_answer_table_counts_each_kind_by_its_rule(outcomes):
    answerable, _, slipped = generation.parts(outcomes)
    kinds = ["cites_needle", "needle_markers", "needle_words", "needle_not_cited", "nothing"]
    kinds += ["invalid", "copies", "declines", "hit_budget"]
    counts = generation.rate_table(answerable, kinds).frame["queries"]
    assert counts.tolist() == [3, 1, 2, 2, 1, 1, 0, 1, 1]
    # q1/course and q3/course cite [1] with words, q1/ticket with markers only; q3/course
    # also cites the invalid [7] and declines; q2 cites [2] or nothing (and hit the budget).
    table = generation.rate_table(slipped, ["declines", "answers", "answers_citing"])
    assert table.frame["queries"].tolist() == [0, 2, 1]  # n1 cites [2], n2 nothing


def test_an_answer_repeating_a_source_copies_it():
    words = " ".join(f"w{i}" for i in range(generation.COPY_RUN))
    source = Citation(1, "d", "D", "S", "#char=0,9", f"so {words} end", 0.4)
    copied = generation.outcome(Answer("q?", "p", [source], [], f"{words} [1]"), None, None)
    assert copied["copies"] and not copied["cites_needle"]
    short = words.rsplit(" ", 1)[0]
    assert not generation.outcome(Answer("q?", "p", [source], [], short), None, None)["copies"]


REPLIES = {
    "SimCSE": "arXiv:2104.08821",  # right
    "MoCo": "10.10301/" * 20,  # no identifier at all
    "E5": "1909.1234",  # four digits after 1412: impossible
}


def probe_answers():
    """The eight papers asked for; any other than the three above gets no identifier."""

    def reply(prompt: str) -> str:
        return next((r for k, r in REPLIES.items() if f"introduced {k}," in prompt), "No idea.")

    return generation.identifier_probe(reply)


def test_the_probe_says_what_each_identifier_is():
    probe = probe_answers().iloc[[0, 5, 7]]  # SimCSE, MoCo, E5
    assert probe["identifier"].tolist() == ["2104.08821", "", "1909.1234"]
    assert probe["plausible"].tolist() == [True, False, False]
    assert probe["correct"].tolist() == [True, False, False]


def test_the_probe_shows_each_answer_on_one_line():
    probe = generation.identifier_probe(lambda prompt: "arXiv:\n  2104.08821\n")
    assert probe["answer"].iloc[0] == "arXiv: 2104.08821"
    assert probe["identifier"].iloc[0] == "2104.08821"


def test_the_calls_table_counts_the_generators_record(outcomes):
    frame = generation.calls_table(outcomes)  # by (negative, refused)
    assert frame["queries"].tolist() == [5, 1, 2, 1]
    assert frame["calls"].tolist() == [5, 0, 2, 0]  # none for a refusal


def test_the_claims_are_judged_on_the_outcomes(outcomes):
    part = {e.claim: e for e in generation.entries(outcomes, probe_answers())}
    assert list(part) == [
        "no-call-on-refusal",
        "cites-by-number",
        "needle-in-prompt-unused",
        "threshold-over-instruction",
        "ids-well-formed",
        "ids-wrong",
        "ids-real",
    ]
    assert part["no-call-on-refusal"].verdict is Verdict.BY_CONSTRUCTION
    assert part["no-call-on-refusal"].here == "0 calls for 2 refusals"
    cites = part["cites-by-number"]
    answerable = generation.parts(outcomes)[0]
    assert (
        cites.verdict is Verdict.NOT_TESTABLE and cites.here == "3 of 6"
    )  # q3/course declines, yet cites [1]
    assert cites.estimate == pytest.approx(3 / 6) and cites.method == "clustered_wilson"
    assert cites.ci == clustered_wilson(answerable.cites_needle, answerable.unit)
    # the prompt names the papers: the stand-in changes the task, so whatever the counts
    # (2 of 8 well-formed, one right) the claims are not testable as stated
    assert part["ids-well-formed"].verdict is Verdict.NOT_TESTABLE
    assert part["ids-wrong"].verdict is Verdict.NOT_TESTABLE
    assert part["ids-well-formed"].here.startswith("2 of 8")
    assert part["ids-wrong"].here == "1 of 8 right (2104.08821)"
    unused, answered = part["needle-in-prompt-unused"], part["threshold-over-instruction"]
    assert unused.here == "2 of 5 not cited" and unused.verdict is Verdict.REPRODUCES
    assert answered.here == "2 of 2 answered" and answered.verdict is Verdict.REPRODUCES
    assert part["ids-real"].here == "1 of 8 plausible by arXiv's numbering"


# --- notebook 07: the quotes at their offsets, the refusals, the claims ----------------------


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
    outcomes = generation.run(queries, [], retriever, 0.675)
    assert outcomes.called.sum() == 0  # no generator: the pipeline's citations alone
    assert generation.quote_audit(outcomes, {DOC.id: DOC.text}).tolist() == [2, 1, 1, 2, 2, 0]
    moved = generation.quote_audit(outcomes, {DOC.id: "x" + DOC.text})
    assert moved["quotes that differ"] == 2


def test_the_refusals_come_farthest_first():
    negatives = [Negative(f"n{i}", "offtopic", f"n{i}?") for i in range(3)]
    retriever = ByQuestion({"n0?": [0.8, 0.85], "n1?": [0.95, 0.9], "n2?": [0.3, 0.4]})
    refusals = generation.refusals(generation.run([], negatives, retriever, 0.675))
    assert [r.question for r in refusals] == ["n1?", "n0?"]
    assert [r.nearest for r in refusals] == [0.9, 0.8]


def test_the_citation_claims_are_judged_on_the_counts():
    audit = pd.Series({"citations": 240, "exact quotes": 240, "quotes that differ": 0})
    part = {e.claim: e for e in generation.citation_entries(audit, 18, 30, 355)}
    assert list(part) == ["locators-exact", "refusal-no-call", "prompt-size"]
    assert part["locators-exact"].verdict is Verdict.BY_CONSTRUCTION
    assert part["locators-exact"].here == "240 of 240 exact"
    assert part["refusal-no-call"].here == "18 of 30"
    assert part["prompt-size"].verdict is Verdict.NOT_TESTABLE
    assert part["prompt-size"].here == "355 tokens"
    broken = pd.Series({"citations": 240, "exact quotes": 239, "quotes that differ": 1})
    assert generation.citation_entries(broken, 18, 30, 355)[0].verdict is Verdict.CONTRADICTED
    assert generation.citation_entries(audit, 0, 30, 355)[1].verdict is Verdict.CONTRADICTED
