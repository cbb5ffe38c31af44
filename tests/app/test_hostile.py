# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab`` against bad inputs and faults: one row per case (issue 13).

Each row: what is done to the folder or the index first, the command, the exit status,
a fragment of the one line on stderr, and the state the index must be left in. No row
may print a traceback, write into a file that is not ours, or drop a document silently.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import GOOD, HashEncoder, index_to_the_end, killed_runs, versioned, write

from rag_lab.app import commands, exits, index, ingest
from rag_lab.app.store import (
    APPLICATION_ID,
    IndexDamaged,
    SQLiteStore,
    StoreError,
    writer_lock,
)
from rag_lab.checksums import sha256_bytes
from rag_lab.models.minilm import Fingerprint
from rag_lab.models.vector_cache import open_cache
from rag_lab.sources import folder as folder_module
from rag_lab.sources.folder import Source, read

ROOT = Path(__file__).resolve().parents[2]


# --- what a row does first ------------------------------------------------------------


def nothing(run, docs, path, tmp_path, monkeypatch):
    pass


def indexed(run, docs, path, tmp_path, monkeypatch):
    assert run("index", docs)[0] == exits.OK


def foreign_with_documents(run, docs, path, tmp_path, monkeypatch):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE documents (name TEXT)")
        db.execute("INSERT INTO documents VALUES ('theirs')")


def foreign_app_id(run, docs, path, tmp_path, monkeypatch):
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA application_id = 1234")
        db.execute("CREATE TABLE t (x)")


def empty_file(run, docs, path, tmp_path, monkeypatch):
    path.write_bytes(b"")


def text_file(run, docs, path, tmp_path, monkeypatch):
    path.write_text("my notes, not a database\n" * 20)


def other_schema(run, docs, path, tmp_path, monkeypatch):
    indexed(run, docs, path, tmp_path, monkeypatch)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 1")


def unmarked(run, docs, path, tmp_path, monkeypatch):
    """An index written before the marks: our three tables, application_id 0."""
    indexed(run, docs, path, tmp_path, monkeypatch)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA application_id = 0")
        db.execute("PRAGMA user_version = 0")


def index_is_a_folder(run, docs, path, tmp_path, monkeypatch):
    path.mkdir()


def corrupt(run, docs, path, tmp_path, monkeypatch):
    """Random bytes over every page but the first: the header still says ours."""
    indexed(run, docs, path, tmp_path, monkeypatch)
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for at in range(page, len(data), 97):
        data[at] = (data[at] * 31 + 7) % 256
    path.write_bytes(bytes(data))


def all_files_gone(run, docs, path, tmp_path, monkeypatch):
    indexed(run, docs, path, tmp_path, monkeypatch)
    for name in GOOD:
        (docs / name).unlink()


def two_of_three_gone(run, docs, path, tmp_path, monkeypatch):
    indexed(run, docs, path, tmp_path, monkeypatch)
    (docs / "a.md").unlink()
    (docs / "b.md").unlink()


def one_of_three_gone(run, docs, path, tmp_path, monkeypatch):
    indexed(run, docs, path, tmp_path, monkeypatch)
    (docs / "b.md").unlink()


def unlistable_subfolder(run, docs, path, tmp_path, monkeypatch):
    """``sub/`` cannot be listed (as if its permissions were 000; root ignores those)."""
    indexed(run, docs, path, tmp_path, monkeypatch)
    real_scandir = os.scandir

    def scandir(path="."):
        if Path(os.fsdecode(path)).name == "sub":
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(folder_module.os, "scandir", scandir)


def link_outside(run, docs, path, tmp_path, monkeypatch):
    secret = write(tmp_path / "elsewhere", {"secret.md": "# Secret\n\nNot for the index.\n"})
    (docs / "secret.md").symlink_to(secret / "secret.md")


def link_inside_and_linked_folder(run, docs, path, tmp_path, monkeypatch):
    (docs / "again.md").symlink_to(docs / "a.md")
    (docs / "linked").symlink_to(docs / "sub", target_is_directory=True)


def a_checksum_mismatch(run, docs, path, tmp_path, monkeypatch):
    """A manifest, as the lab's corpus has, that one file no longer matches."""
    sums = {n: sha256_bytes(t.encode()) for n, t in GOOD.items()} | {"b.md": "1" * 64}
    (docs / "SHA256SUMS").write_text("".join(f"{h}  {n}\n" for n, h in sums.items()))


