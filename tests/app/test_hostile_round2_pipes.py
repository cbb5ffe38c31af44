# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab`` in a pipeline, a terminal and an environment it did not choose (issue 26).

Each row runs the real command in its own process (the stand-in encoder aside): what is
done first, the command, its environment, what reads its stdout, the exit status, a
fragment of stderr (and of stdout), and the state the index is left in. A closed pipe
ends the command quietly with its work kept; an encoding that lacks a character escapes
it; a bad environment variable is one line naming it; SIGTERM unwinds as Ctrl-C does.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import GOOD, HashEncoder, write
from test_hostile import NEGATIVE, QUESTION, a_bug, question_file, state
from test_hostile import indexed as indexed_here

from rag_lab.app import exits
from rag_lab.app.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = (
    "import os, sys, time; from fakes import HashEncoder; from rag_lab.app import cli, commands\n"
    "class Slow(HashEncoder):\n"
    "    def encode(self, texts, *, progress=None):\n"
    "        time.sleep(float(os.environ.get('SLOW_ENCODE', '0')))\n"
    "        return super().encode(texts, progress=progress)\n"
    "commands.Encoder = Slow\n"
    "raise SystemExit(cli.main(sys.argv[1:]))\n"
)
"""``rag-lab`` with the hashed bag of words for the model, ``$SLOW_ENCODE`` seconds a batch."""


