"""Chroma's question file: span questions validated row by row, and telling the formats apart."""

from __future__ import annotations

import json

import pytest

from rag_lab.documents import Document
from rag_lab.questions import QuestionsError
from rag_lab.sources.chroma.questions import load_chroma_questions, questions_kind
from rag_lab.spans import Span, SpanQuestion

GOOD_YAML = "questions:\n  - id: q1\n    doc: talk\n"
"""Enough of the lab's YAML format to be told apart from Chroma's CSV (not validated here)."""

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
    yaml_file.write_text(GOOD_YAML, encoding="utf-8")
    assert questions_kind(csv_file) == "chroma-csv"  # the names mislead on purpose
    assert questions_kind(yaml_file) == "yaml"
    other = tmp_path / "other.txt"
    other.write_text("just: a mapping\n", encoding="utf-8")
    with pytest.raises(QuestionsError, match="neither a YAML question file"):
        questions_kind(other)
    with pytest.raises(QuestionsError, match="file not found"):
        questions_kind(tmp_path / "missing.csv")
