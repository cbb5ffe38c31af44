from __future__ import annotations

import json

import pytest
from fakes import GOOD, HashEncoder, write

from rag_lab.app import cli, commands, exits


@pytest.fixture
def docs(tmp_path):
    return write(tmp_path / "docs", {**GOOD, "broken.md": b"\xff\xfe", "empty.md": b""})


def test_help_lists_the_commands_and_the_three_steps(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for command in ("index", "status", "retry", "ask", "evaluate"):
        assert f"\n    {command} " in out
    assert "rag-lab evaluate --corpus docs/ --questions questions.yaml" in out


def test_index_reports_failures_and_exits_1(run, docs):
    status, out, _ = run("index", str(docs))
    assert status == exits.PARTIAL
    assert "3 indexed, 0 unchanged, 2 failed, 0 stale, 0 removed" in out
    assert "  failed broken.md: not UTF-8: invalid start byte at byte 0" in out
    assert "  failed empty.md: empty file" in out
    _, out, _ = run("index", str(docs))
    assert "0 indexed, 3 unchanged, 2 failed" in out


def test_status_counts_and_lists_failures(run, docs):
    run("index", str(docs))
    status, out, _ = run("status")
    assert status == exits.OK
    assert "5 documents: 3 indexed, 2 failed, 0 stale;" in out
    assert "  empty.md: empty file" in out
    status, out, _ = run("status", "--json")
    data = json.loads(out)
    assert data["counts"] == {"indexed": 3, "failed": 2, "stale": 0}
    assert data["failed"] == {
        "broken": "not UTF-8: invalid start byte at byte 0",
        "empty": "empty file",
    }
    assert data["stamps"][0]["documents"] == 3
    assert data["stamps"][0]["pipeline_version"] == "chunk=E/512/64;embed=minilm;v1"


def test_ask_prints_the_sources_with_locators(run, docs):
    run("index", str(docs))
    status, out, err = run("ask", "gradients flow backwards", "--cutoff", "0.9")
    assert status == exits.OK
    lines = out.splitlines()
    assert lines[0].startswith("3 sources under cosine distance 0.9; the prompt is ")
    assert lines[1].startswith("[1] ") and "  b#char=8,51  Beta — (introduction)" in lines[1]
    assert lines[2] == "    Gradients flow backwards through the graph."
    assert "2 documents failed to index and are not searched" in err


def test_ask_refuses_when_nothing_is_close(run, docs):
    run("index", str(docs))
    status, out, _ = run("ask", "zebra migration", "--cutoff", "0.05")
    assert status == exits.OK
    assert out.startswith('NO ANSWER: nothing under cosine distance 0.05 for "zebra migration"')
    _, out, _ = run("ask", "zebra migration", "--cutoff", "0.05", "--json")
    assert json.loads(out)["answered"] is False


def test_ask_json_carries_the_citations(run, docs):
    run("index", str(docs))
    _, out, _ = run("ask", "axis lengths of a shape", "--cutoff", "0.9", "-k", "1", "--json")
    [citation] = json.loads(out)["citations"]
    assert citation["href"] == "a#char=43,74"
    assert citation["quote"] == "A shape lists the axis lengths."
    assert GOOD["a.md"][43:74] == citation["quote"]


def test_an_index_of_another_model_is_refused_with_one_line(run, docs, monkeypatch):
    run("index", str(docs))
    monkeypatch.setattr(
        commands, "Encoder", lambda **kw: HashEncoder(name="test/upgraded-model", **kw)
    )
    status, out, err = run("ask", "tensors")
    assert (status, out) == (exits.ERROR, "")
    [line] = err.splitlines()
    assert line.startswith("rag-lab ask: refusing to search: 3 of 5 documents are stale")
    assert "model_name: test/hash-bow → test/upgraded-model" in line
    assert line.endswith(
        f"Stale: a, b, sub/c. Rebuild them: rag-lab index {docs.resolve()} --rebuild"
    )
    _, out, _ = run("status")
    assert "5 documents: 0 indexed, 2 failed, 3 stale;" in out
    status, out, _ = run("index", str(docs), "--rebuild")
    assert (status, out.splitlines()[1]) == (
        exits.PARTIAL,
        "3 indexed, 0 unchanged, 2 failed, 0 stale, 0 removed",
    )
    assert run("ask", "tensors")[0] == exits.OK


def test_retry_after_a_fix(run, docs):
    run("index", str(docs))
    (docs / "broken.md").write_text("# Fixed\n\nReadable now.\n")
    status, out, _ = run("retry")
    assert (status, out.splitlines()[0]) == (
        exits.PARTIAL,
        "1 indexed, 0 unchanged, 1 failed, 0 stale, 0 removed",
    )
    (docs / "empty.md").write_text("Not empty any more.\n")
    status, out, _ = run("retry")
    assert (status, out.splitlines()[0]) == (
        exits.OK,
        "1 indexed, 0 unchanged, 0 failed, 0 stale, 0 removed",
    )


def test_commands_on_a_missing_index_fail_cleanly(run, tmp_path):
    for command in (["status"], ["ask", "x"], ["retry"]):
        status, out, err = run(*command)
        assert (status, out) == (exits.ERROR, "")
        where = tmp_path / "index.sqlite"
        assert err == f"rag-lab {command[0]}: no index at {where}: run rag-lab index DIR first\n"


def test_a_folder_that_does_not_exist(run, tmp_path):
    status, _, err = run("index", str(tmp_path / "nowhere"))
    assert status == exits.ERROR
    assert err == f"rag-lab index: {tmp_path / 'nowhere'}: not a folder\n"


def test_evaluate_reports_each_problem_of_a_question_file_with_its_line(run, docs, tmp_path):
    (docs / "broken.md").unlink()
    (docs / "empty.md").unlink()
    questions = tmp_path / "q.yaml"
    questions.write_text(
        "questions:\n"
        "  - id: q1\n"
        "    doc: a\n"
        '    needle: "Not in the corpus."\n'
        '    course: "Where is it?"\n'
        '    ticket: "cant find it"\n'
        "negatives:\n"
        "  - id: n1\n"
        "    kind: weird\n"
        '    query: "What is the capital of Peru?"\n'
    )
    status, out, err = run("evaluate", "--corpus", str(docs), "--questions", str(questions))
    assert (status, out) == (exits.ERROR, "")
    assert err.splitlines() == [
        f"rag-lab evaluate: {questions}:4: q1 needle: not found verbatim in the corpus",
        f"rag-lab evaluate: {questions}:9: n1 kind: 'weird' is not one of uncovered, offtopic",
    ]


def test_evaluate_names_the_unreadable_files(run, docs, tmp_path):
    status, _, err = run("evaluate", "--corpus", str(docs), "--questions", str(tmp_path / "q.yaml"))
    assert status == exits.ERROR
    assert err.splitlines() == [
        f"rag-lab evaluate: {docs / 'broken.md'}: not UTF-8: invalid start byte at byte 0",
        f"rag-lab evaluate: {docs / 'empty.md'}: empty file",
    ]


def test_evaluate_needs_questions_for_a_corpus(run, docs):
    status, _, err = run("evaluate", "--corpus", str(docs))
    assert (status, err) == (
        exits.ERROR,
        "rag-lab evaluate: --questions FILE is required with --corpus DIR\n",
    )


def test_bad_arguments_exit_2(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["ask"])
    assert done.value.code == 2
    assert "the following arguments are required: question" in capsys.readouterr().err
