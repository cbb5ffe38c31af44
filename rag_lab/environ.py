"""The environment variables that tune a run, each read and checked in one place.

A value the lab cannot use is :class:`BadVariable`, one line naming the variable, the
value and what it accepts, before anything waits or spawns on it: ``nan`` seconds would
wait forever, and 99,999 threads take minutes to start before the first query.

>>> lock_seconds(10.0, {"RAG_LAB_LOCK_TIMEOUT": "2.5"})
2.5
>>> threads({"OMP_NUM_THREADS": "abc"})
Traceback (most recent call last):
...
rag_lab.environ.BadVariable: OMP_NUM_THREADS='abc': not a whole number; ...
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from rag_lab.errors import BadEnvironment

LOCK_ENV = "RAG_LAB_LOCK_TIMEOUT"
"""Seconds a second writer of an index waits for the first."""
THREADS_ENV = "OMP_NUM_THREADS"
"""The threads each model runs with (ONNX Runtime's intra-op pool, llama.cpp, OpenMP)."""
THREADS_PER_CORE = 4
"""At most this many threads per core: more only slows a run (and, by the thousand, takes
minutes to start)."""


class BadVariable(BadEnvironment, ValueError):
    """An environment variable set to a value the lab cannot use."""

    def __init__(self, name: str, value: str, why: str, accepted: str) -> None:
        super().__init__(f"{name}={value!r}: {why}; {accepted}")
        self.name, self.value = name, value


def write_only_in_the_cache() -> None:
    """Keep the libraries' own files out of the user's home: ONNX Runtime's telemetry (a
    device id, a database and one event per run under ``~/.cache/Microsoft``) off, and
    matplotlib's font cache in the lab's cache. A value the user set is kept."""
    from rag_lab import paths

    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("MPLCONFIGDIR", str(paths.cache_dir() / "matplotlib"))


def lock_seconds(default: float, environ: Mapping[str, str] = os.environ) -> float:
    """``$RAG_LAB_LOCK_TIMEOUT``: a finite number of seconds, 0 or more (unset or empty:
    ``default``)."""
    value = environ.get(LOCK_ENV, "").strip()
    if not value:
        return default
    accepted = "give the seconds a second writer waits, a number from 0 (do not wait) up"
    try:
        seconds = float(value)
    except ValueError:
        raise BadVariable(LOCK_ENV, value, "not a number", accepted) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise BadVariable(LOCK_ENV, value, "not a finite number 0 or more", accepted)
    return seconds


def threads(environ: Mapping[str, str] = os.environ) -> int | None:
    """``$OMP_NUM_THREADS``: a whole number from 1 to :func:`max_threads` (unset or empty:
    None, the runtime's own choice)."""
    value = environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    most = max_threads()
    accepted = f"give a whole number of threads from 1 to {most} ({THREADS_PER_CORE} per core)"
    try:
        count = int(value)
    except ValueError:
        raise BadVariable(THREADS_ENV, value, "not a whole number", accepted) from None
    if not 1 <= count <= most:
        raise BadVariable(THREADS_ENV, value, "out of range", accepted)
    return count


def max_threads() -> int:
    """The most threads :func:`threads` accepts: :data:`THREADS_PER_CORE` per core."""
    return THREADS_PER_CORE * (os.cpu_count() or 1)


def check() -> None:
    """Check every variable this module reads; raise :class:`BadVariable` for the first
    that is wrong. A command calls it first, before a model or a lock reads them."""
    lock_seconds(0.0)
    threads()
