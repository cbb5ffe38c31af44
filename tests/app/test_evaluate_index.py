"""``rag-lab evaluate --index/--store``: a built index measured as it serves, on both stores.

The encoder is the hashing stand-in (tests/fakes.py): the ranks are whatever it gives, so the
tests check what must hold whatever the vectors are (every chunk is returned from an index
this small, a document that failed cannot be hit), and that the ranks are the ones the
index's own retriever returns.
"""

from __future__ import annotations

import json

import pytest
from fakes import GOOD, HashEncoder, write

from rag_lab.app import exits, index, lifecycle
from rag_lab.app.store import MilvusLocation
from rag_lab.chunking import containing

QUESTIONS = """\
questions:
  - id: q1
    doc: b
    needle: "Gradients flow backwards through the graph."
    course: "Which way do gradients go?"
    ticket: "backprop direction??"
  - id: q2
    doc: a
    needle: "A shape lists the axis lengths."
    course: "What does a shape list?"
    ticket: "shape meaning"
  - id: q3
    doc: bad
    needle: "Unreadable facts."
    course: "What is in the bad file?"
    ticket: "bad file contents"
negatives:
  - id: n1
    kind: offtopic
    query: "What is the capital of Peru?"
"""


@pytest.fixture(params=["sqlite", "milvus-lite"])
def built(request, tmp_path, run):
    """(the --index/--store flag, the corpus, the question file) of an index built from a
    corpus where ``bad.md`` is readable by ``evaluate`` but failed when it was indexed."""
    docs = write(tmp_path / "docs", {**GOOD, "bad.md": b"\xff\xfe\x00binary\x00"})
    if request.param == "sqlite":
        at = ["--index", tmp_path / "index.sqlite"]
    else:
        at = ["--store", MilvusLocation.parse(str(tmp_path / "index.db"))]
    status, _, err = run("index", docs, *at)
    assert status == exits.PARTIAL, err  # bad.md failed
    (docs / "bad.md").write_text("# Bad\n\nUnreadable facts.\n", encoding="utf-8")
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    return at, docs, questions


def _report(out_dir) -> dict:
    return json.loads((out_dir / "report.json").read_text(encoding="utf-8"))


def test_each_query_gets_the_rank_the_index_gives_it(built, run, tmp_path):
    at, docs, questions = built
    out = tmp_path / "report"
    status, stdout, err = run(
        "evaluate", *at, "--corpus", docs, "--questions", questions, "--out", out
    )
    assert status == exits.OK, err
    report = _report(out)
    served, deployed = report["served"], report["deployment"]
    assert served["documents"] == 3 and served["failed"] == ["bad"]
    assert served["unindexed"] == ["q3"]
    ranks = {q["id"]: q["rank"] for q in deployed["queries"]}
    assert set(ranks) == {f"q{i}/{p}" for i in (1, 2, 3) for p in ("course", "ticket")}
    assert ranks["q3/course"] is None and ranks["q3/ticket"] is None
    assert deployed["destroyed"] == ["q3"]  # no stored chunk of bad holds its needle
    # The index's own retriever, asked directly, puts each needle where the report says.
    with lifecycle.reading(at[1]) as store:
        retriever = index.retriever(store, HashEncoder())
        for qid, text, needle in [
            ("q1/course", "Which way do gradients go?", "Gradients flow backwards"),
            ("q2/ticket", "shape meaning", "A shape lists the axis lengths."),
        ]:
            hits = retriever.nearest(text, 100)
            assert ranks[qid] == containing([h.chunk for h in hits], needle)[0] + 1
    # Every chunk of an index this small is returned: the two indexed questions are hit.
    assert all(ranks[f"q{i}/{p}"] is not None for i in (1, 2) for p in ("course", "ticket"))
    metrics = served["metrics"]
    assert metrics["Recall@20"]["value"] == pytest.approx(4 / 6)
    assert metrics["Recall@20"]["lo"] < 4 / 6 < metrics["Recall@20"]["hi"]
    assert "the index, asked" in stdout and "q3" in (out / "report.md").read_text()


def test_two_deploys_of_an_index_are_paired_by_the_gate(built, run, tmp_path):
    at, docs, questions = built
    first, second = tmp_path / "first", tmp_path / "second"
    common = ("--corpus", docs, "--questions", questions)
    assert run("evaluate", *at, *common, "--out", first)[0] == exits.OK
    status, stdout, err = run(
        "evaluate", *at, *common, "--out", second, "--baseline", first / "report.json"
    )
    assert status == exits.OK, err
    assert "the stamps are the same" in stdout
    assert _report(first)["stamps"]["search"] == _report(second)["stamps"]["search"]
    # Against the corpus evaluated in memory, the comparison names the search that changed.
    memory = tmp_path / "memory"
    assert run("evaluate", *common, "--out", memory)[0] == exits.OK
    status, stdout, err = run(
        "evaluate", *at, *common, "--out", tmp_path / "third", "--baseline", memory / "report.json"
    )
    assert status in (exits.OK, exits.REGRESSED), err
    assert "changed search: – ->" in stdout


def test_what_a_built_index_cannot_be_asked_is_refused(built, run, tmp_path):
    at, docs, questions = built
    status, _, err = run("evaluate", *at, "--corpus", docs, "--questions", questions, "-h")
    assert status == 0
    status, _, err = run(
        "evaluate", *at, "--corpus", docs, "--questions", questions, "--strategy", "B"
    )
    assert status == exits.ERROR and "--strategy B: the index holds chunks of strategy E" in err
    chroma = tmp_path / "questions.csv"
    chroma.write_text("question,references,corpus_id\nq,[],docs\n", encoding="utf-8")
    status, _, err = run("evaluate", *at, "--corpus", docs, "--questions", chroma)
    assert status == exits.ERROR and "measured on a corpus, not a built index" in err
    missing = tmp_path / "nothing.sqlite"
    status, _, err = run("evaluate", "--index", missing, "--corpus", docs, "--questions", questions)
    assert status == exits.ERROR and str(missing) in err and not missing.exists()


def test_the_stamps_see_what_the_index_holds(built, run, tmp_path):
    """A document removed from the index changes its content stamps: the gate names them
    and fails on the answer lost with it, though the corpus and the chunker are the same."""
    at, docs, questions = built
    common = ("--corpus", docs, "--questions", questions)
    first = tmp_path / "first"
    assert run("evaluate", *at, *common, "--out", first)[0] == exits.OK
    stamps = _report(first)["stamps"]
    assert (stamps["index documents"], stamps["index failed"]) == (3, 1)
    assert stamps["index chunks"] >= 2 and len(stamps["index sha256"]) == 64
    kept = (docs / "a.md").read_bytes()
    (docs / "a.md").unlink()  # out of the folder while it is indexed again, back after
    status, _, err = run("index", docs, *at)
    assert status in (exits.OK, exits.PARTIAL), err
    (docs / "a.md").write_bytes(kept)
    second = tmp_path / "second"
    baseline = ("--baseline", first / "report.json")
    status, _stdout, err = run("evaluate", *at, *common, "--out", second, *baseline)
    assert status == exits.REGRESSED, err
    regression = json.loads((second / "regression.json").read_text(encoding="utf-8"))
    changed = {c["stamp"] for c in regression["changes"]}
    assert {"index failed", "index sha256"} <= changed  # a out; bad.md, now readable, in
    now = _report(second)["stamps"]
    assert (now["index documents"], now["index failed"]) == (3, 0)
    assert "corpus sha256" not in changed and "chunker" not in changed
    assert [q["question"] for q in regression["lost"]] == ["q2"]
    assert "index sha256" in regression["stamps compared"]
