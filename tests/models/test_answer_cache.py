"""The answer cache's file format: key echo, checksum, atomic writes (no model involved)."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

from rag_lab import atomic
from rag_lab.models import answer_cache
from rag_lab.models.answer_cache import AnswerCache

KEY = {"prompt": "What is a tensor?", "max_new_tokens": 7}
VALUE = {"text": "An array [1].", "new_tokens": 5}


def test_the_entry_is_named_by_the_sha256_of_its_canonical_key(tmp_path):
    cache = AnswerCache(tmp_path)
    canonical = '{"format":1,"max_new_tokens":7,"prompt":"What is a tensor?"}'
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    assert cache.path(KEY) == tmp_path / f"{digest}.json"
    assert cache.path(dict(reversed(KEY.items()))) == cache.path(KEY)  # order does not matter


def test_a_stored_value_comes_back_and_echoes_its_key(tmp_path):
    cache = AnswerCache(tmp_path / "answers")
    assert cache.get(KEY) is None and not (tmp_path / "answers").exists()
    path = cache.put(KEY, VALUE)
    assert cache.get(KEY) == VALUE
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert entry["key"] == {**KEY, "format": 1} and entry["value"] == VALUE
    assert cache.get({**KEY, "max_new_tokens": 8}) is None
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def _rewrite(path, change) -> None:
    entry = json.loads(path.read_text(encoding="utf-8"))
    change(entry)
    path.write_text(json.dumps(entry), encoding="utf-8")


def _reseal(entry) -> None:
    entry["sha256"] = answer_cache._checksum(entry["key"], entry["value"])


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), id="cut"),
        pytest.param(lambda p: p.write_bytes(b""), id="empty"),
        pytest.param(lambda p: p.write_bytes(b"\xff\xfe not utf-8"), id="bytes"),
        pytest.param(lambda p: p.write_text("[1, 2]"), id="not-an-entry"),
        # Edited text, checksum left as it was.
        pytest.param(lambda p: _rewrite(p, lambda e: e["value"].update(text="Edited.")), id="edit"),
        # Another key's entry under this key's name, sealed with a valid checksum.
        pytest.param(
            lambda p: _rewrite(p, lambda e: (e["key"].update(prompt="Other?"), _reseal(e))),
            id="key-echo",
        ),
        pytest.param(lambda p: _rewrite(p, lambda e: e.pop("sha256")), id="no-checksum"),
    ],
)
def test_a_corrupt_entry_reads_as_missing_and_a_put_replaces_it(tmp_path, corrupt):
    cache = AnswerCache(tmp_path)
    path = cache.put(KEY, VALUE)
    corrupt(path)
    assert cache.get(KEY) is None
    cache.put(KEY, VALUE)
    assert cache.get(KEY) == VALUE


def test_a_partly_written_temp_file_is_never_read(tmp_path):
    cache = AnswerCache(tmp_path)
    path = cache.path(KEY)
    # What a writer killed mid-write leaves: a temp file beside where the entry would go.
    whole = json.dumps({"key": {**KEY, "format": 1}, "value": VALUE})
    partial = tmp_path / f".{path.stem}.4242.0123abcd.tmp"
    partial.write_text(whole[:40], encoding="utf-8")
    assert cache.get(KEY) is None
    cache.put(KEY, VALUE)
    assert cache.get(KEY) == VALUE and partial.read_text(encoding="utf-8") == whole[:40]


def test_a_write_that_fails_before_the_rename_leaves_neither_entry_nor_temp_file(
    tmp_path, monkeypatch
):
    cache = AnswerCache(tmp_path)

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        cache.put(KEY, VALUE)
    assert list(tmp_path.iterdir()) == [] and cache.get(KEY) is None


def test_concurrent_writers_and_readers_see_a_whole_entry_or_none(tmp_path):
    cache = AnswerCache(tmp_path)
    value = {"text": "x" * 200_000}  # big enough that a write takes many syscalls
    seen: list[object] = []
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for _ in range(10):
                cache.put(KEY, value)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    def read() -> None:
        for _ in range(50):
            got = cache.get(KEY)
            seen.append(None if got is None else got == value)

    threads = [threading.Thread(target=write) for _ in range(4)]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert False not in seen  # every read was a miss or the whole value, never a torn one
    assert cache.get(KEY) == value and [p.suffix for p in tmp_path.iterdir()] == [".json"]
