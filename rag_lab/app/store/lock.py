"""One writer at a time: a lock file beside the index, held for a whole run; the one
bounded wait every store uses (:func:`poll`); and a process's private temporary folder,
which the next run removes if the process was killed before it could
(:func:`private_folder`).

Readers take no lock (they open the index read-only, and SQLite keeps them consistent).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from rag_lab.app.store.connection import BUSY_SECONDS
from rag_lab.app.store.errors import DiskFull, IndexBusy, IndexInaccessible
from rag_lab.app.store.records import now

T = TypeVar("T")


def poll(attempt: Callable[[], T | None], timeout: float, every: float) -> T | None:
    """Call ``attempt`` every ``every`` seconds until it returns something other than
    ``None``, and return that; ``None`` once ``timeout`` seconds have passed. ``attempt``
    runs at least once.

    >>> tries = iter([None, None, "open"])
    >>> poll(lambda: next(tries), timeout=5, every=0.01)
    'open'
    >>> poll(lambda: None, timeout=0.02, every=0.01) is None
    True
    """
    deadline = time.monotonic() + timeout
    while True:
        got = attempt()
        if got is not None:
            return got
        if time.monotonic() >= deadline:
            return None
        time.sleep(every)


def try_flock(fd: int) -> bool | None:
    """Take an exclusive ``flock`` on ``fd`` without blocking: True, or None while another
    process holds it (for :func:`poll`)."""
    import fcntl  # POSIX; imported here so the store itself imports everywhere

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return None
    return True


@contextmanager
def writer_lock(path: str | os.PathLike, timeout: float = BUSY_SECONDS) -> Iterator[None]:
    """Hold ``<index>.lock`` for a whole run, so two writers never interleave.

    A second writer waits up to ``timeout`` seconds (a finite number, 0 or more: the
    caller checks it), then raises :class:`~.errors.IndexBusy` naming the running
    one (its pid, from the lock file). The operating system drops the lock when its holder
    dies, even by ``kill -9``.
    """
    lock = Path(f"{path}.lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise IndexInaccessible(
            path, f"cannot write beside {path} ({lock}): {err.strerror or err}"
        ) from None
    try:
        if not poll(lambda: try_flock(fd), timeout, every=0.1):
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
            raise IndexBusy(path, holder, timeout)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}, since {now()}".encode(), 0)
        except OSError as err:
            if err.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DiskFull(path) from None
            raise IndexInaccessible(path, f"cannot write {lock}: {err.strerror or err}") from None
        yield
    finally:
        os.close(fd)


def writer_running(path: str | os.PathLike) -> bool:
    """Whether a process holds the writer lock of the index at ``path`` now (read without
    writing: a missing lock file is no writer)."""
    try:
        fd = os.open(f"{path}.lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        return try_flock(fd) is None  # closing the descriptor releases a lock taken here
    finally:
        os.close(fd)


def private_folder(prefix: str) -> Path:
    """A new folder of this process's own in ``$TMPDIR`` (mode 0700, :func:`tempfile.mkdtemp`),
    named ``<prefix><pid>-…``. First, this user's folders of the same prefix whose process
    no longer runs (killed before it could remove its own) are removed."""
    for old in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = old.name.removeprefix(prefix).partition("-")[0]
        if not pid.isdigit() or old.is_symlink() or not old.is_dir() or running(int(pid)):
            continue
        if old.stat().st_uid == os.getuid():
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def running(pid: int) -> bool:
    """Whether a process ``pid`` runs (this user's or another's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