def busy(run, docs, path, tmp_path, monkeypatch):
    """Another writer holds the index (its lock is held for the rest of the test)."""
    indexed(run, docs, path, tmp_path, monkeypatch)
    lock = writer_lock(path)
    lock.__enter__()
    monkeypatch.setattr(sys.modules[__name__], "_held", lock, raising=False)


def interrupted_midway(run, docs, path, tmp_path, monkeypatch):
    """Ctrl-C while the second document is being embedded."""
    calls = {"n": 0}
    encode = HashEncoder.encode

    def flaky(self, texts, *, progress=None):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return encode(self, texts, progress=progress)

    monkeypatch.setattr(HashEncoder, "encode", flaky)


def indexed_then_interrupted(run, docs, path, tmp_path, monkeypatch):
    indexed(run, docs, path, tmp_path, monkeypatch)
    interrupted_midway(run, docs, path, tmp_path, monkeypatch)


def a_bug(run, docs, path, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(ingest, "index_folder", boom)


QUESTION = (
    "  - id: q1\n"
    "    doc: a\n"
    '    needle: "Tensors hold numbers."\n'
    '    course: "What do tensors hold?"\n'
    '    ticket: "tensors hold what"\n'
)
NEGATIVE = '  - id: n1\n    kind: offtopic\n    query: "What is the capital of Peru?"\n'


def question_file(text: str):
    def setup(run, docs, path, tmp_path, monkeypatch):
        (tmp_path / "q.yaml").write_text(text)

    return setup


def with_question(old: str, new: str):
    return question_file("questions:\n" + QUESTION.replace(old, new) + "negatives:\n" + NEGATIVE)


no_questions = question_file("questions: []\nnegatives:\n" + NEGATIVE)
int_id = with_question("id: q1", "id: 17")
bool_ticket = with_question('ticket: "tensors hold what"', "ticket: true")
null_needle = with_question('needle: "Tensors hold numbers."', "needle: ~")
EVALUATE = ["evaluate", "--corpus", "{docs}", "--questions", "{tmp}/q.yaml", "--out", "{tmp}/r"]


# --- expected states ----------------------------------------------------------------


def counts(path: Path) -> dict[str, int]:
    with SQLiteStore(path, readonly=True) as store:
        st = index.status(store, index.current_stamp(HashEncoder().fingerprint))
        assert index.check(store) == []
        return st.counts


def state(path: Path) -> str:
    """What the index file is now, in a word."""
    if not path.exists():
        return "absent"
    if path.is_dir():
        return "folder"
    if path.stat().st_size == 0:
        return "empty"
    with path.open("rb") as f:
        header = f.read(100)
    if not header.startswith(b"SQLite format 3"):
        return "not sqlite"
    if int.from_bytes(header[68:72], "big") != APPLICATION_ID:
        with sqlite3.connect(path) as db:
            tables = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master"))
        return "foreign: " + ",".join(tables)
    try:
        c = counts(path)
    except (IndexDamaged, AssertionError):  # SQLite's own errors reach us as this fact
        return "damaged"
    except StoreError as err:
        return f"refused: {str(err).split(';')[0].split(' has ')[-1]}"
    return f"{c['indexed']} indexed, {c['failed']} failed"


CASES = [
    # (id, setup, argv, exit status, stderr fragment, index state after)
    ("k negative", indexed, ["ask", "tensors", "-k", "-1"], 2, "-1: give at least 1", "3 indexed, 0 failed"),
    ("k zero", indexed, ["ask", "tensors", "-k", "0"], 2, "0: give at least 1", "3 indexed, 0 failed"),
    ("k not a number", indexed, ["ask", "tensors", "-k", "two"], 2, "not a whole number", "3 indexed, 0 failed"),
    ("cutoff nan", indexed, ["ask", "tensors", "--cutoff", "nan"], 2, "not a cosine distance", "3 indexed, 0 failed"),
    ("cutoff negative", indexed, ["ask", "tensors", "--cutoff", "-1"], 2, "not a cosine distance", "3 indexed, 0 failed"),
    ("cutoff over 2", indexed, ["ask", "tensors", "--cutoff", "2.5"], 2, "not a cosine distance", "3 indexed, 0 failed"),
    ("cutoff inf", indexed, ["ask", "tensors", "--cutoff", "inf"], 2, "not a cosine distance", "3 indexed, 0 failed"),
    ("empty question", indexed, ["ask", ""], 2, "the question is empty", "3 indexed, 0 failed"),
    ("blank question", indexed, ["ask", "  \n\t"], 2, "the question is empty", "3 indexed, 0 failed"),
    ("status, foreign db", foreign_with_documents, ["status"], 2, "of another program (tables: documents)", "foreign: documents"),
    ("index, foreign db", foreign_with_documents, ["index", "{docs}"], 2, "refusing to touch it", "foreign: documents"),
    ("ask, foreign app id", foreign_app_id, ["ask", "x"], 2, "application_id 0x4d2", "foreign: t"),
    ("index, foreign app id", foreign_app_id, ["index", "{docs}"], 2, "another program's SQLite", "foreign: t"),
    ("status, 0-byte file", empty_file, ["status"], 2, "is an empty file, not a rag-lab index", "empty"),
    ("index, 0-byte file", empty_file, ["index", "{docs}"], 2, "is an empty file", "empty"),
    ("index, text file", text_file, ["index", "{docs}"], 2, "not an SQLite database", "not sqlite"),
    ("retry, text file", text_file, ["retry"], 2, "not an SQLite database", "not sqlite"),
    ("index, other schema", other_schema, ["index", "{docs}"], 2, "schema 1; this rag_lab reads 3", "refused: index schema 1"),
    ("index, unmarked old index", unmarked, ["index", "{docs}"], 0, "", "3 indexed, 0 failed"),
    ("index, no folder", nothing, ["index", "{tmp}/nowhere"], 2, "nowhere: not a folder", "absent"),
    ("index, folder is a file", nothing, ["index", "{docs}/a.md"], 2, "a.md: not a folder", "absent"),
    ("status, index is a folder", index_is_a_folder, ["status"], 2, "is a folder, not an index file", "folder"),
    ("index, index is a folder", index_is_a_folder, ["index", "{docs}"], 2, "is a folder, not an index file", "folder"),
    ("status, missing index", nothing, ["status"], 2, "no index at", "absent"),
    ("status, corrupt", corrupt, ["status"], 2, "damaged", "damaged"),
    ("status --check, corrupt", corrupt, ["status", "--check"], 2, "", "damaged"),
    ("ask, corrupt", corrupt, ["ask", "tensors"], 2, "status --check", "damaged"),
    ("index, corrupt", corrupt, ["index", "{docs}"], 2, "index DIR --rebuild", "damaged"),
    ("rebuild, corrupt", corrupt, ["index", "{docs}", "--rebuild"], 0, "is damaged; building a fresh index", "3 indexed, 0 failed"),
    ("rebuild, sound", indexed, ["index", "{docs}", "--rebuild"], 0, "", "3 indexed, 0 failed"),
    ("rebuild, foreign", foreign_with_documents, ["index", "{docs}", "--rebuild"], 2, "refusing to touch it", "foreign: documents"),
    ("folder emptied", all_files_gone, ["index", "{docs}"], 2, "would remove 3 of the 3 indexed documents", "3 indexed, 0 failed"),
    ("folder emptied, --prune", all_files_gone, ["index", "{docs}", "--prune"], 0, "", "0 indexed, 0 failed"),
    ("two of three gone", two_of_three_gone, ["index", "{docs}"], 2, "run again with --prune", "3 indexed, 0 failed"),
    ("one of three gone", one_of_three_gone, ["index", "{docs}"], 0, "", "2 indexed, 0 failed"),
    ("unlistable subfolder", unlistable_subfolder, ["index", "{docs}"], 1, "", "2 indexed, 1 failed"),
    ("link outside the folder", link_outside, ["index", "{docs}"], 0, "", "3 indexed, 0 failed"),
    ("link outside, followed", link_outside, ["index", "{docs}", "--follow-symlinks"], 0, "", "4 indexed, 0 failed"),
    ("links inside", link_inside_and_linked_folder, ["index", "{docs}"], 0, "", "4 indexed, 0 failed"),
    ("checksum mismatch", a_checksum_mismatch, ["index", "{docs}"], 1, "", "2 indexed, 1 failed"),
    ("second writer", busy, ["index", "{docs}"], 2, "is being written by another rag-lab (pid", "3 indexed, 0 failed"),
    ("second writer, retry", busy, ["retry"], 2, "is being written by another rag-lab", "3 indexed, 0 failed"),
    ("reader beside a writer", busy, ["status"], 0, "", "3 indexed, 0 failed"),
    ("Ctrl-C mid-index", interrupted_midway, ["index", "{docs}"], 130, "interrupted; the index is consistent", "1 indexed, 0 failed"),
    ("Ctrl-C mid-rebuild", indexed_then_interrupted, ["index", "{docs}", "--rebuild"], 130, "interrupted", "3 indexed, 0 failed"),
    ("a bug", a_bug, ["index", "{docs}"], 2, "internal error: ZeroDivisionError: division by zero (run again with --debug", "0 indexed, 0 failed"),
    ("questions: []", no_questions, EVALUATE, 2, "q.yaml:1: questions: no questions: the list is empty", "absent"),
    ("id: 17", int_id, EVALUATE, 2, "q.yaml:2: id: must be text, not the YAML int 17; quote it", "absent"),
    ("ticket: true", bool_ticket, EVALUATE, 2, "q.yaml:6: ticket: must be text, not the YAML bool true; quote it", "absent"),
    ("needle: ~", null_needle, EVALUATE, 2, "q.yaml:4: needle: must be text, not the YAML null ~; quote it", "absent"),
    ("questions a folder", nothing, ["evaluate", "--corpus", "{docs}", "--questions", "{tmp}"], 2, "a folder, not a question file", "absent"),
    ("corpus not a folder", nothing, ["evaluate", "--corpus", "{tmp}/none", "--questions", "{tmp}/q.yaml"], 2, "not a folder (--corpus DIR)", "absent"),
    ("out an existing file", nothing, ["evaluate", "--corpus", "{docs}", "--questions", "{docs}/a.md", "--out", "{docs}/b.md"], 2, "an existing file, not a folder", "absent"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_hostile_case(env, tmp_path, monkeypatch, setup, argv, code, fragment, after):
    run, docs, path = env
    setup(run, docs, path, tmp_path, monkeypatch)
    argv = [a.format(docs=docs, tmp=tmp_path) for a in argv]
    status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err
    assert fragment in err
    if code == exits.ERROR and argv[0] != "status":
        assert err.count("\n") == 1 or "usage:" in err, err
    assert state(path) == after
    assert not list(path.parent.glob("*.rebuild*")) and not list(path.parent.glob("*.creating-*"))


def test_debug_shows_the_traceback(env, tmp_path, monkeypatch):
    run, docs, path = env
    a_bug(run, docs, path, tmp_path, monkeypatch)
    for argv in (["--debug", "index", docs], ["index", docs, "--debug"]):
        status, _, err = run(*argv)  # the traceback, then the table's exit status
        assert status == exits.ERROR and "Traceback" in err and "ZeroDivisionError" in err


def test_ctrl_c_then_run_again_resumes(env, tmp_path, monkeypatch):
    run, docs, path = env
    interrupted_midway(run, docs, path, tmp_path, monkeypatch)
    assert run("index", docs)[0] == exits.INTERRUPTED
    monkeypatch.undo()
    monkeypatch.setattr(commands, "Encoder", HashEncoder)
    monkeypatch.setenv("RAG_LAB_INDEX", str(path))
    status, out, _ = run("index", docs)
    assert (status, out.splitlines()[1]) == (
        0,
        "2 indexed, 1 unchanged, 0 failed, 0 stale, 0 removed",
    )


def test_links_not_followed_are_reported(env, tmp_path, monkeypatch):
    run, docs, path = env
    link_outside(run, docs, path, tmp_path, monkeypatch)
    (docs / "linked").symlink_to(docs / "sub", target_is_directory=True)
    _, out, _ = run("index", docs)
    assert "  not followed secret.md: a symbolic link to " in out
    assert "outside the folder, not followed (--follow-symlinks follows it)" in out
    assert "  not followed linked: a symlinked folder, not followed" in out


def test_an_unlistable_subfolder_is_a_failure_with_its_reason(env, tmp_path, monkeypatch):
    run, docs, path = env
    unlistable_subfolder(run, docs, path, tmp_path, monkeypatch)
    _, out, _ = run("index", docs)
    assert (
        "  failed sub/c.txt: not seen: the folder sub/ cannot be listed (Permission denied)" in out
    )


def test_status_check_on_a_sound_index(env):
    run, docs, path = env
    run("index", docs)
    status, out, _ = run("status", "--check")
    assert status == exits.OK
    assert out.startswith(f"index {path}: sound (SQLite integrity check ok; 3 documents'")


def test_status_check_finds_a_miscounted_document(env):
    run, docs, path = env
    run("index", docs)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE documents SET chunk_count = 9 WHERE id = 'b'")
        db.execute("UPDATE chunks SET vector = zeroblob(12) WHERE doc_id = 'a' AND idx = 0")
    status, out, _ = run("status", "--check")
    assert status == exits.ERROR
    assert "  a: vectors of 3 dimensions, its stamp says 64" in out
    assert "  b: 9 chunks recorded, 1 stored" in out
    assert f"rebuild it: rag-lab index {docs.resolve()} --rebuild" in out


def test_json_is_valid_json_and_never_nan(env):
    import json

    run, docs, _ = env
    run("index", docs)
    for argv in (["ask", "tensors", "--json"], ["ask", "zebra", "--cutoff", "0", "--json"]):
        status, out, _ = run(*argv)
        assert status == exits.OK
        json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


def test_a_question_over_the_window_is_embedded_with_a_warning(env, monkeypatch):
    run, docs, _ = env
    monkeypatch.setattr(
        HashEncoder, "count_tokens", lambda self, text: len(text.split()) + 2, raising=False
    )
    monkeypatch.setattr(commands, "Encoder", lambda **kw: _windowed(HashEncoder(**kw)))
    run("index", docs)
    status, _, err = run("ask", "tensors " * 300)
    assert status == exits.OK
    assert "warning: the question is 302 word-pieces; the encoder reads only the first 256" in err


def _windowed(encoder: HashEncoder) -> HashEncoder:
    f = encoder.fingerprint
    encoder.fingerprint = Fingerprint(
        f.name, f.weights_sha256, f.pooling, f.normalized, 256, f.dimensions, backend=f.backend
    )
    return encoder


def test_an_unusable_cache_is_a_warning_not_a_crash(tmp_path, capsys):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder should be")
    assert open_cache(HashEncoder().fingerprint, not_a_folder / "embeddings") is None
    assert "warning: the embedding cache in" in capsys.readouterr().err


def test_a_bom_does_not_hide_the_title(tmp_path):
    file = tmp_path / "bom.md"
    file.write_bytes("\ufeff# Title\n\nBody.\n".encode())
    doc, _ = read(Source("bom", "bom.md", file))
    assert (doc.title, doc.text) == ("Title", "# Title\n\nBody.\n")


def test_two_writers(tmp_path):
    """A second ``rag-lab index`` exits 2 naming the first, which finishes untroubled."""
    docs = write(tmp_path / "docs", dict(GOOD))
    path = tmp_path / "index.sqlite"
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}",
        "RAG_LAB_LOCK_TIMEOUT": "0.5",
    }
    slow = (
        "import sys, time; from fakes import HashEncoder; from rag_lab.app import cli, commands\n"
        "class Slow(HashEncoder):\n"
        "    def encode(self, texts, *, progress=None):\n"
        "        time.sleep(1.0); return super().encode(texts, progress=progress)\n"
        "commands.Encoder = Slow\n"
        "raise SystemExit(cli.main(sys.argv[1:]))\n"
    )
    argv = [sys.executable, "-c", slow, "index", str(docs), "--index", str(path)]
    first = subprocess.Popen(
        argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 20
    while not Path(f"{path}.lock").exists() or not Path(f"{path}.lock").read_text():
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    second = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert second.returncode == 2, second.stderr
    assert f"is being written by another rag-lab (pid {first.pid}, since" in second.stderr
    assert "Traceback" not in second.stderr
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert "3 indexed, 0 unchanged, 0 failed, 0 stale, 0 removed" in out


KILLS = 20
"""Runs of ``rag-lab index`` killed with SIGKILL at a random moment."""


def test_kill_9_at_random_points_leaves_a_sound_index_that_resumes(tmp_path):
    """Each kill leaves an index that passes ``--check`` and never loses a document it
    held; before each run three files change, so every run has work to be killed in;
    after the last kill, one full run brings the index up to date."""
    docs = write(tmp_path / "docs", {f"d{i}.md": versioned(i, 0) for i in range(8)})
    path = tmp_path / "index.sqlite"
    held = 0
    started = time.monotonic()
    for _ in killed_runs(docs, ["--index", str(path)], kills=KILLS, delay=(0, 0.25)):
        if path.exists():
            with SQLiteStore(path) as store:  # a writer's open rolls a hot journal back
                assert index.check(store) == []
                records = store.documents()
            assert all(r.status.value == "indexed" and r.chunk_count for r in records)
            assert len(records) >= held
            held = len(records)
        assert time.monotonic() - started < 120
    index_to_the_end(docs, ["--index", str(path)], timeout=60)
    with SQLiteStore(path, readonly=True) as store:
        assert index.check(store) == []
        records = store.documents()
    assert [r.id for r in records] == [f"d{i}" for i in range(8)]
    current = {f"d{i}": sha256_bytes((docs / f"d{i}.md").read_bytes()) for i in range(8)}
    assert {r.id: r.sha256 for r in records} == current
