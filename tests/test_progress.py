"""Progress: the file a kernel writes, the relay that shows it, and what stays quiet."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

import pytest

from rag_lab import paths, progress


@pytest.fixture
def relay_file(tmp_path, monkeypatch):
    path = tmp_path / "progress.jsonl"
    monkeypatch.setenv(progress.ENV, str(path))
    return path


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_work_that_ends_quickly_writes_nothing(relay_file):
    with progress.bar(10, "embedding", "text") as b:
        b.update(10)
    assert _lines(relay_file) == []


def test_long_work_writes_throttled_lines_and_a_final_one(relay_file, monkeypatch):
    clock = iter(range(0, 1000, 1))  # one second per call of time.monotonic
    monkeypatch.setattr(progress.time, "monotonic", lambda: float(next(clock)))
    with progress.bar(4, "answering", "question") as b:
        for _ in range(4):
            b.update(note="1 generated")
    lines = _lines(relay_file)
    assert [x["n"] for x in lines] == [2, 3, 4, 4]  # quiet for QUIET_S = 2 s, then each second
    assert [x["final"] for x in lines] == [False, False, False, True]
    assert lines[-1]["note"] == "1 generated" and lines[-1]["total"] == 4


def test_show_false_writes_nothing_even_to_a_relay(relay_file, monkeypatch):
    monkeypatch.setattr(progress, "QUIET_S", 0.0)
    for _ in progress.track(range(3), "x", "item", show=False):
        pass
    assert _lines(relay_file) == []


def test_without_a_relay_or_a_terminal_nothing_is_shown(monkeypatch, capsys):
    monkeypatch.delenv(progress.ENV, raising=False)
    monkeypatch.setattr(progress, "QUIET_S", 0.0)
    assert list(progress.track([1, 2], "x", "item")) == [1, 2]
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.4, "0 s"), (42, "42 s"), (185, "3 min 05 s"), (3725, "1 h 02 min")]
)
def test_durations_read_as_a_person_would_say_them(seconds, text):
    assert progress.duration(seconds) == text


def test_an_update_renders_count_rate_and_time_left():
    u = progress.Update("embedding", "text", 1200, 4900, "", 40.0, final=False)
    assert u.render() == "embedding 1,200/4,900 text, 30.0 text/s, 2 min 03 s left"
    done = progress.Update("OCR", "page", 28, 28, "", 56.0, final=True)
    assert done.render() == "OCR 28/28 page, 2.0 s/page, done in 56 s"
    slow = progress.Update("answering", "question", 0, 94, "0 generated", 3.0, final=False)
    assert slow.render() == "answering 0/94 question, 0.0 question/s, 0 generated"


def test_the_relay_prints_what_another_process_writes(tmp_path):
    out = io.StringIO()
    with progress.relayed(out, every_s=0.0) as relay:
        relay.prefix = "   09 "
        child = (
            "from rag_lab import progress\n"
            "progress.QUIET_S = 0\n"
            "with progress.bar(2, 'answering', 'question') as b:\n"
            "    b.update(2)\n"
        )
        subprocess.run([sys.executable, "-c", child], check=True, cwd=paths.ROOT)
        time.sleep(0.6)  # the relay polls four times a second
    shown = out.getvalue().splitlines()
    assert shown and shown[-1].startswith("   09 answering 2/2 question")
    assert "done in" in shown[-1]


def test_the_relay_can_leave_out_its_own_process_and_be_muted(tmp_path, monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(progress, "QUIET_S", 0.0)
    with progress.relayed(out, every_s=0.0, others_only=True):
        with progress.bar(1, "mine", "item") as b:
            b.update()
    assert out.getvalue() == ""
    with progress.relayed(out, every_s=0.0) as relay:
        relay.muted = True
        with progress.bar(1, "muted", "item") as b:
            b.update()
    assert out.getvalue() == ""


def test_the_relay_file_is_removed_and_the_variable_restored(monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)
    with progress.relayed(io.StringIO()) as relay:
        path = relay.path
        assert path.exists()
    assert not path.exists() and progress.ENV not in os.environ
