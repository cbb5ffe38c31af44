"""The package as a team installs it: the wheel with no extras, in a fresh venv, runs the
README's CI job on a small folder: ``rag-lab index``, ``ask``, then ``evaluate`` of the
index twice, the second against the first with ``--baseline`` (the gate passes: exit 0,
a JUnit file).

Opt-in (``RAG_LAB_TEST_INSTALL=1``), so ``make test`` and CI skip it, said in the summary:
the venv is 1.8 GB (torch alone 1.2 GB), and on the 2 shared cores of this machine (load 7-9)
building the wheel and installing it took 1 min 48 s and the job 1 min 14 s (every import
compiles into an empty bytecode cache; the ONNX graph is exported into an empty model cache):
3 min 08 s: at CI's 3-minute budget for one test, and 60 % more on a ``make test`` of
5 minutes. Cold and warm cost about the same here: fetching the 66 wheels (PyPI and the
machine's local mirrors) took 12 s the first time; the rest is unpacking and importing.
``tests/test_wheel.py`` is the fast tier: the same wheel and commands on the lab's venv.

Run it with ``RAG_LAB_TEST_INSTALL=1 .venv/bin/python -m pytest tests/packaging``; it needs
python3.11's venv module and the package index (PyPI, or the machine's pip configuration),
and installs the exact versions of ``requirements.lock``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_job import rag_lab_commands
from packaging.utils import canonicalize_name
from test_wheel import DOCS, QUESTIONS

from rag_lab import paths

pytestmark = [
    pytest.mark.install,
    pytest.mark.model,
    pytest.mark.skipif(
        os.environ.get("RAG_LAB_TEST_INSTALL") != "1",
        reason="opt-in (RAG_LAB_TEST_INSTALL=1): a fresh 1.8 GB venv, ~3 min on 2 cores",
    ),
]

EXTRAS_ONLY = ("jupyterlab", "papermill", "nbval", "pytest", "pymilvus", "pypdfium2", "ruff")
"""Packages that only an extra brings in: none of them may be in a base install."""


def _clean_env() -> dict[str, str]:
    """The environment without a path that would show pip or the command another rag_lab
    (PYTHONPATH at a checkout: its egg-info would count as rag_lab installed) or cache."""
    drop = ("PYTHONPATH", "PYTHONHOME", "RAG_LAB_CACHE", "RAG_LAB_INDEX", "RAG_LAB_PROGRESS")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _lock() -> dict[str, str]:
    lock = {}
    for line in (paths.ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            lock[canonicalize_name(name)] = version
    return lock


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv holding the wheel and its base dependencies, at the lock's versions."""
    where = tmp_path_factory.mktemp("install")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(where), str(paths.ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = where.glob("rag_lab-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where / "venv")], check=True)
    python = where / "venv" / "bin" / "python"
    # The lab's pip installs into the new venv; --no-compile: bytecode is written on import.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
         "-c", str(paths.ROOT / "requirements.lock"), str(wheel)],
        capture_output=True, text=True, env=_clean_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return where / "venv"


def test_a_base_install_holds_no_extra_and_only_locked_versions(venv):
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "list",
         "--format", "json"],
        check=True, capture_output=True, text=True, env=_clean_env(),
    )  # fmt: skip
    installed = {canonicalize_name(p["name"]): p["version"] for p in json.loads(listed.stdout)}
    assert installed.pop("rag-lab") == "0.1.0"
    assert not set(EXTRAS_ONLY) & set(installed)
    lock = _lock()
    # pip freeze leaves setuptools out of the lock (torch requires it): any version.
    installed.pop("setuptools", None)
    off = {n: v for n, v in installed.items() if lock.get(n) != v.split("+")[0]}
    assert off == {}


def test_the_readme_ci_job_runs_on_a_small_folder(venv, tmp_path):
    """The job's rag-lab commands, word for word, after one run of its evaluate without
    --baseline that writes the baseline; and an ask of the index the job builds."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    (tmp_path / "questions.yaml").write_text(QUESTIONS, encoding="utf-8")
    # A fresh model cache: the ONNX graph is exported, with the base install's torch and onnx.
    env = {**_clean_env(), "RAG_LAB_CACHE": str(tmp_path / "cache")}

    def rag_lab(*args):
        return subprocess.run(
            [str(venv / "bin" / "rag-lab"), *args],
            cwd=tmp_path, env=env, capture_output=True, text=True,
        )  # fmt: skip

    check, index, evaluate = rag_lab_commands()
    done = rag_lab(*check)
    assert done.returncode == 0, done.stderr
    done = rag_lab(*index)
    assert done.returncode == 0 and "2 indexed" in done.stdout, done.stderr
    assert len(list((tmp_path / "cache" / "onnx").glob("*/model.onnx"))) == 1
    built = index[index.index("--index") + 1]
    done = rag_lab("ask", "which hardware speeds up matrix products?", "--index", built)
    assert done.returncode == 0 and "tensors#char=" in done.stdout, done.stderr

    baseline = evaluate[evaluate.index("--baseline") + 1]
    first = [*evaluate[: evaluate.index("--out")], "--out", str(Path(baseline).parent)]
    done = rag_lab(*first)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / baseline).read_text())
    assert report["corpus"]["documents"] == 2
    assert report["encoder"]["backend"] == "onnx"
    done = rag_lab(*evaluate)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    out = tmp_path / evaluate[evaluate.index("--out") + 1]
    assert (out / "regression.xml").is_file()
