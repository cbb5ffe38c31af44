from __future__ import annotations

import json
import textwrap

import pytest

from rag_lab.documents import Document
from rag_lab.questions import (
    CHAPTER_DESIGN,
    Expected,
    QuestionsError,
    Span,
    SpanQuestion,
    load_chroma_questions,
    load_questions,
    questions_kind,
)

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


# --- span questions: Chroma's questions_df.csv ----------------------------------------------

SPAN_DOCS = [
    Document("talk", "talk", "Hello there.\nGeneral Kenobi.\n", format="plain"),
    Document("notes", "notes", "# not a heading\nplain text", format="plain"),
]


def _csv(tmp_path, body: str, name: str = "questions_df.csv"):
    path = tmp_path / name
    path.write_text("question,references,corpus_id\n" + body, encoding="utf-8")
    return path


def _ref(*refs: str | int) -> str:
    """A references cell from (content, start, end, ...), quoted as pandas writes it."""
    items = [
        {"content": c, "start_index": s, "end_index": e}
        for c, s, e in zip(refs[::3], refs[1::3], refs[2::3], strict=True)
    ]
    return '"' + json.dumps(items).replace('"', '""') + '"'


def test_a_chroma_csv_loads_into_span_questions(tmp_path):
    # "General Kenobi." starts after "Hello there.\n" (13 characters) and is 15 long.
    two = _ref("Hello there.", 0, 12, "General Kenobi.", 13, 28)
    path = _csv(tmp_path, f'Who?,{two},talk\n"What, plainly?",{_ref("plain", 16, 21)},notes\n')
    questions = load_chroma_questions(path, SPAN_DOCS)
    assert questions == [
        SpanQuestion("0", "Who?", (Span("talk", 0, 12), Span("talk", 13, 28))),
        SpanQuestion("1", "What, plainly?", (Span("notes", 16, 21),)),
    ]
    assert len(Span("talk", 13, 28)) == 15
    path.write_text("\ufeff" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_chroma_questions(path, SPAN_DOCS) == questions  # a BOM is not a column
    assert questions_kind(path) == "chroma-csv"


def test_every_bad_row_is_reported_at_once_with_its_physical_line(tmp_path):
    body = (
        f'"A question\nover two lines",{_ref("Hello there.", 0, 12)},talk\n'  # lines 2-3, fine
        f"Bad JSON?,[not json,talk\n"  # line 4
        f"Unknown corpus?,{_ref('x', 0, 1)},nowhere\n"  # line 5
        f"Out of range?,{_ref('x', 20, 99)},talk\n"  # line 6
        f"Wrong content?,{_ref('Hello', 13, 18)},talk\n"  # line 7
        f'"Two\n\nblank-ish lines",{_ref("Hello", 0, 5)},talk,extra\n'  # lines 8-10
        f"Last one?,{_ref('General', 13, 20)},talk\n"  # line 11, fine
    )
    with pytest.raises(QuestionsError) as err:
        load_chroma_questions(_csv(tmp_path, body), SPAN_DOCS)
    rendered = [v.render("q.csv") for v in err.value.violations]
    assert rendered[0].startswith("q.csv:4: 1 references: not valid JSON: ")
    assert rendered[1:] == [
        "q.csv:5: 2 corpus_id: no document 'nowhere' in the corpus",
        "q.csv:6: 3 references[0]: offsets [20:99] out of range for talk (29 chars)",
        "q.csv:7: 4 references[0]: content differs from talk[13:18]: 'Hello' != 'Gener'",
        "q.csv:8: 5: 4 fields, expected 3",
    ]


def test_missing_and_unknown_columns_are_named(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(",question,corpus_id\n0,Why?,talk\n", encoding="utf-8")
    with pytest.raises(QuestionsError) as err:
        load_chroma_questions(path, SPAN_DOCS)
    assert [v.render("q.csv") for v in err.value.violations] == [
        "q.csv:1: references: missing column",
        "q.csv:1: '': unknown column",
    ]


def test_malformed_references_are_each_explained(tmp_path):
    cells = [
        '"{""content"": ""x""}"',  # an object, not a list
        '"[{""content"": ""Hello"", ""start_index"": ""0"", ""end_index"": 5}]"',  # a string
        '"[{""content"": ""Hello"", ""start_index"": 0}]"',  # no end_index
    ]
    body = "".join(f"Q{i}?,{cell},talk\n" for i, cell in enumerate(cells))
    with pytest.raises(QuestionsError) as err:
        load_chroma_questions(_csv(tmp_path, body), SPAN_DOCS)
    assert [v.render("q.csv") for v in err.value.violations] == [
        "q.csv:2: 0 references: must be a non-empty JSON list",
        "q.csv:3: 1 references[0]: start_index and end_index must be integers, got '0', 5",
        "q.csv:4: 2 references[0]: must be an object with content, start_index, end_index",
    ]


def test_the_kind_of_a_question_file_is_read_from_its_content(tmp_path):
    csv_file = _csv(tmp_path, f"Who?,{_ref('Hello there.', 0, 12)},talk\n", name="q.yaml")
    yaml_file = tmp_path / "questions.csv"
    yaml_file.write_text(GOOD, encoding="utf-8")
    assert questions_kind(csv_file) == "chroma-csv"  # the names mislead on purpose
    assert questions_kind(yaml_file) == "yaml"
    other = tmp_path / "other.txt"
    other.write_text("just: a mapping\n", encoding="utf-8")
    with pytest.raises(QuestionsError, match="neither a YAML question file"):
        questions_kind(other)
    with pytest.raises(QuestionsError, match="file not found"):
        questions_kind(tmp_path / "missing.csv")
