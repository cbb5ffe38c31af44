"""Fixtures the app's hostile-input tables share."""

from __future__ import annotations

import pytest
from fakes import GOOD, HashEncoder, write

from rag_lab.app import cli


@pytest.fixture
def env(tmp_path, monkeypatch, capsys):
    """(run, docs, index path): ``run(*argv)`` gives (status, stdout, stderr), never raises."""
    monkeypatch.setattr(cli, "Encoder", HashEncoder)
    monkeypatch.setenv("RAG_LAB_LOCK_TIMEOUT", "0.2")
    path = tmp_path / "index.sqlite"
    monkeypatch.setenv("RAG_LAB_INDEX", str(path))
    docs = write(tmp_path / "docs", dict(GOOD))

    def run(*argv: str) -> tuple[int, str, str]:
        try:
            status = cli.main([str(a) for a in argv])
        except SystemExit as done:  # argparse's own refusals
            status = done.code
        out, err = capsys.readouterr()
        return status, out, err

    return run, docs, path
