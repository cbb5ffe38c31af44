"""Notebook 09's counts on hand-made outcomes: the rate and calls tables, the probe and the
claims judged on them. No model runs here."""

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


def test_the_rate_table_gives_each_rate_with_its_interval_by_question(outcomes):
    answerable = nb09.parts(outcomes)[0]
    refused = nb09.rate_table(answerable, ["refused"]).frame.loc["refused"]
    lo, hi = clustered_wilson(answerable.refused, answerable.unit)  # six queries, 3 questions
    assert refused.tolist() == pytest.approx([1, 6, 1 / 6, lo, hi])
    by_query = clustered_wilson(answerable.refused, range(6))
    assert hi - lo > by_query[1] - by_query[0]


def test_the_answer_table_counts_each_kind_by_its_rule(outcomes):
    answerable, _, slipped = nb09.parts(outcomes)
    kinds = ["cites_needle", "needle_markers", "needle_words", "needle_not_cited", "nothing"]
    kinds += ["invalid", "copies", "declines", "hit_budget"]
    counts = nb09.rate_table(answerable, kinds).frame["queries"]
    assert counts.tolist() == [3, 1, 2, 2, 1, 1, 0, 1, 1]
    # q1/course and q3/course cite [1] with words, q1/ticket with markers only; q3/course
    # also cites the invalid [7] and declines; q2 cites [2] or nothing (and hit the budget).
    counts = nb09.rate_table(slipped, ["declines", "answers", "answers_citing"]).frame["queries"]
    assert counts.tolist() == [0, 2, 1]  # n1 cites [2], n2 nothing


def test_an_answer_repeating_a_source_copies_it():
    words = " ".join(f"w{i}" for i in range(nb09.COPY_RUN))
    source = Citation(1, "d", "D", "S", "#char=0,9", f"so {words} end", 0.4)
    copied = nb09.outcome(Answer("q?", "p", [source], [], f"{words} [1]"), None, None)
    assert copied["copies"] and not copied["cites_needle"]
    short = words.rsplit(" ", 1)[0]
    assert not nb09.outcome(Answer("q?", "p", [source], [], short), None, None)["copies"]


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


def test_the_probe_says_what_each_identifier_is():
    probe = probe_answers().iloc[[0, 5, 7]]  # SimCSE, MoCo, E5
    assert probe["identifier"].tolist() == ["2104.08821", "", "1909.1234"]
    assert probe["plausible"].tolist() == [True, False, False]
    assert probe["correct"].tolist() == [True, False, False]


def test_the_probe_shows_each_answer_on_one_line():
    probe = nb09.identifier_probe(lambda prompt: "arXiv:\n  2104.08821\n")
    assert probe["answer"].iloc[0] == "arXiv: 2104.08821"
    assert probe["identifier"].iloc[0] == "2104.08821"


def test_the_calls_table_counts_the_generators_record(outcomes):
    frame = nb09.calls_table(outcomes)  # by (negative, refused)
    assert frame["queries"].tolist() == [5, 1, 2, 1]
    assert frame["calls"].tolist() == [5, 0, 2, 0]  # none for a refusal


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
