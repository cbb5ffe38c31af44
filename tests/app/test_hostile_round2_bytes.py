# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab`` against hostile bytes, escapes and control characters (issue 26, round 2).

Each row: what is done to the folder first, the command, the exit status, a fragment of
what it prints (stdout and stderr), and the index's state afterwards. No row may print a
traceback, write outside the folder's index path, or let a control character reach the
terminal raw. Names are built with :func:`os.fsencode` bytes, as a hostile user makes them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakes import GOOD, write

from rag_lab.app import exits, output
from rag_lab.app.store import SQLiteStore
from rag_lab.checksums import sha256_bytes
from rag_lab.text import printable


def bytes_name(folder: Path, name: bytes, text: str) -> None:
    """A file whose name is the raw bytes ``name`` (not necessarily UTF-8)."""
    with open(os.path.join(os.fsencode(folder), name), "wb") as f:
        f.write(text.encode("utf-8"))


# --- what a row does first ------------------------------------------------------------


def nothing(run, docs, tmp_path):
    pass


def latin1_name(run, docs, tmp_path):
    bytes_name(docs, b"caf\xe9.md", "# Caf\n\nEspresso beans roasted dark.\n")


def latin1_name_indexed(run, docs, tmp_path):
    latin1_name(run, docs, tmp_path)
    assert run("index", docs)[0] == exits.OK


def latin1_name_failing(run, docs, tmp_path):
    bytes_name(docs, b"caf\xe9.md", "")  # empty: failed, and listed by status


def latin1_name_failed_indexed(run, docs, tmp_path):
    latin1_name_failing(run, docs, tmp_path)
    assert run("index", docs)[0] == exits.PARTIAL


def latin1_folder(run, docs, tmp_path):
    bad = os.path.join(os.fsencode(tmp_path), b"d\xff")
    os.mkdir(bad)
    bytes_name(Path(os.fsdecode(bad)), b"a.md", "# A\n\nTensors.\n")


def manifest(entries: dict[str, bytes]):
    """A ``SHA256SUMS`` listing the three good files and ``entries`` (name → their bytes)."""

    def setup(run, docs, tmp_path):
        outside = write(
            tmp_path / "outside", {"secret.md": "# Secret\n\nThe password is swordfish.\n"}
        )
        lines = [f"{sha256_bytes((docs / n).read_bytes())}  {n}" for n in GOOD]
        for name, data in entries.items():
            lines.append(f"{sha256_bytes(data)}  {name.format(outside=outside)}")
        (docs / "SHA256SUMS").write_text("\n".join(lines) + "\n")

    return setup


def manifest_through_a_link(run, docs, tmp_path):
    manifest({"link.md": SECRET})(run, docs, tmp_path)
    (docs / "link.md").symlink_to(tmp_path / "outside" / "secret.md")


def manifest_not_utf8(run, docs, tmp_path):
    (docs / "SHA256SUMS").write_bytes(b"zz\xff\n")


SECRET = b"# Secret\n\nThe password is swordfish.\n"


def dangling_index_link(run, docs, tmp_path):
    (tmp_path / "link.sqlite").symlink_to(tmp_path / "elsewhere" / "target.sqlite")
    (tmp_path / "elsewhere").mkdir()


def escape_in_name(run, docs, tmp_path):
    bytes_name(docs, b"\x1b[2Jclear\x07.md", "# Clear\n\nEspresso beans.\n")


def newline_in_name(run, docs, tmp_path):
    bytes_name(docs, b"two\nlines.md", "")  # failed: its name is printed in the report


def escape_in_text(run, docs, tmp_path):
    write(docs, {"e.md": "# Esc\x1b[2J\n\nEspresso \x1b[2J beans \x9b31m roasted.\n"})
    assert run("index", docs)[0] == exits.OK


# --- expected states ----------------------------------------------------------------


def state(path: Path) -> str:
    if not path.exists():
        return "absent"
    with SQLiteStore(path, readonly=True) as store:
        records = store.documents()
    ids = sorted(r.id for r in records)
    failed = sum(r.status.value == "failed" for r in records)
    return f"{len(records) - failed} indexed, {failed} failed: " + " ".join(ids)


