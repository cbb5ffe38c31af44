# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab``'s messages made true, and the files it writes kept where they belong (issue 26).

Each row: what is done to the folder or the index first, the command, the exit status, a
fragment of what it says (stdout and stderr), and the index's state afterwards (of
``--index`` when the row gives one). No row may print a traceback or an internal error;
an error is one line on stderr (and, under ``--json``, one JSON object on stdout); a row
whose index is ``absent`` afterwards has created nothing beside it either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hostile import state as index_state

from rag_lab.app import cli

# --- what a row does first ------------------------------------------------------------


def nothing(run, docs, path, tmp_path, monkeypatch):
    pass


def manifest_bad_on_line_2(run, docs, path, tmp_path, monkeypatch):
    """A ``SHA256SUMS`` whose second line holds a byte that is not UTF-8."""
    (docs / "SHA256SUMS").write_bytes(b"0" * 64 + b"  a.md\nzz\xff  b.md\n")


# --- expected states ----------------------------------------------------------------


def state(index: Path) -> str:
    """What the index is now, in a few words; a symbolic link says so, then its target's."""
    if index.is_symlink():
        return f"a link to {index_state(index.resolve())}"
    return index_state(index)


CASES = [
    # (id, setup, argv, exit status, fragment of stdout + stderr, index state after)
    ("manifest not UTF-8 on line 2", manifest_bad_on_line_2, ["index", "{docs}"], 2, "SHA256SUMS:2: not UTF-8 (invalid start byte at byte 73)", "absent"),
    ("manifest not UTF-8, rebuild", manifest_bad_on_line_2, ["index", "{docs}", "--rebuild"], 2, "SHA256SUMS:2: not UTF-8", "absent"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_message(env, tmp_path, monkeypatch, setup, argv, code, fragment, after):
    run, docs, path = env
    setup(run, docs, path, tmp_path, monkeypatch)
    argv = [a.format(docs=docs, tmp=tmp_path) for a in argv]
    status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert fragment in out + err, (out, err)
    if code == cli.ERROR:
        assert err.count("\n") == 1, err
    if "--json" in argv:
        said = json.loads(out)  # stdout is one JSON object, error or not
        if code != cli.OK:
            assert said["exit_status"] == code and said["error"] in err, (out, err)
    index = Path(argv[argv.index("--index") + 1]) if "--index" in argv else path
    assert state(index) == after
    if after == "absent":  # nothing beside it either: no lock, journal or half-built file
        assert not list(index.parent.glob(f"{index.name}*")), list(index.parent.iterdir())
