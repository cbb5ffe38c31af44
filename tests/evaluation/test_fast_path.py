"""``rag-lab evaluate``'s fast path: the deployed configuration alone, embedding only the
chunking it serves; ``lab=True`` for the six-strategy lab; either report paired by the gate."""

from __future__ import annotations

import json

import pytest
from fakes import HashEncoder
from test_report import NEEDLE_1, QUESTIONS, tiny_corpus

from rag_lab import gate, progress
from rag_lab.chunking import chunk_all
from rag_lab.evaluation import regression, runner
from rag_lab.evaluation.deploy import Deployment
from rag_lab.evaluation.failures import Failures
from rag_lab.evaluation.power import Power
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.twins import Calibration
from rag_lab.sources.folder import load_folder


class RecordingEncoder(HashEncoder):
    """A :class:`HashEncoder` that keeps every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def encode(self, texts, *, progress=None):
        self.seen += list(texts)
        return super().encode(texts, progress=progress)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny corpus and its questions, written once: every run only reads them."""
    folder = tmp_path_factory.mktemp("tiny")
    corpus = tiny_corpus(folder / "docs")
    questions = folder / "questions.yaml"
    questions.write_text(QUESTIONS)
    return corpus, questions


def _run(tiny, out, **kwargs):
    corpus, questions = tiny
    encoder = RecordingEncoder()
    ev, written = runner.run(corpus, questions, out, encoder=encoder, progress=False, **kwargs)
    return encoder, ev, written


@pytest.fixture(scope="module")
def shared(tiny, tmp_path_factory):
    """``_run`` into a folder of its own, once per set of arguments in this module: the
    tests that only read a run's encoder, evaluation and files share it."""
    done = {}

    def run(**kwargs):
        key = tuple(sorted(kwargs.items()))
        if key not in done:
            done[key] = _run(tiny, tmp_path_factory.mktemp("run") / "out", **kwargs)
        return done[key]

    return run


ASKED = {
    "What hardware speeds up big multiplications of arrays?",
    "is my graphics card useful for matmuls",
    "Why do derivative values keep growing over repeated backward passes?",
    "grad keeps getting bigger each step??",
    "What is the best recipe for sourdough bread?",
    "How do convolutional layers share weights?",
}


@pytest.mark.parametrize("strategy", ["E", "A"])
def test_the_fast_path_embeds_only_the_served_strategy(tiny, shared, strategy):
    encoder, ev, written = shared(strategy=strategy)
    chunks = chunk_all(load_folder(tiny[0]))
    served = {c.text for c in chunks[strategy]}
    others = {c.text for s, cs in chunks.items() if s != strategy for c in cs} - served
    assert others  # the other chunkings differ from the served one: the check can fail
    assert set(encoder.seen) == served | ASKED
    assert not set(encoder.seen) & others
    assert [type(r) for r in ev.results] == [Failures, Calibration, Refusal, Power, Deployment]
    data = json.loads(written.json.read_text())
    assert data["lab"] is False and data["claims"] == []
    assert written.claims is None and not (written.json.parent / "claims.json").exists()
    assert "chunking" not in data and "dense by strategy" not in data and "systems" not in data
    assert data["deployment"]["strategy"] == strategy
    assert data["stamps"]["chunker"]["strategy"] == strategy
    # σ comes from dense, BM25 and hybrid on the served chunking, the only one embedded
    assert data["power"]["pairs"] == [["BM25", "dense"], ["hybrid", "BM25"], ["hybrid", "dense"]]
    assert [title for title, _ in ev.headline()] == [
        "found within k",
        f"not found within {gate.MAX_KEPT}, or refused",
        "twin-calibrated cutoff",
        "gate",
        "detectable difference",
    ]


def test_the_report_opens_on_what_failed_and_what_it_got_instead(tiny, tmp_path):
    # Blind cuts (A) cut t1's needle: both its phrasings fail, each with the chunk it got.
    _, ev, written = _run(tiny, tmp_path / "out", strategy="A", cutoff=2.0)
    failed = ev.result(Failures)
    rows = {f.query: f for f in failed.failures}
    assert {"t1/course", "t1/ticket"} <= set(rows)
    assert all(rows[q].destroyed and rows[q].rank is None for q in ("t1/course", "t1/ticket"))
    assert not any(f.refused for f in failed.failures)  # nothing is refused at a cutoff of 2
    deployed = ev.result(Deployment)
    top = dict(zip(deployed.queries, deployed.top, strict=True))
    assert rows["t1/course"].top == top["t1/course"]
    assert NEEDLE_1 not in rows["t1/course"].excerpt
    assert failed.found == tuple(
        sum(r is not None and r <= k for r in deployed.ranks) for k in deployed.ks
    )
    data = json.loads(written.json.read_text())
    assert [f["query"] for f in data["failures"]["failures"]] == [f.query for f in failed.failures]
    md = written.markdown.read_text()
    first = md.index("## 1 · What failed")
    assert first < md.index("## 2 · A cutoff calibrated on unanswerable twins, strategy A")
    assert md.index("## 4 · How many questions you need") < md.index("## 5 · The deployed")
    assert "The chapter's claims on this corpus" not in md


