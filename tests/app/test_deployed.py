"""Deploy what you measured: the index's strategy, the retriever and the stored cutoff are the
ones ``ask`` serves and ``evaluate --index`` measures.

The encoder is the hashing stand-in (tests/fakes.py); the corpus is small and in a temporary
folder, and every number is compared with what the lab's own functions give on it.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from fakes import GOOD, HashEncoder, write

from rag_lab.app import deployed, exits, index, lifecycle
from rag_lab.chunking import chunk_document, containing
from rag_lab.evaluation import twins
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.runs import rank_all
from rag_lab.questions import load_questions
from rag_lab.sources.folder import load_folder

# Three short sections: one blind chunk (A), three packed ones under headers (E).
SECTIONS = {
    "guide.md": "# Guide\n\n## Install\n\nRun the installer twice.\n\n## Keys\n\nRotate the API "
    "key monthly.\n\n## Logs\n\nLogs rotate at midnight.\n"
}
QUESTIONS = """\
questions:
  - id: q1
    doc: b
    needle: "Gradients flow backwards through the graph."
    course: "Which way do gradients flow?"
    ticket: "gradients backwards graph"
  - id: q2
    doc: a
    needle: "A shape lists the axis lengths."
    course: "What does a shape list?"
    ticket: "shape axis lengths"
  - id: q3
    doc: guide
    needle: "Rotate the API key monthly."
    course: "How often do I rotate the API key?"
    ticket: "api key rotate"
"""
# Words the chapter's ASCII tokenizer drops: BM25 ranks them only as Unicode words.
CYRILLIC = "# Ключи\n\nМеняйте ключ доступа каждый месяц.\n"
CYRILLIC_QUESTION = """\
  - id: q4
    doc: ru
    needle: "Меняйте ключ доступа каждый месяц."
    course: "Как часто менять ключ доступа?"
    ticket: "ключ месяц"
