"""``--encoder``: the model of an index (``index``, recorded and stamped, the only one ``ask``
and ``evaluate --index`` use) and of a corpus evaluation (``evaluate --encoder``).

The rule and the refusals run with the hashing stand-in (tests/fakes.py); the tests marked
``model`` index, ask and evaluate with paraphrase-MiniLM-L3-v2 itself (the ``paraphrase``
extra) on a corpus of three files. all-mpnet-base-v2, which CI does not have, is refused
with what to run when it is absent (tests/models/test_mpnet.py loads it when present).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from importlib import metadata
from pathlib import Path

import pytest
from fakes import GOOD, HashEncoder, cli_runner, write

from rag_lab.app import commands, exits, index
from rag_lab.app.index import (
    EncoderMismatch,
    OneBackend,
    OnnxOnly,
    UnknownEncoder,
    resolve_encoder,
)
from rag_lab.app.store import SQLiteStore, Stamp
from rag_lab.models import mpnet, paraphrase_minilm
from rag_lab.models.encoder import DEFAULT_ENCODER, Encoder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluation"))
from test_report import QUESTIONS, tiny_corpus

L3 = "paraphrase-MiniLM-L3-v2"
L6 = DEFAULT_ENCODER
MPNET = "all-mpnet-base-v2"


def meta(path: Path, key: str) -> str | None:
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def stamped_models(path: Path) -> set[str]:
    with SQLiteStore(path, readonly=True) as store:
        return {r.stamp.model_name for r in store.documents() if r.stamp is not None}


# --- the rule -----------------------------------------------------------------------------

NO_INDEX, EMPTY, LEGACY = "no index", "empty index", "legacy index"


@pytest.fixture
def held(tmp_path, request):
    """A store whose meta records the encoder ``request.param`` (and its backend), an
    empty one, one of vectors that records no encoder (written before encoders were), or none."""
    if request.param == NO_INDEX:
        yield None
        return
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        store.set_meta("folder", "/docs")
        if request.param == LEGACY:
            store.set_meta(index.BACKEND_KEY, "torch")
            stamp = Stamp("sentence-transformers/all-MiniLM-L6-v2", "k" * 16, 384, "v", "r")
            with store.replacing("a") as writer:
                writer.finish("a.md", "a" * 64, "A", stamp)
        elif request.param != EMPTY:
            store.set_meta(index.ENCODER_KEY, request.param)
            store.set_meta(index.BACKEND_KEY, "onnx" if request.param == L3 else "torch")
        yield store


RULE = [
    # (--encoder, --backend, what the index holds, rebuild, (encoder, backend) or the refusal)
    (None, None, NO_INDEX, False, (L6, index.DEFAULT_BACKEND)),
    (L3, None, NO_INDEX, False, (L3, "onnx")),  # ONNX only: onnx without --backend
    (L3, "torch", NO_INDEX, False, OnnxOnly),
    (L3, "onnx-int8", EMPTY, False, OnnxOnly),
    (L3, None, EMPTY, False, (L3, "onnx")),
    (None, None, L3, False, (L3, "onnx")),  # ask, status, retry, index: the index's
    (None, "torch", L3, False, OnnxOnly),
    (L6, None, L3, False, EncoderMismatch),  # another one is refused, not preferred
    (L3, None, L6, False, EncoderMismatch),
    (L3, None, LEGACY, False, EncoderMismatch),  # vectors with no encoder recorded: L6's
    (None, None, LEGACY, False, (L6, "torch")),
    (L3, None, L6, True, (L3, "onnx")),  # a rebuild re-embeds everything: it may change it
    (L6, None, L3, True, (L6, "onnx")),  # ... and keeps the index's backend if it can
    (None, None, "bert-base", False, UnknownEncoder),
    (None, None, "bert-base", True, (L6, "torch")),  # a rebuild replaces an unknown one
    (MPNET, None, NO_INDEX, False, (MPNET, "torch")),  # torch only: torch without --backend
    (MPNET, "onnx", NO_INDEX, False, OneBackend),
    (None, "onnx-int8", MPNET, False, OneBackend),
    (None, None, MPNET, False, (MPNET, "torch")),
    (L3, None, MPNET, False, EncoderMismatch),
    (L3, None, MPNET, True, (L3, "onnx")),
    (MPNET, None, L3, True, (MPNET, "torch")),
]


@pytest.mark.parametrize(
    ("encoder", "backend", "held", "rebuild", "expected"), RULE, indirect=["held"], ids=str
)
def test_one_encoder_rule(encoder, backend, held, rebuild, expected):
    if isinstance(expected, type):
        with pytest.raises(expected) as caught:
            resolve_encoder(encoder, backend, held, rebuild=rebuild)
        if expected is OneBackend:  # the ONNX-only one has its own class, for its advice
            assert type(caught.value) is (OnnxOnly if L3 in (encoder, held) else OneBackend)
    else:
        assert resolve_encoder(encoder, backend, held, rebuild=rebuild) == expected


# --- the command, with the stand-in -------------------------------------------------------


class Named(HashEncoder):
    """The stand-in, named as ``Encoder`` is: ``name`` is the encoder's, and its fingerprint's."""

    def __init__(self, *, name: str = L6, backend: str = index.DEFAULT_BACKEND) -> None:
        super().__init__(f"test/{name}", backend=backend)


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    return cli_runner(Named, tmp_path, monkeypatch, capsys)


@pytest.fixture
def docs(tmp_path) -> Path:
    return write(tmp_path / "docs", GOOD)


def test_an_index_of_the_second_encoder_records_it_on_onnx(run, docs, tmp_path):
    status, out, _ = run("index", docs, "--encoder", L3)
    assert status == exits.OK
    assert f"(encoder: {L3}, onnx)" in out
    path = tmp_path / "index.sqlite"
    assert (meta(path, index.ENCODER_KEY), meta(path, index.BACKEND_KEY)) == (L3, "onnx")
    assert stamped_models(path) == {f"test/{L3}"}
    assert run("index", docs)[0] == exits.OK  # a later run keeps the index's encoder
    assert stamped_models(path) == {f"test/{L3}"}


def test_the_second_encoder_on_torch_is_refused_before_anything_is_written(run, docs, tmp_path):
    status, _, err = run("index", docs, "--encoder", L3, "--backend", "torch")
    assert status == exits.ERROR
    assert "--backend" in err and L3 in err and "torch" in err
    assert not (tmp_path / "index.sqlite").exists()


def test_another_encoder_is_refused_by_ask_evaluate_and_index_naming_both(run, docs, tmp_path):
    assert run("index", docs)[0] == exits.OK
    questions = tmp_path / "q.yaml"
    questions.write_text(
        "questions:\n  - id: q1\n    doc: b\n"
        '    needle: "Gradients flow backwards through the graph."\n'
        '    course: "Which way do gradients go?"\n    ticket: "backprop direction??"\n',
        encoding="utf-8",
    )
    index_file = tmp_path / "index.sqlite"
    evaluate = ["--index", index_file, "--corpus", docs, "--questions", questions]
    for argv in (
        ["ask", "which way do gradients flow?", "--encoder", L3],
        ["evaluate", *evaluate, "--out", tmp_path / "out", "--encoder", L3],
        ["index", docs, "--encoder", L3],
    ):
        status, _, err = run(*argv)
        assert status == exits.ERROR, argv
        assert "--encoder" in err and L6 in err and L3 in err, argv
        assert "--rebuild --encoder" in err, argv  # the one command that changes it
    assert meta(index_file, index.ENCODER_KEY) == L6
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_rebuild_changes_the_encoder_and_ask_then_uses_it(run, docs, tmp_path):
    assert run("index", docs, "--backend", "torch")[0] == exits.OK
    status, out, _ = run("index", docs, "--rebuild", "--encoder", L3)
    assert status == exits.OK
    path = tmp_path / "index.sqlite"
    assert (meta(path, index.ENCODER_KEY), meta(path, index.BACKEND_KEY)) == (L3, "onnx")
    assert stamped_models(path) == {f"test/{L3}"}
    status, out, _ = run("ask", "gradients flow backwards", "--cutoff", "0.9", "--json")
    assert status == exits.OK and json.loads(out)["answered"] is True


def test_the_one_backend_refusal_names_the_encoder_its_backend_and_the_one_asked(tmp_path):
    for encoder, asked, only in ((L3, "torch", "onnx"), (MPNET, "onnx-int8", "torch")):
        with pytest.raises(OneBackend) as caught:
            resolve_encoder(encoder, asked, None)
        err = caught.value
        assert (err.encoder, err.backend) == (encoder, asked)
        assert f"its backend is {only}, not {asked}" in str(err) and "--" not in str(err)


def test_an_absent_mpnet_is_refused_with_the_command_that_gets_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "cache"))  # where install() puts it
    monkeypatch.delenv(mpnet.ENV_VAR, raising=False)
    docs = write(tmp_path / "docs", GOOD)
    run = cli_runner(Encoder, tmp_path, monkeypatch, capsys)
    status, out, err = run("index", docs, "--encoder", MPNET)
    assert (status, out) == (exits.ERROR, "")
    assert mpnet.INSTALL in err and mpnet.ENV_VAR in err and "Traceback" not in err
    assert not (tmp_path / "index.sqlite").exists()
    monkeypatch.setenv(mpnet.ENV_VAR, str(tmp_path / "nowhere"))
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS)
    evaluate = ["--corpus", tiny_corpus(tmp_path / "corpus"), "--questions", questions]
    status, _, err = run("evaluate", *evaluate, "--out", tmp_path / "out", "--encoder", MPNET)
    assert status == exits.ERROR and not (tmp_path / "out").exists()
    assert f"${mpnet.ENV_VAR}={tmp_path / 'nowhere'}" in err and mpnet.INSTALL in err


def test_a_missing_extra_is_a_usage_error_naming_it(run, docs, tmp_path, monkeypatch):
    real = metadata.distribution

    def distribution(name: str):
        if name == paraphrase_minilm.PACKAGE:
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(commands.metadata, "distribution", distribution)
    status, _, err = run("index", docs, "--encoder", L3)
    assert status == exits.ERROR
    assert "rag_lab[paraphrase]" in err and "--encoder" in err and "Traceback" not in err
    assert not (tmp_path / "index.sqlite").exists()


# --- the command, with paraphrase-MiniLM-L3-v2 itself -------------------------------------


@pytest.mark.model
def test_index_and_ask_with_the_second_encoder(tmp_path, monkeypatch, capsys, docs):
    run = cli_runner(Encoder, tmp_path, monkeypatch, capsys)
    status, _, err = run("index", docs, "--encoder", L3)
    assert status == exits.OK, err
    path = tmp_path / "index.sqlite"
    assert meta(path, index.ENCODER_KEY) == L3
    assert stamped_models(path) == {paraphrase_minilm.NAME}
    status, out, err = run("ask", "which way do gradients flow?", "--cutoff", "0.99", "--json")
    assert status == exits.OK, err
    got = json.loads(out)
    assert got["answered"] is True and len(got["chunks"]) == 3  # every chunk of GOOD
    assert got["citations"][0]["document_id"] == "b"


@pytest.mark.model
def test_evaluate_stamps_the_encoder_and_the_gate_lists_its_change(tmp_path, capsys):
    from rag_lab.app import cli

    corpus = tiny_corpus(tmp_path / "docs")
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS)

    def evaluate(out: Path, *args) -> tuple[int, dict]:
        argv = ["evaluate", "--corpus", corpus, "--questions", questions, "--out", out, *args]
        code = cli.main([str(a) for a in argv])
        assert (out / "report.json").is_file(), capsys.readouterr().err
        return code, json.loads((out / "report.json").read_text(encoding="utf-8"))

    code, baseline = evaluate(tmp_path / "l6")
    assert code == exits.OK
    code, new = evaluate(
        tmp_path / "l3", "--encoder", L3, "--baseline", tmp_path / "l6/report.json"
    )
    assert baseline["encoder"]["name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert new["encoder"]["name"] == paraphrase_minilm.NAME
    assert new["stamps"]["encoder"] == paraphrase_minilm.paraphrase_fingerprint().key
    gate = json.loads((tmp_path / "l3" / "regression.json").read_text(encoding="utf-8"))
    assert [c["stamp"] for c in gate["changes"]] == ["encoder"]
    # Measured: L3 ranks t1's needle second, where L6 ranked it first (both of its queries).
    assert (code, gate["failed by"], [q["question"] for q in gate["lost"]]) == (
        exits.REGRESSED,
        ["lost answers"],
        ["t1"],
    )
    code, lab = evaluate(tmp_path / "l3-lab", "--encoder", L3, "--lab")
    assert code == exits.OK and lab["lab"] is True and lab["claims"] != []
    assert lab["stamps"]["encoder"] == new["stamps"]["encoder"]
