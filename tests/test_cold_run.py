"""A notebook run cold, as a new user's first ``make reproduce`` runs it, writes what a warm
run writes: no warning, progress residue or path in its outputs, the same checked numbers.

Notebook 01 exports the encoder's ONNX graph from the packaged weights (torch, transformers)
on a cold cache: the path that once printed tqdm's "IProgress not found" into it. About 20 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from notebook_outputs import checked_outputs, problems

from rag_lab import paths

pytestmark = [pytest.mark.model, pytest.mark.corpus]


def test_notebook_01_in_an_empty_cache_is_clean_and_matches_the_committed_one(tmp_path):
    env = {**os.environ, paths.CACHE_ENV: str(tmp_path / "cache")}
    env.pop("RAG_LAB_PROGRESS", None)  # the runner relays its own
    done = subprocess.run(
        [sys.executable, "-m", "rag_lab.experiments.reproduce", "01", "--output", str(tmp_path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "without encryption" not in done.stdout + done.stderr  # kernels on IPC sockets
    assert "in 0 s" not in done.stdout and "1 notebooks in" in done.stdout
    assert (tmp_path / "cache" / "onnx").is_dir()  # it really ran cold
    name = "01_corpus_and_questions.ipynb"
    cold = json.loads((tmp_path / name).read_text())
    # papermill records where it wrote, and this run wrote outside the checkout.
    assert cold["metadata"]["papermill"].pop("output_path") == str(tmp_path / name)
    assert problems(cold) == []
    committed = json.loads((paths.ROOT / "notebooks" / name).read_text())
    assert checked_outputs(cold) == checked_outputs(committed) != []