"""


@pytest.fixture
def corpus(tmp_path):
    """(the folder, the question file) of a small corpus."""
    docs = write(tmp_path / "docs", {**GOOD, **SECTIONS})
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    return docs, questions


def _json(out: str) -> dict:
    return json.loads(out)


def test_the_version_of_strategy_e_is_the_one_existing_indexes_hold():
    assert deployed.pipeline_version("E") == index.PIPELINE_VERSION
    assert index.PIPELINE_VERSION == "chunk=E/512/64;embed=minilm;v1"
    assert deployed.pipeline_version("A") == "chunk=A/512/64;embed=minilm;v1"


def test_index_strategy_a_holds_a_chunks_and_another_strategy_needs_rebuild(corpus, run):
    docs, _ = corpus
    status, stdout, err = run("index", docs, "--strategy", "A")
    assert status == exits.OK, err
    by_id = {d.id: d for d in load_folder(docs)}
    with lifecycle.reading(index.default_path()) as store:
        counts = {r.id: r.chunk_count for r in store.documents()}
        assert store.meta(deployed.STRATEGY_KEY) == "A"
        stamps = {r.stamp.pipeline_version for r in store.documents()}
    assert counts == {i: len(chunk_document(d, "A")) for i, d in by_id.items()}
    assert counts["guide"] == 1 and len(chunk_document(by_id["guide"], "E")) == 3
    assert stamps == {"chunk=A/512/64;embed=minilm;v1"}
    status, stdout, _ = run("status", "--json")
    assert status == exits.OK and _json(stdout)["strategy"] == "A"
    assert _json(stdout)["counts"] == {"indexed": 4, "failed": 0, "stale": 0}
    # Another strategy without --rebuild: refused, the index untouched.
    status, _, err = run("index", docs, "--strategy", "E")
    assert status == exits.ERROR and "--rebuild" in err
    assert _json(run("status", "--json")[1])["strategy"] == "A"
    # No --strategy: the index's own.
    assert run("index", docs)[0] == exits.OK
    assert _json(run("status", "--json")[1])["chunks"] == sum(counts.values())
    # With --rebuild: every document re-chunked by E.
    status, _, err = run("index", docs, "--strategy", "E", "--rebuild")
    assert status == exits.OK, err
    got = _json(run("status", "--json")[1])
    assert got["strategy"] == "E"
    assert got["chunks"] == sum(len(chunk_document(d, "E")) for d in by_id.values()) == 7


def test_ask_uses_the_stored_cutoff_unless_given(corpus, run):
    docs, _ = corpus
    assert run("index", docs, "--cutoff", "0")[0] == exits.OK
    status, stdout, _ = run("ask", "rotate the API key", "--json")
    got = _json(stdout)
    assert status == exits.OK and got["answered"] is False
    assert got["served"]["cutoff"]["source"] == "stored"
    assert got["served"]["cutoff"]["value"] == 0.0
    assert got["served"]["cutoff"]["stored"]["source"] == "given"
    status, stdout, _ = run("ask", "rotate the API key", "--json", "--cutoff", "2")
    got = _json(stdout)
    assert got["answered"] is True and got["served"]["cutoff"] == {
        "value": 2.0,
        "source": "given",
        "stored": None,
    }
    assert len(got["chunks"]) == 4
    record = _json(run("status", "--json")[1])["cutoff"]
    assert record["cutoff"] == 0.0 and record["source"] == "given"
    # A rebuild with the same strategy keeps it; an index with none stored uses the default.
    assert run("index", docs, "--rebuild")[0] == exits.OK
    assert _json(run("status", "--json")[1])["cutoff"]["cutoff"] == 0.0
    fresh = docs.parent / "fresh.sqlite"
    assert run("index", docs, "--index", fresh)[0] == exits.OK
    got = _json(run("ask", "rotate the API key", "--json", "--index", fresh)[1])
    assert got["served"]["cutoff"] == {"value": 0.675, "source": "default", "stored": None}


@pytest.mark.parametrize("kind", ["bm25", "hybrid"])
def test_ask_serves_the_ranking_the_lab_and_evaluate_score(corpus, run, tmp_path, kind):
    docs, questions = corpus
    (docs / "ru.md").write_text(CYRILLIC, encoding="utf-8")
    questions.write_text(QUESTIONS + CYRILLIC_QUESTION, encoding="utf-8")
    assert run("index", docs)[0] == exits.OK
    out = tmp_path / "report"
    common = ("--corpus", docs, "--questions", questions, "--out", out)
    status, _, err = run("evaluate", "--index", index.default_path(), *common, "--retriever", kind)
    assert status == exits.OK, err
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["stamps"]["retriever"] == kind
    assert report["stamps"]["cutoff source"] == "default"
    assert report["stamps"]["chunker"]["strategy"] == "E"
    scored = {q["id"]: q for q in report["deployment"]["queries"]}
    # The lab's own ranking of the same corpus (chunks in the same order: by document id).
    doc_list = load_folder(docs)
    qset = load_questions(questions, doc_list, expected=None)
    lab = Lab.of(doc_list, qset, HashEncoder(), tokenizer=deployed.TOKENIZER)
    chunks = lab.index("E").chunks
    lab_ranks = rank_all(lab.index("E"), lab.queries, lab.encoder).by_system[deployed.SYSTEMS[kind]]
    with lifecycle.reading(index.default_path()) as store:
        stored = {c.id: c for c in store.chunks([d.id for d in doc_list])[0]}
    for q, lab_ranking in zip(lab.queries, lab_ranks, strict=True):
        status, stdout, err = run(
            "ask", q.text, "--json", "--retriever", kind, "-k", "100", "--cutoff", "2"
        )
        got = _json(stdout)
        assert status == exits.OK and got["served"]["retriever"] == kind, err
        assert got["chunks"] == [chunks[i].id for i in lab_ranking][:100]
        assert got["chunks"][0] == scored[q.id]["top chunk"]
        held = containing([stored[c] for c in got["chunks"]], q.needle, q.fold)
        assert scored[q.id]["rank"] == (held[0] + 1 if held else None)
    # evaluate on the corpus (nothing built) scores the same ranks: the same BM25 words
    memory = tmp_path / "memory"
    on_corpus = (*common[:4], "--out", memory, "--retriever", kind)
    assert run("evaluate", *on_corpus)[0] == exits.OK
    report = json.loads((memory / "report.json").read_text(encoding="utf-8"))
    assert report["stamps"]["bm25 tokenizer"] == deployed.TOKENIZER
    assert {q["id"]: q["rank"] for q in report["deployment"]["queries"]} == {
        i: q["rank"] for i, q in scored.items()
    }


def test_calibrate_stores_the_twin_cutoff_that_ask_then_uses(corpus, run, tmp_path):
    docs, questions = corpus
    assert run("index", docs)[0] == exits.OK
    out = tmp_path / "report"
    common = ("--corpus", docs, "--questions", questions, "--out", out)
    where = ("--index", index.default_path())
    assert run("evaluate", *common, "--calibrate")[0] == exits.ERROR  # no index
    assert run("evaluate", *where, *common, "--calibrate", "--cutoff", "0.5")[0] == exits.ERROR
    status, _, err = run("evaluate", *where, *common, "--calibrate")
    assert status == exits.OK, err
    # The cutoff the corpus evaluation calibrates on the same chunks.
    doc_list = load_folder(docs)
    qset = load_questions(questions, doc_list, expected=None)
    expected = twins.calibration(Lab.of(doc_list, qset, HashEncoder()), "E")
    assert expected.met  # else nothing is stored
    record = _json(run("status", "--json")[1])["cutoff"]
    assert record["cutoff"] == expected.cutoff
    assert record["source"] == "calibrated" and record["method"] == "twins"
    assert record["held-out questions"] == expected.held_out.questions == 2
    assert record["questions sha256"] == hashlib.sha256(questions.read_bytes()).hexdigest()
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["stamps"]["cutoff source"] == "stored"
    assert report["stamps"]["cutoff"] == expected.cutoff
    got = _json(run("ask", "rotate the API key", "--json")[1])
    assert got["served"]["cutoff"]["source"] == "stored"
    assert got["served"]["cutoff"]["value"] == expected.cutoff
    assert got["served"]["cutoff"]["stored"]["method"] == "twins"


def test_calibrate_needs_a_built_index_to_store_into(corpus, run, tmp_path):
    docs, questions = corpus
    common = ("--corpus", docs, "--questions", questions, "--out", tmp_path / "r")
    status, _, err = run("evaluate", *common, "--calibrate")
    assert status == exits.ERROR and "--calibrate" in err and not (tmp_path / "r").exists()


def test_a_damaged_record_is_a_problem_status_check_names(corpus, run):
    docs, _ = corpus
    assert run("index", docs)[0] == exits.OK
    with lifecycle.writing(index.default_path()) as store:
        store.set_meta(deployed.CUTOFF_KEY, '{"cutoff": 3}')
        store.set_meta(deployed.STRATEGY_KEY, "Z")
    status, stdout, _ = run("status", "--check", "--json")
    assert status == exits.ERROR
    assert [p.split(":")[0] for p in _json(stdout)["problems"]] == ["meta strategy", "meta cutoff"]
    assert run("ask", "rotate the API key")[0] == exits.ERROR


def test_retry_chunks_by_the_index_strategy(corpus, run):
    docs, _ = corpus
    (docs / "late.md").write_bytes(b"\xff\xfe\x00binary\x00")
    assert run("index", docs, "--strategy", "A")[0] == exits.PARTIAL
    (docs / "late.md").write_text(SECTIONS["guide.md"], encoding="utf-8")
    status, _, err = run("retry")
    assert status == exits.OK, err
    with lifecycle.reading(index.default_path()) as store:
        late = store.document("late")
    assert late.chunk_count == 1  # A's one blind chunk, not E's three
    assert late.stamp.pipeline_version == "chunk=A/512/64;embed=minilm;v1"


def test_corpus_match_counts_each_document_by_its_bytes(run, tmp_path):
    """An index of the folder as it was, against the folder now: ``b.md`` changed, ``e.md``
    gone, ``f.md`` new; an empty ``z.md`` failed in both (its sha256 the same)."""
    docs = write(tmp_path / "docs", {**GOOD, "e.md": "# Epsilon\n\nGone.\n", "z.md": ""})
    assert run("index", docs)[0] == exits.PARTIAL  # z.md is empty
    with lifecycle.reading(tmp_path / "index.sqlite") as store:
        assert deployed.corpus_match(store, docs) == deployed.CorpusMatch(5, 5, 0, 0, 0)
        (docs / "b.md").write_text("# Beta\n\nChanged.\n")
        (docs / "e.md").unlink()
        (docs / "f.md").write_text("# Phi\n\nNew.\n")
        got = deployed.corpus_match(store, docs)
    assert got == deployed.CorpusMatch(5, 3, 1, 1, 1) and got.differ == 3


def test_an_index_of_the_labs_corpus_matches_it(run, tmp_path):
    from rag_lab.sources.d2l import corpus_dir

    assert run("index", corpus_dir())[0] == exits.OK
    with lifecycle.reading(tmp_path / "index.sqlite") as store:
        got = deployed.corpus_match(store, corpus_dir())
    assert got.documents > 0 and got.same == got.documents and got.differ == 0