@pytest.mark.model
def test_lab_gives_the_six_strategy_sections_and_the_claims(tiny, shared):
    encoder, _, written = shared(lab=True)
    chunks = chunk_all(load_folder(tiny[0]))
    assert {c.text for cs in chunks.values() for c in cs} <= set(encoder.seen)
    data = json.loads(written.json.read_text())
    assert data["lab"] is True and data["claims"]
    assert written.claims is not None and written.claims.name == "claims.json"
    keys = ["failures", "chunking", "dense by strategy", "systems", "gate", "twins"]
    assert [k for k in data if k in (*keys, "deployment", "power")] == [
        *keys,
        "deployment",
        "power",
    ]
    assert sorted(data["dense by strategy"]["ranks"]) == list("ABCDEF")
    assert data["power"]["pairs"] == [["B", "A"], ["C", "A"], ["E", "A"], ["E", "C"], ["F", "E"]]


@pytest.mark.model
def test_the_gate_pairs_fast_with_fast_and_fast_with_lab(tiny, shared, tmp_path):
    _, _, fast = shared(strategy=runner.GATE_STRATEGY)  # the default deployment
    _, _, again = _run(tiny, tmp_path / "again")  # a second run of its own
    _, _, lab = shared(lab=True)
    base = regression.read_report(fast.json)
    twice = regression.compare(base, regression.read_report(again.json))
    mixed = regression.compare(regression.read_report(lab.json), base)
    for c in (twice, mixed):
        assert not c.failed and c.changes == () and c.questions == (2, 0, 0)
        assert c.flips == () and c.not_compared == ()
    names = [m.name for m in twice.metrics]
    assert names == [m.name for m in mixed.metrics]
    assert {"R@1", "R@4", "R@8", "R@20", "destroyed answers"} <= set(names)
    # The same deployment measured both ways: every metric the same in both runs.
    assert all(m.baseline == m.new for m in mixed.metrics)
    # The other way round too: a fast baseline, then a --lab run.
    back = regression.compare(base, regression.read_report(lab.json))
    assert not back.failed and [m.name for m in back.metrics] == names


@pytest.mark.parametrize("retriever", ["bm25", "hybrid"])
def test_the_deployed_retriever_is_measured(tiny, tmp_path, retriever):
    from rag_lab.evaluation.runs import rank_all
    from rag_lab.questions import load_questions
    from rag_lab.search import ChunkIndex

    _, ev, written = _run(tiny, tmp_path / "out", retriever=retriever, cutoff=2.0)
    deployed = ev.result(Deployment)
    corpus = load_folder(tiny[0])
    qset = load_questions(tiny[1], corpus, expected=None)
    index = ChunkIndex.build(chunk_all(corpus)["E"], HashEncoder(), tokenizer="unicode")
    rankings = rank_all(index, qset.queries(), HashEncoder())
    name = runner.RETRIEVERS[retriever]
    assert list(deployed.ranks) == rankings.ranks(index)[name]
    assert list(deployed.top) == [index.chunks[int(r[0])].id for r in rankings.by_system[name]]
    data = json.loads(written.json.read_text())
    assert data["stamps"]["retriever"] == retriever
    assert ev.result(Failures).retriever == retriever


def test_an_unknown_retriever_is_refused(tiny, tmp_path):
    with pytest.raises(ValueError, match="'sparse'"):
        _run(tiny, tmp_path / "out", retriever="sparse")


def test_progress_on_stderr_prints_lines_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(progress, "QUIET_S", 0.0)
    monkeypatch.setattr(progress, "EVERY_S", 0.0)
    monkeypatch.delenv(progress.ENV, raising=False)
    with progress.on_stderr(every_s=0.0):
        with progress.bar(739, "embedding", "text") as b:
            b.update(320)
            b.update(419)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines and all(line.startswith("embedding ") for line in lines)
    assert lines[-1].split(",")[0] == "embedding 739/739 text"
    assert "\r" not in err and "\x1b" not in err  # lines, not a bar redrawn in place


def test_the_fast_path_writes_the_served_strategys_trec_files_only(tiny, tmp_path):
    _run(tiny, tmp_path / "out", strategy="C", trec=tmp_path / "trec")
    written = sorted(p.name for p in (tmp_path / "trec").iterdir())
    assert written == ["BM25-C.run", "C.qrels", "dense-C.run", "hybrid-C.run"]
