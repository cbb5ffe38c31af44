from __future__ import annotations

from dataclasses import replace

import pytest

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
    table = nb01.beside_chapter(nb01.per_document(DOCS))
    chars = sum(len(d.text) for d in DOCS)
    assert table.loc["characters", "here"] == chars and table.loc["sections", "here"] == 3
    assert table.loc["characters", "here ÷ chapter"] == pytest.approx(
        chars / chapter.CORPUS["characters"]
    )
    assert table.loc["characters per section", "here"] == pytest.approx(chars / 3)
    assert table["chapter"].isna()["code blocks"]  # the chapter gives no figure
    shown = nb01.totals_table(nb01.per_document(DOCS)).frame
    assert shown.loc["code blocks", "chapter"] == "–" and shown.loc["documents", "here"] == "3"


def test_the_validator_catches_every_planted_fault(tmp_path):
    violations = nb01.broken_violations(DOCS, tmp_path)
    assert {(v.line, v.id, v.field) for v in violations} == set(nb01.PLANTED)
    lines = nb01.validate_broken(DOCS, tmp_path)
    assert len(lines) == len(nb01.PLANTED)
    assert all(len(row) <= nb01.WIDTH for line in lines for row in line.splitlines())
    assert "found 2 times" in "\n".join(lines)


def test_the_checks_hold_by_construction_and_fail_when_they_do_not(tmp_path):
    violations = nb01.broken_violations(DOCS, tmp_path)
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


def test_the_tables_fit_a_page():
    long = replace(QSET.questions[0], course="why " * 40, ticket="how " * 40)
    qset = replace(QSET, questions=(long, QSET.questions[1]))
    for table in (
        nb01.where_table(DOCS, qset),
        nb01.phrasing_table(qset),
        nb01.negatives_table(qset),
        nb01.totals_table(nb01.per_document(DOCS)),
    ):
        assert table.width <= 100
    assert nb01.where_table(DOCS, qset).frame.index.name == "doc"
