"""Fixtures shared by the command-line tests (``test_cli.py``, ``test_pdf_index.py``)."""

from __future__ import annotations

import pytest
from fakes import HashEncoder

from rag_lab.app import cli


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    """``rag-lab ARGS --index <tmp>`` with the stand-in encoder: (exit status, stdout, stderr)."""
    monkeypatch.setattr(cli, "Encoder", HashEncoder)
    monkeypatch.setenv("RAG_LAB_INDEX", str(tmp_path / "index.sqlite"))

    def call(*argv: str) -> tuple[int, str, str]:
        status = cli.main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return call