ASK = ["ask", "espresso beans roasted", "--cutoff", "1.5"]
CASES = [
    # (id, setup, argv, exit status, fragment of stdout+stderr, index state after)
    ("non-UTF-8 file name, index", latin1_name, ["index", "{docs}"], 0, "4 indexed", "4 indexed, 0 failed: a b caf\\xe9 sub/c"),
    ("non-UTF-8 file name, again", latin1_name_indexed, ["index", "{docs}"], 0, "4 unchanged", "4 indexed, 0 failed: a b caf\\xe9 sub/c"),
    ("non-UTF-8 file name, cited", latin1_name_indexed, ASK, 0, "[1] ", "4 indexed, 0 failed: a b caf\\xe9 sub/c"),
    ("non-UTF-8 file name, failed", latin1_name_failing, ["index", "{docs}"], 1, "failed caf\\xe9.md: empty file", "3 indexed, 1 failed: a b caf\\xe9 sub/c"),
    ("non-UTF-8 file name, status", latin1_name_failed_indexed, ["status"], 0, "caf\\xe9.md: empty file", "3 indexed, 1 failed: a b caf\\xe9 sub/c"),
    ("non-UTF-8 file name, retry failed", latin1_name_failed_indexed, ["retry"], 1, "failed caf\\xe9.md: empty file", "3 indexed, 1 failed: a b caf\\xe9 sub/c"),
    ("non-UTF-8 file name, retry", latin1_name_indexed, ["retry"], 0, "", "4 indexed, 0 failed: a b caf\\xe9 sub/c"),
    ("non-UTF-8 folder name", latin1_folder, ["index", "{tmp}/d\udcff"], 2, "d\\xff: the folder's name is not valid UTF-8", "absent"),
    ("non-UTF-8 question", latin1_name_indexed, ["ask", "caf\udce9 beans"], 2, "the question is not valid UTF-8 (byte 0xe9 at character 4)", "4 indexed, 0 failed: a b caf\\xe9 sub/c"),
    ("manifest ../ entry", manifest({"../outside/secret.md": SECRET}), ["index", "{docs}"], 0, "not followed ../outside/secret.md: listed in SHA256SUMS, but outside the folder; not read", "3 indexed, 0 failed: a b sub/c"),
    ("manifest absolute entry", manifest({"{outside}/secret.md": SECRET}), ["index", "{docs}"], 0, "secret.md: listed in SHA256SUMS, but outside the folder", "3 indexed, 0 failed: a b sub/c"),
    ("manifest entry through a link outside", manifest_through_a_link, ["index", "{docs}"], 0, "not followed link.md: listed in SHA256SUMS, but a symbolic link to", "3 indexed, 0 failed: a b sub/c"),
    ("manifest entry through a link, followed", manifest_through_a_link, ["index", "{docs}", "--follow-symlinks"], 0, "4 indexed", "4 indexed, 0 failed: a b link sub/c"),
    ("manifest not UTF-8", manifest_not_utf8, ["index", "{docs}"], 2, "SHA256SUMS:1: not UTF-8 (invalid start byte at byte 2)", "absent"),
    ("manifest ../ entry, evaluate", manifest({"../outside/secret.md": SECRET}), ["evaluate", "--corpus", "{docs}", "--questions", "{docs}/a.md", "--out", "{tmp}/out"], 2, "../outside/secret.md: listed in SHA256SUMS, but outside the folder", "absent"),
    ("dangling --index link", dangling_index_link, ["index", "{docs}", "--index", "{tmp}/link.sqlite"], 2, "is a broken symbolic link", "absent"),
    ("dangling --index link, rebuild", dangling_index_link, ["index", "{docs}", "--rebuild", "--index", "{tmp}/link.sqlite"], 2, "is a broken symbolic link", "absent"),
    ("escape sequence in a name", escape_in_name, ["index", "{docs}"], 0, "4 indexed", "4 indexed, 0 failed: \x1b[2Jclear\x07 a b sub/c"),
    ("newline in a failed name", newline_in_name, ["index", "{docs}"], 1, "failed two\\nlines.md: empty file", "3 indexed, 1 failed: a b sub/c two\nlines"),
    ("escape sequence in the text, cited", escape_in_text, ASK, 0, "Espresso \\x1b[2J beans \\x9b31m roasted", "4 indexed, 0 failed: a b e sub/c"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_hostile_case(env, tmp_path, setup, argv, code, fragment, after):
    run, docs, path = env
    setup(run, docs, tmp_path)
    argv = [a.format(docs=docs, tmp=tmp_path) for a in argv]
    status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert fragment in out + err, (out, err)
    assert not _raw_controls(out + err), (out, err)
    if code == exits.ERROR:
        assert err.count("\n") == 1, err
    assert state(path) == after
    assert not (tmp_path / "elsewhere" / "target.sqlite").exists()
    if "--follow-symlinks" not in argv:
        assert "swordfish" not in out + err


def _raw_controls(text: str) -> list[str]:
    """Control characters other than the newlines that end lines."""
    return [c for c in text if c != "\n" and (ord(c) < 32 or 0x7F <= ord(c) < 0xA0)]


def test_a_non_utf8_name_is_cited_by_its_escaped_path(env, tmp_path):
    run, docs, _ = env
    latin1_name_indexed(run, docs, tmp_path)
    status, out, _ = run("ask", "espresso beans roasted", "--cutoff", "1.5", "-k", "1")
    assert status == exits.OK
    assert "caf\\xe9#" in out


def test_a_name_with_an_escape_sequence_is_cited_escaped(env, tmp_path):
    run, docs, _ = env
    escape_in_name(run, docs, tmp_path)
    assert run("index", docs)[0] == exits.OK
    status, out, _ = run("ask", "espresso beans", "--cutoff", "1.5", "-k", "1")
    assert status == exits.OK
    assert "%1B%5B2Jclear%07#" in out and "\x1b" not in out  # percent-encoded in a locator


def test_the_prompt_is_escaped_on_a_terminal_only(env, tmp_path, monkeypatch):
    run, docs, _ = env
    escape_in_text(run, docs, tmp_path)
    _, piped, _ = run(*ASK, "--prompt")
    assert "\x1b[2J" in piped  # the prompt, as it is, for a program reading it
    monkeypatch.setattr(output, "on_terminal", lambda: True)
    _, shown, _ = run(*ASK, "--prompt")
    assert "\x1b" not in shown and "\\x1b[2J" in shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, é and ✓", "plain text, é and ✓"),
        ("\x1b[2J", "\\x1b[2J"),
        ("a\nb\tc\r", "a\\nb\\tc\\r"),
        ("\x7f\x9b", "\\x7f\\x9b"),
        ("caf\udce9", "caf\\xe9"),  # a byte that is not UTF-8, as os.fsdecode keeps it
        ("\u202eevil", "\\u202eevil"),  # a bidirectional override
    ],
)
def test_printable(text, shown):
    assert printable(text) == shown


def test_printable_keeps_newlines_when_asked():
    assert printable("a\nb\x1b", newlines=True) == "a\nb\\x1b"
