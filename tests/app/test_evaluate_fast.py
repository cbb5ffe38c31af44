"""``rag-lab evaluate`` on the command line: fast by default, ``--lab`` for the six-strategy
lab, the report read by the gate either way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import HashEncoder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluation"))
from test_report import QUESTIONS, tiny_corpus

from rag_lab.app import cli, exits


@pytest.fixture
def evaluate(tmp_path, monkeypatch, capsys):
    import rag_lab.models.encoder

    monkeypatch.setattr(rag_lab.models.encoder, "Encoder", HashEncoder)
    docs = tiny_corpus(tmp_path / "docs")
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS)

    def run(out, *args):
        argv = ["evaluate", "--corpus", docs, "--questions", questions, "--out", out, *args]
        code = cli.main([str(a) for a in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_evaluate_is_fast_by_default_and_says_what_failed_first(evaluate, tmp_path):
    code, out, _ = evaluate(tmp_path / "fast")
    assert code == exits.OK
    titles = [line[:-1] for line in out.splitlines() if line.endswith(":") and " " in line]
    assert titles[:2] == ["found within k", "not found within 4, or refused"]
    assert "dense recall by strategy" not in titles and "dense, BM25 and hybrid" not in titles
    data = json.loads((tmp_path / "fast" / "report.json").read_text())
    assert data["lab"] is False and data["claims"] == []
    assert not (tmp_path / "fast" / "claims.json").exists()


@pytest.mark.model
def test_lab_adds_the_six_strategies_and_a_fast_run_passes_the_gate_against_it(evaluate, tmp_path):
    code, out, _ = evaluate(tmp_path / "lab", "--lab")
    assert code == exits.OK
    data = json.loads((tmp_path / "lab" / "report.json").read_text())
    assert data["lab"] is True and sorted(data["dense by strategy"]["ranks"]) == list("ABCDEF")
    assert json.loads((tmp_path / "lab" / "claims.json").read_text()) == data["claims"] != []
    assert "claims.json" in out
    baseline = tmp_path / "lab" / "report.json"
    code, out, _ = evaluate(tmp_path / "fast", "--baseline", baseline)
    assert code == exits.OK
    gate = json.loads((tmp_path / "fast" / "regression.json").read_text())
    assert gate["failed by"] == [] and gate["changes"] == []
    # A later fast run in the lab's folder leaves no ledger of the lab's behind.
    code, _, _ = evaluate(tmp_path / "lab")
    assert code == exits.OK and not (tmp_path / "lab" / "claims.json").exists()
