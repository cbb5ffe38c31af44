"""The corpus checks of notebook 01 on documents small enough to count by hand."""

from __future__ import annotations

from dataclasses import replace

from hand_counted import DOCS, QSET

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import corpus


def test_the_checks_hold_by_construction_and_fail_when_they_do_not():
    violations = corpus.broken_violations(DOCS)
    judged = {e.claim: e for e in corpus.entries(DOCS, QSET, violations)}
    assert set(judged) == {
        "corpus-kind",
        "design",
        "needle-once",
        "needle-spread",
        "validator-faults",
    }
    assert judged["needle-once"].verdict is Verdict.BY_CONSTRUCTION
    assert judged["needle-once"].here == "2 of 2 needles"
    assert judged["validator-faults"].verdict is Verdict.BY_CONSTRUCTION
    # two questions and two negatives are not the chapter's design
    assert judged["design"].verdict is Verdict.CONTRADICTED
    assert judged["design"].here == "2 × 2 = 4 queries; 2 negatives (1 uncovered, 1 offtopic)"
    # a needle in a code line, and a validator that misses a fault, are caught
    in_code = replace(QSET.questions[0], needle="x = 1")
    judged = {
        e.claim: e
        for e in corpus.entries(DOCS, replace(QSET, questions=(in_code,)), violations[:-1])
    }
    assert judged["needle-once"].verdict is Verdict.CONTRADICTED
    assert judged["validator-faults"].verdict is Verdict.CONTRADICTED
    assert judged["validator-faults"].here == "5 of the 6 faults planted, 5 reported"


def test_the_spread_counts_documents_sections_and_intros():
    assert corpus.spread(DOCS, QSET) == {
        "questions": 2,
        "queries": 4,
        "documents": 2,
        "intro needles": 1,
        "sections": 2,
        "uncovered negatives": 1,
        "offtopic negatives": 1,
    }
    where = corpus.needles(DOCS, QSET)
    assert (
        where.loc["q1", "section"] == "(intro)"
        and where.loc["q2", "section"] == "Visualization Utilities"
    )
    assert where.loc["q2", "at"] == DOCS[2].text.index("Plots $x$.") / len(DOCS[2].text)
