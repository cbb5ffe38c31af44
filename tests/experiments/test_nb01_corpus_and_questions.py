from __future__ import annotations

from dataclasses import replace

import pandas as pd
from hand_counted import DOCS, QSET

from rag_lab.evaluation import chapter, corpus
from rag_lab.experiments import nb01_corpus_and_questions as nb01


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
    violations = corpus.broken_violations(DOCS)
    assert {(v.line, v.id, v.field) for v in violations} == corpus.PLANTED
    lines = nb01.messages(violations).lines()
    assert len([line for line in lines if line.startswith("broken_questions.yaml:")]) == 6
    assert all(len(line) <= 100 for line in lines)
    assert set(nb01.HEADLINE) <= {e.claim for e in corpus.entries(DOCS, QSET, violations)}


def test_the_ground_truth_tables_fit_a_page():
    long = replace(QSET.questions[0], course="why " * 40, ticket="how " * 40)
    qset = replace(QSET, questions=(long, QSET.questions[1]))
    where, asked, negatives = nb01.ground_truth(DOCS, qset)
    assert all(t.width <= 100 for t in (where, asked, negatives, nb01.totals_table(DOCS)))
    assert where.frame.index.tolist() == ["03-linear-algebra", "04-calculus"]
    assert negatives.frame["kind"].tolist() == ["uncovered", "offtopic"]
