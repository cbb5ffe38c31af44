"""Generated answers on disk, keyed by everything that decides their text, so a re-run is free.

The vector cache's counterpart for :mod:`rag_lab.models.generator`: greedy decoding makes an
answer a function of its key (model bytes, the full prompt, the decoding parameters), so a
stored answer is the answer. One JSON file per entry, ``<root>/<digest>.json``, where
``digest`` is the sha256 of the canonical JSON of the key. Each file echoes its key in full and
carries a sha256 of its own content:

- a write goes to a temp file of a unique name beside the entry, then ``os.replace`` moves it
  into place, so a reader sees the old entry, the new one or none, never half of one; readers
  only ever open ``<digest>.json``, never a temp file;
- an entry that does not parse, whose key echo differs from the key asked for (a digest
  collision or a hand-edited file), or whose checksum fails (truncated, e.g. by a crash before
  the data reached the disk) reads as missing, so the caller computes the answer again and the
  write replaces the bad file. A stored answer is never trusted on its file name alone.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab import paths
from rag_lab.checksums import sha256_text

FORMAT = 1
"""Version of the entry layout; part of every key, so a new layout never reads an old one."""


class AnswerCache:
    """JSON records by key under ``root`` (default ``<cache>/answers``); the folder is made on
    the first write, so a run that never generates leaves nothing behind."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or paths.cache_dir() / "answers"

    def path(self, key: Mapping[str, Any]) -> Path:
        """Where the entry for ``key`` lives (whether or not it exists)."""
        return self.root / f"{sha256_text(_canonical(_versioned(key)))}.json"

    def get(self, key: Mapping[str, Any]) -> dict[str, Any] | None:
        """The value stored for ``key``, or None when there is none or it fails a check."""
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None
        if not isinstance(entry, dict) or entry.keys() != {"key", "value", "sha256"}:
            return None
        if entry["key"] != _versioned(key) or not isinstance(entry["value"], dict):
            return None
        if entry["sha256"] != _checksum(entry["key"], entry["value"]):
            return None
        return entry["value"]

    def put(self, key: Mapping[str, Any], value: Mapping[str, Any]) -> Path:
        """Store ``value`` for ``key`` atomically; returns the entry's path."""
        versioned = _versioned(key)
        entry = {"key": versioned, "value": dict(value), "sha256": _checksum(versioned, value)}
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # A name no other writer (process or thread) can pick; it never ends in ``.json``.
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_text(json.dumps(entry, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return path


def _versioned(key: Mapping[str, Any]) -> dict[str, Any]:
    return {**key, "format": FORMAT}


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _checksum(key: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    return sha256_text(_canonical({"key": key, "value": value}))
