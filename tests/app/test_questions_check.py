"""``rag-lab questions check FILE --corpus DIR``: exit 0 valid, 2 invalid with every problem
listed as FILE:LINE; needles found up to whitespace noted on stdout."""

from __future__ import annotations

import re

import pytest
from fakes import write

from rag_lab import paths
from rag_lab.app import exits
from rag_lab.sources.d2l import corpus_dir

DOCS = {
    "wrapped.md": "# Wrapped\n\nA tensor is an\narray of numbers of one type.\n",
    "cats.md": "# Cats\n\nEvery cat sleeps in the sun for hours.\n",
}

QUESTIONS = """\
questions:
  - id: q1
    doc: wrapped
    needle: "A tensor is an array of numbers of one type."
    course: "What is a tensor?"
    ticket: "tensor meaning"
  - id: q2
    doc: cats
    needle: "Every cat sleeps in the sun for hours."
    course: "Where do felines nap?"
    ticket: "my cat is always in the window, why"
negatives:
  - id: n1
    kind: offtopic
    query: "how do i renew my passport"
"""

WHERE = re.compile(r"rag-lab questions: (?P<file>[^:]+):(?P<line>\d+): (?P<id>\S+) (?P<field>\w+):")


@pytest.fixture
def corpus(tmp_path):
    return write(tmp_path / "docs", DOCS)


def check(run, tmp_path, corpus, text: str):
    questions = tmp_path / "questions.yaml"
    questions.write_text(text, encoding="utf-8")
    return questions, run("questions", "check", questions, "--corpus", corpus)


def test_a_valid_file_exits_0_and_notes_the_needle_found_up_to_whitespace(run, tmp_path, corpus):
    questions, (status, out, err) = check(run, tmp_path, corpus, QUESTIONS)
    assert (status, err) == (exits.OK, "")
    note, valid = out.splitlines()
    assert note.startswith(f"note: {questions}:4: q1 needle: ")
    assert valid.startswith(f"{questions}: valid against {corpus} (2 documents): 2 questions")


def test_an_invalid_file_exits_2_listing_every_problem_with_its_line(run, tmp_path, corpus):
    bad = QUESTIONS.replace("numbers of one type.", "numbers of one kind.")  # not whitespace
    bad = bad.replace("id: q2", "id: q1").replace("kind: offtopic", "kind: sideways")
    questions, (status, out, err) = check(run, tmp_path, corpus, bad)
    assert (status, out) == (exits.ERROR, "")
    listed = [m.groupdict() for m in map(WHERE.match, err.splitlines())]
    assert [(w["file"], w["line"], w["id"], w["field"]) for w in listed] == [
        (str(questions), "4", "q1", "needle"),
        (str(questions), "7", "q1", "id"),
        (str(questions), "14", "n1", "kind"),
    ]


def test_a_folder_that_is_not_there_exits_2(run, tmp_path, corpus):
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    status, out, err = run("questions", "check", questions, "--corpus", tmp_path / "nowhere")
    assert (status, out, len(err.splitlines())) == (exits.ERROR, "", 1)
    status, out, err = run("questions", "check", tmp_path / "none.yaml", "--corpus", corpus)
    assert (status, out) == (exits.ERROR, "")
    assert err.startswith(f"rag-lab questions: {tmp_path / 'none.yaml'}: ")


def test_check_and_its_corpus_are_required(run, tmp_path, corpus):
    assert run("questions")[0] == exits.ERROR
    assert run("questions", "check", tmp_path / "q.yaml")[0] == exits.ERROR


@pytest.mark.corpus
def test_the_labs_question_file_checks_valid_without_notes(run):
    status, out, err = run("questions", "check", paths.QUESTIONS, "--corpus", corpus_dir())
    assert (status, err) == (exits.OK, "")
    (valid,) = out.splitlines()
    assert valid.startswith(f"{paths.QUESTIONS}: valid against {corpus_dir()} (20 documents): ")
    assert valid.endswith("32 questions (64 queries), 30 negatives")
