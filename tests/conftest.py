"""Shared fixtures: the real corpus and question file, loaded once per session; the CLI runner."""

from __future__ import annotations

import pytest
from fakes import HashEncoder, cli_runner

from rag_lab import paths
from rag_lab.questions import CHAPTER_DESIGN, load_questions
from rag_lab.sources.d2l import CorpusError, load_corpus


@pytest.fixture(scope="session")
def docs():
    try:
        return load_corpus()
    except CorpusError as err:  # the message says where it looked and how to fix it
        pytest.fail(str(err))


@pytest.fixture(scope="session")
def qset(docs):
    return load_questions(paths.QUESTIONS, docs, CHAPTER_DESIGN)


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    """``rag-lab ARGS --index <tmp>`` with the stand-in encoder: (exit status, stdout, stderr).

    For the command-line tests (``tests/app``); a test module may define its own ``run``.
    """
    return cli_runner(HashEncoder, tmp_path, monkeypatch, capsys)
