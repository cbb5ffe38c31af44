from __future__ import annotations

import textwrap

import pytest

from rag_lab.documents import Document
from rag_lab.questions import CHAPTER_DESIGN, Expected, QuestionsError, load_questions

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


def write(tmp_path, text: str):
    path = tmp_path / "q.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def violations(tmp_path, text: str, expected=None) -> list[str]:
    with pytest.raises(QuestionsError) as err:
        load_questions(write(tmp_path, text), DOCS, expected)
    return [v.render("q.yaml") for v in err.value.violations]


def test_a_good_file_loads_into_queries(tmp_path):
    qset = load_questions(write(tmp_path, GOOD), DOCS)
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
