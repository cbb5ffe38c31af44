"""What an option's value must be, checked as it is parsed: a bad value is argparse's
one-line refusal (exit 2) before anything runs."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from rag_lab.app.index import Location, default_path
from rag_lab.app.store import MilvusLocation

MAX_CUTOFF = 2.0
"""Cosine distance runs from 0 (same direction) to 2 (opposite)."""


def store_uri(text: str) -> MilvusLocation:
    """A Milvus index: ``KB.db`` (Milvus Lite), ``http://host:port``, each with ``#name``."""
    try:
        return MilvusLocation.parse(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def index_option(where: Location) -> str:
    """The option that names the index ``where`` as it is given: ``--store URI`` for Milvus
    (its password hidden), ``--index PATH`` for a SQLite file."""
    return f"--store {where}" if isinstance(where, MilvusLocation) else f"--index {where}"


def index_in_command(where: Location | None) -> str:
    """What a command to type adds so that it acts on ``where``: `` --store URI`` or
    `` --index PATH``; nothing for the default index file (or no index).

    >>> index_in_command(MilvusLocation.parse("http://db:19530#docs"))
    ' --store http://db:19530#docs'
    """
    if where is None or (isinstance(where, Path) and where == default_path()):
        return ""
    return f" {index_option(where)}"


def _read(text: str, kind: type, noun: str):
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None


def _within(text: str, value: float, lo: float, hi: float, say: str) -> float:
    if not math.isfinite(value) or not lo <= value <= hi:
        raise argparse.ArgumentTypeError(f"{text}{say}")
    return value


def cutoff(text: str) -> float:
    """A cosine-distance cutoff: a finite number in [0, 2]."""
    value = _read(text, float, "a number")
    say = f" is not a cosine distance: give a number from 0 to {MAX_CUTOFF:g}"
    return _within(text, value, 0, MAX_CUTOFF, say) + 0.0  # -0 is 0, and is printed so


def confidence(text: str) -> float:
    """An OCR confidence threshold: a number in [0, 100]."""
    return _within(
        text, _read(text, float, "a number"), 0, 100, ": a confidence runs from 0 to 100"
    )


def fraction(text: str) -> float:
    """A rate: a number in [0, 1]."""
    return _within(text, _read(text, float, "a number"), 0, 1, ": give a rate from 0 to 1")


def count(text: str) -> int:
    """A count of at least 0."""
    return int(_within(text, _read(text, int, "a whole number"), 0, math.inf, ": give 0 or more"))


def positive(text: str) -> int:
    """A count of at least 1."""
    return int(_within(text, _read(text, int, "a whole number"), 1, math.inf, ": give at least 1"))


def cost(text: str) -> float:
    """What a bluff costs in refusals: a finite number above 0 (at most a million)."""
    value = _read(text, float, "a number")
    say = ": give how many refusals one bluff is worth, a number above 0 (at most 1e6)"
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text}{say}")
    return _within(text, value, 0, 1e6, say)