def rag_lab(argv, tmp_path: Path, extra: dict[str, str], reader: str = "pipe"):
    """Run ``rag-lab argv`` in a process of its own; (exit status, stdout, stderr).

    ``reader``: ``pipe`` reads everything; ``closed``: stdout is a pipe nobody reads (its
    reader gone before the first byte); ``head -1`` reads one line, then closes the pipe;
    ``SIGTERM`` reads one line, then sends SIGTERM.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONIOENCODING")}
    env |= {
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}",
        "RAG_LAB_INDEX": str(tmp_path / "index.sqlite"),
        "RAG_LAB_LOCK_TIMEOUT": "0.2",
        **extra,
    }
    cmd = [sys.executable, "-c", STAND_IN, *argv]
    if reader == "pipe":
        done = subprocess.run(
            cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        return done.returncode, done.stdout, done.stderr
    if reader == "closed":
        r, w = os.pipe()
        os.close(r)
        proc = subprocess.Popen(
            cmd, env=env, cwd=tmp_path, stdout=w, stderr=subprocess.PIPE, text=True
        )
        os.close(w)
        _, err = proc.communicate(timeout=120)
        return proc.returncode, "", err
    proc = subprocess.Popen(
        cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline()
    if reader == "head -1":
        proc.stdout.close()
    else:
        assert reader == "SIGTERM"
        proc.send_signal(signal.SIGTERM)
        line += proc.stdout.read()
    err = proc.stderr.read()
    return proc.wait(timeout=120), line, err


# --- what a row does first ------------------------------------------------------------


def nothing(tmp_path, docs):
    pass


def indexed(tmp_path, docs):
    assert rag_lab(["index", docs], tmp_path, {})[0] == 0


def indexed_then_one_more(tmp_path, docs):
    """Indexed, then a fourth file: a rebuild that is kept indexes four."""
    indexed(tmp_path, docs)
    (docs / "d.md").write_text("# Delta\n\nDeltas are differences.\n", encoding="utf-8")


def a_failed_cafe(tmp_path, docs):
    """A file whose name ASCII lacks, and which fails (empty): the report names it."""
    (docs / "café.md").write_bytes(b"")


UNBUFFERED = {"PYTHONUNBUFFERED": "1"}  # every line reaches the pipe as it is printed
SLOW = {**UNBUFFERED, "SLOW_ENCODE": "0.3"}  # the work outlasts the reader's first line

CASES = [
    # (id, setup, argv, environment, stdout's reader, exit status, stderr fragment, stdout fragment, index state after)
    ("rebuild | head -1", indexed_then_one_more, ["index", "{docs}", "--rebuild"], SLOW, "head -1", 141, "", "rebuilding", "4 indexed, 0 failed"),
    ("index | head -1", indexed_then_one_more, ["index", "{docs}"], SLOW, "head -1", 141, "", "indexing", "4 indexed, 0 failed"),
    ("status | head -2, buffered", indexed, ["status"], {}, "closed", 141, "", "", "3 indexed, 0 failed"),
    ("status | head -2, unbuffered", indexed, ["status"], UNBUFFERED, "closed", 141, "", "", "3 indexed, 0 failed"),
    ("ask | true", indexed, ["ask", "tensors"], {}, "closed", 141, "", "", "3 indexed, 0 failed"),
    ("ask, PYTHONIOENCODING=ascii", indexed, ["ask", "tensors"], {"PYTHONIOENCODING": "ascii"}, "pipe", 0, "", "Alpha \\u2014 ", "3 indexed, 0 failed"),
    ("ask --prompt, LC_ALL=C", indexed, ["ask", "tensors", "--prompt"], {"LC_ALL": "C", "PYTHONIOENCODING": "ascii:strict"}, "pipe", 0, "", "\\u2014", "3 indexed, 0 failed"),
    ("index, a failed café, ascii", a_failed_cafe, ["index", "{docs}"], {"PYTHONIOENCODING": "ascii"}, "pipe", 1, "", "failed caf\\xe9.md: ", "3 indexed, 1 failed"),
    ("lock timeout abc", indexed, ["index", "{docs}"], {"RAG_LAB_LOCK_TIMEOUT": "abc"}, "pipe", 2, "RAG_LAB_LOCK_TIMEOUT='abc': not a number; give the seconds", "", "3 indexed, 0 failed"),
    ("lock timeout nan", indexed, ["index", "{docs}"], {"RAG_LAB_LOCK_TIMEOUT": "nan"}, "pipe", 2, "RAG_LAB_LOCK_TIMEOUT='nan': not a finite number 0 or more", "", "3 indexed, 0 failed"),
    ("lock timeout -1", indexed, ["retry"], {"RAG_LAB_LOCK_TIMEOUT": "-1"}, "pipe", 2, "RAG_LAB_LOCK_TIMEOUT='-1': not a finite number 0 or more", "", "3 indexed, 0 failed"),
    ("lock timeout inf, a new index", nothing, ["index", "{docs}"], {"RAG_LAB_LOCK_TIMEOUT": "inf"}, "pipe", 2, "RAG_LAB_LOCK_TIMEOUT='inf'", "", "absent"),
    ("OMP_NUM_THREADS abc", indexed, ["ask", "tensors"], {"OMP_NUM_THREADS": "abc"}, "pipe", 2, "OMP_NUM_THREADS='abc': not a whole number; give a whole number of threads from 1 to", "", "3 indexed, 0 failed"),
    ("OMP_NUM_THREADS 99999", indexed, ["ask", "tensors"], {"OMP_NUM_THREADS": "99999"}, "pipe", 2, "OMP_NUM_THREADS='99999': out of range", "", "3 indexed, 0 failed"),
    ("OMP_NUM_THREADS 0", nothing, ["index", "{docs}"], {"OMP_NUM_THREADS": "0"}, "pipe", 2, "OMP_NUM_THREADS='0': out of range", "", "absent"),
    ("OMP_NUM_THREADS 2", indexed, ["ask", "tensors"], {"OMP_NUM_THREADS": "2"}, "pipe", 0, "", "source under cosine distance", "3 indexed, 0 failed"),
    ("SIGTERM mid-index", nothing, ["index", "{docs}"], SLOW, "SIGTERM", 143, "terminated (SIGTERM); the index is consistent", "indexing", r"[0-3] indexed, 0 failed"),
    ("SIGTERM mid-rebuild", indexed_then_one_more, ["index", "{docs}", "--rebuild"], SLOW, "SIGTERM", 143, "terminated (SIGTERM)", "rebuilding", "3 indexed, 0 failed"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "extra", "reader", "code", "fragment", "printed", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_case(tmp_path, setup, argv, extra, reader, code, fragment, printed, after):
    docs = write(tmp_path / "docs", dict(GOOD))
    setup(tmp_path, docs)
    argv = [str(a).format(docs=docs) for a in argv]
    status, out, err = rag_lab(argv, tmp_path, extra, reader)
    assert status == code, (out, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert fragment in err, err
    assert printed in out, out
    if code in (2, 141):
        assert err.count("\n") == (code == 2), err  # one line, or none at all
    path = tmp_path / "index.sqlite"
    assert re.fullmatch(after, state(path)), state(path)
    assert not list(tmp_path.glob("index.sqlite.rebuild*"))


def test_sigterm_during_ocr_leaves_no_temporary_file(tmp_path):
    """SIGTERM while Tesseract reads a scanned page: the command unwinds as after Ctrl-C
    (exit 143, one line), and the page images pytesseract wrote to $TMPDIR are removed."""
    pytest.importorskip("pytesseract")
    import shutil

    from rag_lab.documents import Document
    from rag_lab.sources.pdf.typeset import scan, typeset

    if shutil.which("tesseract") is None:
        pytest.skip("Tesseract is not installed (Debian: apt-get install tesseract-ocr)")
    docs = write(tmp_path / "docs", {"notes.md": "# Notes\n\nPumps need oil.\n"})
    text = "\n\n".join(f"Paragraph {i} says the pump needs oil every week." for i in range(60))
    typeset(
        Document("paper", "Paper", f"# Paper\n\n{text}\n"), "one-column", tmp_path / "paper.pdf"
    )
    assert scan(tmp_path / "paper.pdf", docs / "scan.pdf") >= 2
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONIOENCODING")}
    env |= {
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}",
        "RAG_LAB_INDEX": str(tmp_path / "index.sqlite"),
        "TMPDIR": str(temp),
    }
    cmd = [sys.executable, "-c", STAND_IN, "index", str(docs), "--ocr"]
    proc = subprocess.Popen(
        cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not any(p.name.startswith("tess_") for p in temp.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, (out, err)
    assert err.splitlines() == [
        "rag-lab index: terminated (SIGTERM); the index is consistent (each document is "
        "written whole or not at all): run the same command again to resume"
    ]
    assert list(temp.iterdir()) == []
    assert re.fullmatch(r"[01] indexed, 0 failed", state(tmp_path / "index.sqlite"))


# --- messages: in this process, with the stand-in encoder ------------------------------


def stand_in_for_evaluate(run, docs, path, tmp_path, monkeypatch):
    """``evaluate`` embeds with the stand-in as well (it builds its own encoder)."""
    import rag_lab.models.encoder

    monkeypatch.setattr(rag_lab.models.encoder, "Encoder", HashEncoder)


def good_questions(run, docs, path, tmp_path, monkeypatch):
    stand_in_for_evaluate(run, docs, path, tmp_path, monkeypatch)
    question_file("questions:\n" + QUESTION + "negatives:\n" + NEGATIVE)(
        run, docs, path, tmp_path, monkeypatch
    )


BROKEN_YAML = 'questions:\n  - id: q1\n    doc: a\n   needle: "x\n'
broken_yaml = question_file(BROKEN_YAML)


def an_index_without_a_folder(run, docs, path, tmp_path, monkeypatch):
    """An index created, and nothing indexed into it yet (its first run stopped early)."""
    SQLiteStore(path).close()


def ctrl_c_mid_evaluation(run, docs, path, tmp_path, monkeypatch):
    good_questions(run, docs, path, tmp_path, monkeypatch)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("rag_lab.evaluation.runner.evaluate", interrupted)


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs at ``tmp_path/full`` (root only), unmounted after the test."""
    place = tmp_path / "full"
    place.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a full disk is a tmpfs mounted for the test, which needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(place)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield place
    subprocess.run(["umount", str(place)], check=True)


