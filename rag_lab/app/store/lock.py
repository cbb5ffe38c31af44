"""One writer at a time: a lock file beside the index, held for a whole run.

Readers take no lock (they open the index read-only, and SQLite keeps them consistent).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rag_lab.app.store.connection import BUSY_SECONDS
from rag_lab.app.store.errors import IndexBusy, IndexInaccessible
from rag_lab.app.store.records import now


@contextmanager
def writer_lock(path: str | os.PathLike, timeout: float = BUSY_SECONDS) -> Iterator[None]:
    """Hold ``<index>.lock`` for a whole run, so two writers never interleave.

    A second writer waits up to ``timeout`` seconds (a finite number, 0 or more: the
    caller checks it), then raises :class:`~.errors.IndexBusy` naming the running
    one (its pid, from the lock file). The operating system drops the lock when its holder
    dies, even by ``kill -9``.
    """
    import fcntl  # POSIX; imported here so the store itself imports everywhere

    lock = Path(f"{path}.lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise IndexInaccessible(
            path, f"cannot write beside {path} ({lock}): {err.strerror or err}"
        ) from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
                    raise IndexBusy(path, holder, timeout) from None
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, since {now()}".encode(), 0)
        yield
    finally:
        os.close(fd)
