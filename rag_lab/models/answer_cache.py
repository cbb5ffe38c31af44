"""Generated answers on disk, keyed by everything that decides their text, so a re-run is free.

The vector cache's counterpart for :mod:`rag_lab.models.generator`: greedy decoding makes an
answer a function of its key (model bytes, the full prompt, the decoding parameters), so a
stored answer is the answer. Entries are :class:`~rag_lab.json_cache.JsonCache` files: named
by the sha256 of the key, echoing it, checksummed, written atomically; one that fails a check
reads as missing and is generated again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_lab import paths
from rag_lab.json_cache import FORMAT, JsonCache, _checksum

__all__ = ["FORMAT", "AnswerCache", "_checksum"]


class AnswerCache(JsonCache):
    """Answer records (JSON objects) under ``root`` (default ``<cache>/answers``)."""

    def __init__(self, root: Path | None = None) -> None:
        super().__init__(root or paths.cache_dir() / "answers")

    def _valid(self, value: Any) -> bool:
        return isinstance(value, dict)
