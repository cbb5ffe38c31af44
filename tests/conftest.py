"""Shared fixtures: the real corpus and question file, loaded once per session; the CLI
runner; and the terminal's progress and time-per-stage lines during a run."""

from __future__ import annotations

import os
import sys

import pytest
from fakes import GOOD, HashEncoder, cli_runner, write

from rag_lab import paths, progress
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


@pytest.fixture
def env(tmp_path, monkeypatch, capsys):
    """(run, docs, index path) for the app's hostile-input tables: ``run(*argv)`` gives
    (status, stdout, stderr), never raises."""
    run = cli_runner(HashEncoder, tmp_path, monkeypatch, capsys)
    return run, write(tmp_path / "docs", dict(GOOD)), tmp_path / "index.sqlite"


# --- the terminal during `make test`: progress from notebook kernels, time per stage -------


class Stages:
    """A plugin: relays the kernels' progress lines to the terminal while nbval runs them,
    and ends the run with the time spent in each stage (the tests, then each notebook)."""

    def __init__(self, config) -> None:
        self.seconds: dict[str, float] = {}
        self._relay = None
        if not os.environ.get(progress.ENV):
            # The terminal itself, duplicated while pytest's capture is off (configure time),
            # so the relay's lines reach it even while a test's output is being captured.
            out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
            self._relayed = progress.relayed(out, every_s=60.0, others_only=True)
            self._relay = self._relayed.__enter__()

    def pytest_runtest_logstart(self, nodeid, location):
        if self._relay is not None:  # only the notebooks' kernels: tests run quiet
            self._relay.prefix = f"\n  {_stage(nodeid)}: "
            self._relay.muted = not _stage(nodeid).endswith(".ipynb")

    def pytest_runtest_logreport(self, report):
        stage = _stage(report.nodeid)
        self.seconds[stage] = self.seconds.get(stage, 0.0) + report.duration

    def pytest_terminal_summary(self, terminalreporter):
        if not self.seconds:
            return
        terminalreporter.section("time per stage (set-up, call and tear-down of its tests)")
        for stage, seconds in self.seconds.items():
            terminalreporter.write_line(f"{progress.duration(seconds):>14}  {stage}")
        total = sum(self.seconds.values())
        terminalreporter.write_line(f"{progress.duration(total):>14}  in all")

    def pytest_unconfigure(self, config):
        if self._relay is not None:
            self._relayed.__exit__(None, None, None)
            self._relay = None


def _stage(nodeid: str) -> str:
    """A notebook's file for its cells; one stage for everything under tests/."""
    path = nodeid.split("::", 1)[0]
    return path if path.endswith(".ipynb") else "unit, property and comparison tests"


RAM_FOLDER = "/dev/shm"
RAM_NEEDED = 8 * 2**30
"""The tests' temporary folders go to memory (``/dev/shm``) when it has this much room (a
whole session writes 2.2 GB there; a passing test's folder goes at the session's end, by
pyproject.toml's ``tmp_path_retention_policy``): on a
virtual disk mounted with ``discard``, each fsync of an index and each folder removed
costs milliseconds, and the app's tests write thousands (measured: tests/app/test_index.py,
test_ingest.py and test_hostile_round2_messages.py, 34 s on /tmp against 13 s here). What
the tests check is the same: a process killed mid-write is tested, not a machine losing power."""


def _temp_root_in_memory(config) -> None:
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return  # the caller chose
    try:
        room = os.statvfs(RAM_FOLDER)
    except OSError:
        return
    if room.f_bavail * room.f_frsize >= RAM_NEEDED and os.access(RAM_FOLDER, os.W_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = RAM_FOLDER  # pytest's documented variable


def pytest_configure(config):
    config.pluginmanager.register(Stages(config), "rag-lab-stages")
    _temp_root_in_memory(config)
    # The notebooks nbval runs write their figures and claims where the tests cannot change
    # the checkout's (make reproduce writes those); the kernels inherit this.
    if not os.environ.get(paths.FIGURES_ENV):
        import tempfile

        os.environ[paths.FIGURES_ENV] = tempfile.mkdtemp(prefix="rag-lab-figures-")
