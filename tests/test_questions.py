from __future__ import annotations

import dataclasses

import pytest
from fakes import questions_file

from rag_lab.chunking import chunk_document
from rag_lab.documents import Document
from rag_lab.evaluation.chunking import destroyed_questions
from rag_lab.metrics import relevant_chunks
from rag_lab.needles import Found
from rag_lab.questions import CHAPTER_DESIGN, Expected, QuestionsError, load_questions
from rag_lab.text import flat

DOCS = [
    Document(
        "01-a",
        "Alpha",
        "# Alpha\n\nThe quick brown fox jumps over the lazy dog. Foxes are fast.\n\n"
        "## Heading Words\n\nA table follows.\n\n| a | b |\n|---|---|\n| cell text | 2 |\n\n"
        "```python\nprint('code sentence here')\n```\n\nRepeated words. Repeated words.\n",
    ),
    Document("02-b", "Beta", "# Beta\n\nEvery cat sleeps in the sun for hours.\n"),
]

GOOD = """
questions:
  - id: q1
    doc: 01-a
    needle: "The quick brown fox jumps over the lazy dog."
    course: "Which animal leaps across the idle hound?"
    ticket: "something jumped over my dog, what was it"
  - id: q2
    doc: 02-b
    needle: "Every cat sleeps in the sun for hours."
    course: "Where do felines nap?"
    ticket: "my cat is always in the window, why"
negatives:
  - id: n1
    kind: offtopic
    query: "how do i renew my passport"
"""


def violations(tmp_path, text: str, expected=None) -> list[str]:
    with pytest.raises(QuestionsError) as err:
        load_questions(questions_file(tmp_path, text), DOCS, expected)
    return [v.render("q.yaml") for v in err.value.violations]


def test_a_good_file_loads_into_queries(tmp_path):
    qset = load_questions(questions_file(tmp_path, GOOD), DOCS)
    assert [q.id for q in qset.questions] == ["q1", "q2"]
    queries = qset.queries()
    assert [q.id for q in queries] == ["q1/course", "q2/course", "q1/ticket", "q2/ticket"]
    assert queries[2].text == "something jumped over my dog, what was it"
    assert queries[2].needle == "The quick brown fox jumps over the lazy dog."


def test_every_needle_problem_is_reported_at_once_with_its_line(tmp_path):
    bad = GOOD.replace("The quick brown fox jumps over the lazy dog.", "Not in the corpus.")
    bad = bad.replace("Every cat sleeps in the sun for hours.", "Repeated words.")
    assert violations(tmp_path, bad) == [
        "q.yaml:5: q1 needle: not found verbatim in the corpus",
        "q.yaml:10: q2 needle: found 2 times (01-a ×2); it must occur exactly once",
    ]


@pytest.mark.parametrize(
    ("needle", "kind"),
    [("Heading Words", "heading"), ("cell text", "table"), ("code sentence here", "code")],
)
def test_needles_must_be_prose(tmp_path, needle, kind):
    bad = GOOD.replace("The quick brown fox jumps over the lazy dog.", needle)
    assert violations(tmp_path, bad) == [
        f"q.yaml:5: q1 needle: lies in a {kind} line of 01-a; a needle must be prose"
    ]


def test_needle_in_the_wrong_document(tmp_path):
    bad = GOOD.replace("doc: 02-b", "doc: 01-a")
    assert violations(tmp_path, bad) == ["q.yaml:10: q2 needle: found in 02-b, not in 01-a"]


def test_structure_problems(tmp_path):
    bad = GOOD.replace("id: q2", "id: q1").replace("kind: offtopic", "kind: sideways")
    bad = bad.replace('    ticket: "my cat is always in the window, why"\n', "")
    bad += "extra: 1\n"
    assert violations(tmp_path, bad) == [
        "q.yaml:8: q1 ticket: missing field",
        "q.yaml:14: n1 kind: 'sideways' is not one of uncovered, offtopic",
        "q.yaml:16: extra: unknown top-level key",
    ]
    dup = GOOD.replace("id: q2", "id: q1")
    assert violations(tmp_path, dup) == ["q.yaml:8: q1 id: duplicate id (first at line 3)"]


def test_a_phrasing_that_copies_the_needle_is_refused(tmp_path):
    bad = GOOD.replace(
        "Which animal leaps across the idle hound?",
        "When the quick brown fox jumps over the lazy dog, what happens?",
    )
    (message,) = violations(tmp_path, bad)
    assert message.startswith("q.yaml:6: q1 course: copies 9 consecutive words of the needle")


def test_counts_are_checked_against_a_design(tmp_path):
    expected = Expected(questions=3, negatives={"uncovered": 1, "offtopic": 1}, min_documents=3)
    assert violations(tmp_path, GOOD, expected) == [
        "q.yaml: negatives: 0 uncovered negatives, expected 1",
        "q.yaml: questions: 2 questions, expected 3",
        "q.yaml: questions: needles come from 2 documents, expected ≥ 3",
    ]


def test_yaml_errors_carry_their_line(tmp_path):
    (message,) = violations(tmp_path, "questions:\n  - id: q1\n    doc: [unclosed\n")
    assert message.startswith("q.yaml:4: not valid YAML")


def test_a_missing_file(tmp_path):
    with pytest.raises(QuestionsError, match="file not found"):
        load_questions(tmp_path / "nope.yaml", DOCS)


@pytest.mark.corpus
def test_the_project_ground_truth_follows_the_chapter_design(docs, qset):
    assert len(qset.questions) == CHAPTER_DESIGN.questions == 32
    assert len(qset.queries()) == 64
    assert len({q.doc for q in qset.questions}) >= 15
    assert sum(n.kind == "uncovered" for n in qset.negatives) == 21