def pipe_of(text: str) -> str:
    """``<(printf TEXT)``: a path that can be read once, as bash's process substitution."""
    r, w = os.pipe()
    os.write(w, text.encode())
    os.close(w)
    return f"/dev/fd/{r}"


EVALUATE = ["evaluate", "--corpus", "{docs}", "--questions", "{tmp}/q.yaml", "--out", "{tmp}/r"]

MESSAGES = [
    # (id, setup, argv, exit status, stderr fragment, stdout fragment, index state after)
    ("--cutoff -0", indexed_here, ["ask", "tensors", "--cutoff", "-0"], 0, "", "under cosine distance 0.0 for", "3 indexed, 0 failed"),
    ("--cutoff -0 --json", indexed_here, ["ask", "tensors", "--cutoff", "-0", "--json"], 0, "", '"cutoff": 0.0', "3 indexed, 0 failed"),
    ("status, an index of no folder yet", an_index_without_a_folder, ["status"], 0, "", "0 documents", "0 indexed, 0 failed"),
    ("Ctrl-C mid-evaluation", ctrl_c_mid_evaluation, EVALUATE, 130, "rag-lab evaluate: interrupted before the report was complete", "", "absent"),
    ("YAML syntax error", broken_yaml, EVALUATE, 2, "q.yaml:4: not valid YAML: expected <block end>, but found '<block mapping start>' at column 4 (while parsing a block collection from line 2)", "", "absent"),
    ("--questions <(...)", good_questions, [*EVALUATE[:4], "{pipe}", *EVALUATE[5:]], 0, "", "wrote ", "absent"),
    ("--questions <(...), broken", stand_in_for_evaluate, [*EVALUATE[:4], "{broken pipe}", *EVALUATE[5:]], 2, ":4: not valid YAML: expected <block end>", "", "absent"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "printed", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in MESSAGES],
)
def test_each_message(env, tmp_path, monkeypatch, setup, argv, code, fragment, printed, after):
    run, docs, path = env
    setup(run, docs, path, tmp_path, monkeypatch)
    where = {"docs": docs, "tmp": tmp_path}
    if "{pipe}" in argv:
        where["pipe"] = pipe_of("questions:\n" + QUESTION + "negatives:\n" + NEGATIVE)
    if "{broken pipe}" in argv:
        where["broken pipe"] = pipe_of(BROKEN_YAML)
    argv = [a.format(**where) if "{" in a else a for a in argv]
    argv = [where.get(a[1:-1], a) if a in ("{pipe}", "{broken pipe}") else a for a in argv]
    status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err and "None" not in out + err
    assert fragment in err, err
    assert printed in out, out
    if code in (2, 130):
        assert err.count("\n") == 1, err
    assert state(path) == after
    if code == 130:
        assert "index" not in err  # evaluate reads no index


def test_the_report_on_a_full_disk_names_its_folder(env, tmp_path, monkeypatch, full_disk):
    run, docs, path = env
    good_questions(run, docs, path, tmp_path, monkeypatch)
    argv = [*EVALUATE[:-1], f"{full_disk}/r"]
    status, out, err = run(*[a.format(docs=docs, tmp=tmp_path) for a in argv])
    assert status == exits.ERROR, (out, err)
    assert (
        err
        == f"rag-lab evaluate: {full_disk}/r: cannot write the report: No space left on device\n"
    )


def test_a_crash_under_debug_shows_the_traceback_and_keeps_the_exit_status(
    env, tmp_path, monkeypatch
):
    run, docs, path = env
    a_bug(run, docs, path, tmp_path, monkeypatch)
    for argv in (["--debug", "index", docs], ["index", docs, "--debug"]):
        status, _, err = run(*argv)
        assert status == exits.ERROR
        assert (
            "Traceback (most recent call last)" in err
            and "ZeroDivisionError: division by zero" in err
        )
        assert err.endswith(
            "rag-lab index: internal error: ZeroDivisionError: division by zero (the traceback is above, and please report it)\n"
        )
