"""The package as a user installs it: a wheel, run outside any checkout, indexes, answers and
evaluates a small folder (no ``data/``, no ``../shared``: nothing a checkout provides)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from rag_lab import paths

pytestmark = pytest.mark.model  # the real encoder, from the shared cache when warm

DOCS = {
    "tensors.md": "# Tensors\n\nA tensor is an array of numbers. Tensors can live on a GPU, "
    "which makes large matrix products much faster than on a CPU.\n",
    "grads.md": "# Gradients\n\n## Backward\n\nCalling backward applies the chain rule. "
    "Gradients accumulate in the grad field until you reset them.\n",
}
QUESTIONS = """\
questions:
  - id: t1
    doc: tensors
    needle: "Tensors can live on a GPU, which makes large matrix products much faster"
    course: "What hardware speeds up big multiplications of arrays?"
    ticket: "is my graphics card useful for matmuls"
negatives:
  - id: n1
    kind: offtopic
    query: "What is the best recipe for sourdough bread?"
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The wheel ``pip wheel .`` builds, unpacked as site-packages would hold it."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(paths.ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("rag_lab-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(out / "site")
    assert "rag_lab/sources/chroma/SHA256SUMS" in names  # package data travels with it
    assert not any(n.startswith(("data/", "notebooks/", "tests/")) for n in names)
    return out / "site"


def rag_lab_cli(site, cwd, *args):
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("RAG_LAB_PROGRESS", None)
    code = "import sys; from rag_lab.app.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_the_wheel_runs_outside_a_checkout(site, tmp_path):
    where = rag_lab_cli(site, tmp_path, "--version")
    assert where.returncode == 0, where.stderr
    probe = subprocess.run(
        [sys.executable, "-c", "import rag_lab.paths as p; print(p.ROOT, p.in_checkout())"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
    )
    assert probe.stdout.split() == [str(site), "False"]


def test_index_ask_and_evaluate_a_small_folder_from_the_wheel(site, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    (tmp_path / "q.yaml").write_text(QUESTIONS, encoding="utf-8")
    index = ["--index", str(tmp_path / "idx" / "index.sqlite")]
    done = rag_lab_cli(site, tmp_path, "index", "docs", *index)
    assert done.returncode == 0 and "2 indexed" in done.stdout, done.stderr
    done = rag_lab_cli(site, tmp_path, "ask", "which hardware speeds up matrix products?", *index)
    assert done.returncode == 0 and "tensors#char=" in done.stdout, done.stderr
    done = rag_lab_cli(
        site, tmp_path, "evaluate", "--corpus", "docs", "--questions", "q.yaml", "--out", "out"
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "report.md").is_file() and "found within k" in done.stdout
    # Without a question file there is no lab's own to fall back on: said, exit 2.
    done = rag_lab_cli(site, tmp_path, "evaluate")
    assert done.returncode == 2 and "comes with a checkout of the lab" in done.stderr
