from __future__ import annotations

from dataclasses import replace

import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import chapter
from rag_lab.experiments import nb01_corpus_and_questions as nb01
from rag_lab.questions import Negative, Question, QuestionSet

# The documents BROKEN names, small enough to count by hand: "tensor" occurs twice, two
# needles of BROKEN are headings.
DOCS = [
    Document("01-ndarray", "Data", "# Data\n\n## Getting Started\n\nA tensor is a tensor.\n"),
    Document("03-linear-algebra", "LA", "# LA\n\nIntro text here.\n\n## Sums\n\n```\nx = 1\n```\n"),
    Document("04-calculus", "Calc", "# Calc\n\n## Visualization Utilities\n\nPlots $x$.\n"),
]
QSET = QuestionSet(
    (
        Question("q1", "03-linear-algebra", "Intro text here.", "what intro", "intro?"),
        Question("q2", "04-calculus", "Plots $x$.", "what plots", "plots?"),
    ),
    (Negative("n1", "uncovered", "how do i bake bread"), Negative("n2", "offtopic", "rain?")),
)


def test_the_totals_beside_the_chapter():
    shown = nb01.totals_table(DOCS).frame
    chars = sum(len(d.text) for d in DOCS)
    assert shown.loc["characters", "here"] == f"{chars:,}" and shown.loc["sections", "here"] == "3"
    ratio = round(chars / chapter.CORPUS["characters"], 2)
    assert shown.loc["characters", "here ÷ chapter"] == ratio
    assert shown.loc["characters per section", "here"] == f"{chars / 3:,.0f}"
    assert pd.isna(shown.loc["code blocks", "chapter"])  # the chapter gives no figure
    assert shown.loc["documents", "here"] == "3"


def test_the_validator_catches_every_planted_fault():
    violations = nb01.broken_violations(DOCS)
    assert {(v.line, v.id, v.field) for v in violations} == nb01.PLANTED
    lines = nb01.messages(violations).lines()
    assert len([line for line in lines if line.startswith("broken_questions.yaml:")]) == 6
    assert all(len(line) <= 100 for line in lines)


def test_the_checks_hold_by_construction_and_fail_when_they_do_not():
    violations = nb01.broken_violations(DOCS)
    judged = {e.claim: e for e in nb01.entries(DOCS, QSET, violations)}
    assert set(nb01.HEADLINE) <= set(judged)
    assert judged["needle-once"].verdict is Verdict.BY_CONSTRUCTION
    assert judged["needle-once"].here == "2 of 2 needles"
    assert judged["validator-faults"].verdict is Verdict.BY_CONSTRUCTION
    # two questions and two negatives are not the chapter's design
    assert judged["design"].verdict is Verdict.CONTRADICTED
    assert judged["design"].here == "2 × 2 = 4 queries; 2 negatives (1 uncovered, 1 offtopic)"
    # a needle in a code line, and a validator that misses a fault, are caught
    in_code = replace(QSET.questions[0], needle="x = 1")
    judged = {
        e.claim: e for e in nb01.entries(DOCS, replace(QSET, questions=(in_code,)), violations[:-1])
    }
    assert judged["needle-once"].verdict is Verdict.CONTRADICTED
    assert judged["validator-faults"].verdict is Verdict.CONTRADICTED
    assert judged["validator-faults"].here == "5 of the 6 faults planted, 5 reported"


def test_the_ground_truth_tables_fit_a_page():
    long = replace(QSET.questions[0], course="why " * 40, ticket="how " * 40)
    qset = replace(QSET, questions=(long, QSET.questions[1]))
    where, asked, negatives = nb01.ground_truth(DOCS, qset)
    assert all(t.width <= 100 for t in (where, asked, negatives, nb01.totals_table(DOCS)))
    assert where.frame.index.tolist() == ["03-linear-algebra", "04-calculus"]
    assert negatives.frame["kind"].tolist() == ["uncovered", "offtopic"]


def test_the_spread_counts_documents_sections_and_intros():
    assert nb01.spread(DOCS, QSET) == {
        "questions": 2,
        "queries": 4,
        "documents": 2,
        "intro needles": 1,
        "sections": 2,
        "uncovered negatives": 1,
        "offtopic negatives": 1,
    }
    where = nb01.needles(DOCS, QSET)
    assert (
        where.loc["q1", "section"] == "(intro)"
        and where.loc["q2", "section"] == "Visualization Utilities"
    )
    assert where.loc["q2", "at"] == DOCS[2].text.index("Plots $x$.") / len(DOCS[2].text)
