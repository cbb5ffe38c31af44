"""JSON values on disk by a key that holds everything deciding them, checked on every read.

The one file cache of the lab: generated answers (:mod:`rag_lab.models.answer_cache`), text
extracted from PDFs and OCR (:mod:`rag_lab.evaluation.extraction_pdfs`). A value is a pure
function of its key (model bytes, exact input, library versions), so a stored value is the
value. One JSON file per entry, ``<root>/<digest>.json``, where ``digest`` is the sha256 of the
canonical JSON of the key. Each file echoes its key in full and carries a sha256 of its own
content:

- a write is atomic (:func:`rag_lab.atomic.write_atomically`), so a reader sees the old entry,
  the new one or none, never half of one; readers only ever open ``<digest>.json``;
- an entry that does not parse, whose key echo differs from the key asked for (a digest
  collision or a hand-edited file), or whose checksum fails (truncated, e.g. by a crash before
  the data reached the disk) reads as missing, so the caller computes the answer again and the
  write replaces the bad file. A stored answer is never trusted on its file name alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab import paths
from rag_lab.atomic import write_atomically
from rag_lab.checksums import sha256_text

FORMAT = 1
"""Version of the entry layout; part of every key, so a new layout never reads an old one."""


class JsonCache:
    """JSON values by key under ``root``; the folder is made on the first write, so a run
    that stores nothing leaves nothing behind."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: Mapping[str, Any]) -> Path:
        """Where the entry for ``key`` lives (whether or not it exists)."""
        return self.root / f"{sha256_text(_canonical(_versioned(key)))}.json"

    def get(self, key: Mapping[str, Any]) -> Any | None:
        """The value stored for ``key``, or None when there is none or it fails a check."""
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None  # missing, unreadable or cut short: computed again
        if not isinstance(entry, dict) or entry.keys() != {"key", "value", "sha256"}:
            return None
        if entry["key"] != _versioned(key) or not self._valid(entry["value"]):
            return None
        if entry["sha256"] != _checksum(entry["key"], entry["value"]):
            return None
        return entry["value"]

    def put(self, key: Mapping[str, Any], value: Any) -> Path:
        """Store ``value`` (anything JSON holds) for ``key`` atomically; returns its path."""
        versioned = _versioned(key)
        entry = {"key": versioned, "value": value, "sha256": _checksum(versioned, value)}
        text = json.dumps(entry, ensure_ascii=False, indent=1)
        return write_atomically(self.path(key), lambda tmp: tmp.write_text(text, "utf-8"))

    def save(self, key: Mapping[str, Any], value: Any) -> Path | None:
        """:meth:`put`, but a cache that cannot be written (read-only, full, its folder gone)
        is a warning on stderr (once a run, :func:`rag_lab.paths.warn_cache`) and None: the
        caller has its value, only the next run pays."""
        try:
            return self.put(key, value)
        except OSError as err:
            why = " ".join((err.strerror or str(err)).split())
            paths.warn_cache(
                self.root,
                f"cannot write the cache {self.root} ({why}); running without it, nothing is "
                f"kept (set ${paths.CACHE_ENV} to a writable folder)",
            )
            return None

    def _valid(self, value: Any) -> bool:
        """Whether a stored value has the shape this cache keeps (any JSON, here)."""
        return True


def _versioned(key: Mapping[str, Any]) -> dict[str, Any]:
    return {**key, "format": FORMAT}


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _checksum(key: Mapping[str, Any], value: Any) -> str:
    return sha256_text(_canonical({"key": key, "value": value}))
