"""Notebook 09's counts on hand-made outcomes: the rate, calls and probe tables, the run's
cost and the claims judged on them. No model runs here."""

from __future__ import annotations

import pandas as pd
import pytest

from rag_lab.citations import Citation
from rag_lab.claims.verdicts import Verdict
from rag_lab.experiments import nb09_generation as nb09
from rag_lab.models.generator import Generation
from rag_lab.pipeline import Answer, Refusal
from rag_lab.stats import clustered_wilson

SOURCES = [
    Citation(1, "05-autograd", "Autograd", "Intro", "#char=0,40", "the needle is here", 0.4),
    Citation(2, "06-probability", "Probability", "Intro", "#char=0,40", "something else", 0.5),
]


def outcome(id_, text, *, unit, negative=False, cached=True, budget=False):
    """One query's row, as :func:`nb09.run` makes it: ``text`` None means the gate refused."""
    if text is None:
        result, generation = Refusal("q?", 0.675, 0.8), None
    else:
        result = Answer("q?", "prompt", SOURCES, [], text)
        generation = Generation(text, "Tiny (GGUF)", "0" * 64, 200, 30, budget, 10.0, cached)
    row = nb09.outcome(result, None if negative else "needle", generation)
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
    answerable, negatives, slipped = nb09.parts(outcomes)
    assert answerable.id.tolist()[-1] == "q3/ticket" and negatives.id.tolist()[0] == "n1"
    assert slipped.id.tolist() == ["n1", "n2"]


def test_the_rate_table_puts_the_estimate_and_its_interval_in_one_cell(outcomes):
    answerable = nb09.parts(outcomes)[0]
    table = nb09.rate_table(answerable, nb09.GATE_ROWS, "caption")
    refused = table.frame.loc["refused by the gate"]
    lo, hi = clustered_wilson(answerable.refused, answerable.unit)
    assert refused["queries"] == "1/6"
    assert refused["rate [95 % CI]"] == f"0.17 [{lo:.2f}, {hi:.2f}]"
    assert table.width <= 100 and len(table.frame.columns) == 2
    assert nb09.units(answerable) == 3  # q1, q2, q3: six queries, three questions


def test_the_answer_table_counts_each_kind_by_its_rule(outcomes):
    answerable, _, slipped = nb09.parts(outcomes)
    frame = nb09.rate_table(answerable, nb09.ANSWER_ROWS, "caption").frame["queries"]
    assert frame.tolist() == ["3/6", "1/6", "2/6", "2/6", "1/6", "1/6", "0/6", "1/6", "1/6"]
    # q1/course and q3/course cite [1] with words, q1/ticket with markers only; q3/course
    # also cites the invalid [7] and declines; q2 cites [2] or nothing (and hit the budget).
    frame = nb09.rate_table(slipped, nb09.NEGATIVE_ANSWER_ROWS, "caption").frame["queries"]
    assert frame.tolist() == ["0/2", "2/2", "1/2"]  # n1 cites [2], n2 nothing


REPLIES = {
    "SimCSE": "arXiv:2104.08821",  # right
    "MoCo": "10.10301/" * 20,  # no identifier at all
    "E5": "1909.1234",  # four digits after 1412: impossible
}


def probe_answers():
    """The eight papers asked for; any other than the three above gets no identifier."""

    def reply(prompt: str) -> str:
        return next((r for k, r in REPLIES.items() if f"introduced {k}," in prompt), "No idea.")

    return nb09.identifier_probe(reply)


def test_the_probe_table_says_what_each_identifier_is():
    table = nb09.probe_table(probe_answers())
    frame = table.frame.iloc[[0, 5, 7]]  # SimCSE, MoCo, E5
    assert frame["identifier"].tolist() == ["2104.08821", "–", "1909.1234"]
    assert frame["plausible"].tolist() == ["yes", "no", "no"]
    assert frame["the paper's"].tolist() == ["yes", "no", "no"]
    assert table.width <= 100 and (table.frame["identifier"] == "–").sum() == 6


def test_the_run_table_counts_the_cache_and_the_budget(outcomes):
    frame = nb09.run_table(outcomes, 1.2).frame["this run"]
    assert frame["generator calls"] == "7"
    assert frame["served from the answer cache"] == "6"
    assert frame["model time when generated (s)"] == "70"
    assert frame["… per answer (s)"] == "10.0"
    assert frame["prompt tokens, fewest to most"] == "200–200"
    assert frame["answers stopped by the token budget"] == "1"
    assert (
        nb09.run_table(outcomes[outcomes.refused], 0.0).frame.loc["… per answer (s)", "this run"]
        == "–"
    )


def test_the_calls_table_counts_the_generators_record(outcomes):
    frame = nb09.calls_table(outcomes).frame
    assert frame["queries"].tolist() == [5, 2, 2]
    assert frame["generator calls"].tolist() == [5, 2, 0]  # none for a refusal


def test_the_claims_are_judged_on_the_outcomes(outcomes):
    part = {e.claim: e for e in nb09.entries(outcomes, probe_answers())}
    assert set(nb09.HEADLINE) <= set(part)
    assert part["no-call-on-refusal"].verdict is Verdict.BY_CONSTRUCTION
    assert part["no-call-on-refusal"].here == "0 calls for 2 refusals"
    cites = part["cites-by-number"]
    answerable = nb09.parts(outcomes)[0]
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


def test_an_answer_cut_inside_a_code_block_does_not_swallow_its_sources():
    cut = outcome("q1/course", "The needle [1]:\n```python\nx = 1", unit="q1")
    text = nb09.examples(pd.DataFrame([cut]), "cites_needle")
    fences = [line for line in text.splitlines() if line.lstrip("> ").startswith("```")]
    assert len(fences) == 2  # opened by the model, closed for display
    body, sources = text.split("**Sources**")
    assert body.rstrip("> \n").endswith("```") and sources.count("05-autograd") == 1
    whole = outcome("q1/ticket", "The needle [1]:\n```\nx = 1\n```", unit="q1")
    text = nb09.examples(pd.DataFrame([whole]), "cites_needle")
    assert sum(line.lstrip("> ").startswith("```") for line in text.splitlines()) == 2


def test_the_long_context_view():
    from rag_lab.evaluation import long_context as lc
    from rag_lab.questions import Query, Question

    qs = [Query(Question(f"q{i}", "d", "n", "c?", "t?"), "course") for i in range(6)]
    trials = [
        lc.Trial(q, size, position, size == 4 or position != "middle")
        for q in qs
        for size in lc.SIZES
        for position in lc.POSITIONS
    ]
    view = nb09.long_view(trials)
    assert "6 sampled questions" in view.caption
    assert "6/6" in repr(view) and "0/6" in repr(view)