# --- needles found up to whitespace (a hard-wrapped document) -------------------------

WRAPPED = [
    Document("01-w", "Wrapped", "# Wrapped\n\nA tensor is an\narray of numbers,  of one\ttype.\n"),
    Document("02-b", "Beta", "# Beta\n\nEvery cat sleeps in the sun for hours.\n"),
]
WRAPPED_NEEDLE = "A tensor is an array of numbers, of one type."


def wrapped_file(tmp_path, needle: str = WRAPPED_NEEDLE):
    text = GOOD.replace("01-a", "01-w")
    return questions_file(
        tmp_path, text.replace("The quick brown fox jumps over the lazy dog.", needle)
    )


def test_a_hard_wrapped_needle_is_found_with_the_documents_offsets(tmp_path):
    qset = load_questions(wrapped_file(tmp_path), WRAPPED)
    q1, q2 = qset.questions
    assert q1.found == Found("01-w", 11, 11 + 46, exact=False)
    text = WRAPPED[0].text
    assert text[q1.found.start : q1.found.end] == "A tensor is an\narray of numbers,  of one\ttype."
    assert q2.found == Found("02-b", 8, 8 + 38, exact=True)  # an exact needle: as before
    assert (q1.fold, q2.fold) == (flat, None)
    assert [(n.line, n.id, n.field) for n in qset.notes] == [(5, "q1", "needle")]


@pytest.mark.parametrize(
    "needle",
    [
        "A tensor is an array of numbers, of one type!",  # a character, not a space
        "A tensor is anarray of numbers, of one type.",  # a space missing is not whitespace
        "A tensor is an array of numbers , of one type.",  # nor is a space added
    ],
)
def test_a_needle_differing_by_more_than_whitespace_is_refused(tmp_path, needle):
    with pytest.raises(QuestionsError) as err:
        load_questions(wrapped_file(tmp_path, needle), WRAPPED)
    assert [(v.line, v.id, v.field) for v in err.value.violations] == [(5, "q1", "needle")]
    assert err.value.notes == []


def test_a_wrapped_needle_found_twice_is_refused(tmp_path):
    docs = [
        WRAPPED[0],
        Document("03-c", "C", "# C\n\nA tensor is an array of numbers, of\none type.\n"),
    ]
    docs.append(WRAPPED[1])
    (message,) = violations_of(wrapped_file(tmp_path), docs)
    assert message.startswith("q.yaml:5: q1 needle: found 2 times up to whitespace")


def test_a_wrapped_needle_across_a_blank_line_is_refused(tmp_path):
    docs = [Document("01-w", "W", "# W\n\nA tensor is an array\n\nof numbers, of one type.\n")]
    docs.append(WRAPPED[1])
    assert violations_of(wrapped_file(tmp_path), docs) == [
        "q.yaml:5: q1 needle: spans a blank line of 01-w; a needle is one sentence"
    ]


def violations_of(path, docs) -> list[str]:
    with pytest.raises(QuestionsError) as err:
        load_questions(path, docs)
    return [v.render("q.yaml") for v in err.value.violations]


def test_a_needle_not_found_says_how_near_it_comes(tmp_path):
    # Case: found if case is ignored, at line 3 of the document.
    (case,) = violations_of(wrapped_file(tmp_path, WRAPPED_NEEDLE.replace("A t", "A T")), WRAPPED)
    assert case.startswith(
        "q.yaml:5: q1 needle: not found verbatim in the corpus; in 01-w at line 3"
    )
    # A later character: the first 30 (and more) are found, and where it differs is shown.
    near = WRAPPED_NEEDLE.replace("type.", "kind.")
    (late,) = violations_of(wrapped_file(tmp_path, near), WRAPPED)
    assert "its first 39 characters are at line 3" in late
    assert late.endswith("the needle goes on ' kind.', the document '\\ttype.\\n'")
    # Nothing near: the message is as before.
    (none,) = violations_of(wrapped_file(tmp_path, "Nothing like it."), WRAPPED)
    assert none == "q.yaml:5: q1 needle: not found verbatim in the corpus"


@pytest.mark.corpus
def test_the_labs_needles_are_found_verbatim_at_their_offsets(docs, qset):
    """Every needle of data/questions.yaml lies verbatim in its document, at the offsets the
    validator found before whitespace tolerance (its first occurrence), with no note."""
    text = {d.id: d.text for d in docs}
    expected = [
        Found(q.doc, text[q.doc].index(q.needle), text[q.doc].index(q.needle) + len(q.needle), True)
        for q in qset.questions
    ]
    assert [q.found for q in qset.questions] == expected
    assert qset.notes == () and all(q.fold is None for q in qset.questions)


def test_a_chunk_holding_a_wrapped_needle_up_to_whitespace_is_relevant(tmp_path):
    qset = load_questions(wrapped_file(tmp_path), WRAPPED)
    chunks = [c for d in WRAPPED for c in chunk_document(d, "C")]
    assert [c.doc_id for c in chunks] == ["01-w", "02-b"]
    assert WRAPPED_NEEDLE not in chunks[0].text  # verbatim, no chunk holds it
    assert relevant_chunks(chunks, qset.queries()) == [{0}, {1}, {0}, {1}]
    assert destroyed_questions(chunks, qset.questions) == []
    by_hand = [dataclasses.replace(q, found=None) for q in qset.questions]  # the exact rule
    assert [q.id for q in destroyed_questions(chunks, by_hand)] == ["q1"]
