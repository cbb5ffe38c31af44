"""Fixtures the app's hostile-input tables share."""

from __future__ import annotations

import pytest
from fakes import GOOD, HashEncoder, cli_runner, write


@pytest.fixture
def env(tmp_path, monkeypatch, capsys):
    """(run, docs, index path): ``run(*argv)`` gives (status, stdout, stderr), never raises."""
    run = cli_runner(HashEncoder, tmp_path, monkeypatch, capsys)
    return run, write(tmp_path / "docs", dict(GOOD)), tmp_path / "index.sqlite"
