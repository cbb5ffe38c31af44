"""One way to write a file so that a reader sees the old file, the new one or none: never half.

The content is written to a temporary file beside ``dest`` whose name no other writer
(process or thread) can pick and which never ends like ``dest``, then renamed over it with
``os.replace`` (atomic on POSIX and Windows for files on one file system). If writing fails,
the temporary file is removed and ``dest`` is left as it was; an error of the system that
named the temporary file names ``dest`` (the one a user knows). The temporary name keeps at
most :data:`NAME_KEPT` bytes of ``dest``'s (:func:`name_kept`), so that it stays within a
file system's limit on a name (255 bytes) whatever ``dest``'s is.

>>> import tempfile; from pathlib import Path
>>> dest = Path(tempfile.mkdtemp()) / "a.txt"
>>> write_atomically(dest, lambda tmp: tmp.write_text("done")).read_text()
'done'
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

NAME_KEPT = 64
"""Bytes of a file's name that a temporary name beside it keeps (then a unique tail)."""


def name_kept(name: str) -> str:
    """``name`` cut to at most :data:`NAME_KEPT` bytes (whole characters), for a temporary
    name beside the file that stays short whatever the file's name is.

    >>> name_kept("é" * 40) == "é" * 32
    True
    """
    return os.fsencode(name)[:NAME_KEPT].decode("utf-8", "ignore") or "file"


def write_atomically(dest: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a fresh temporary path beside ``dest``, then move it to ``dest``.

    The folder is made if missing. Returns ``dest``.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{name_kept(dest.name)}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        write(tmp)
        os.replace(tmp, dest)
    except OSError as err:  # the system names the temporary file: name the one asked for
        if err.filename is None or os.fspath(err.filename) != os.fspath(tmp):
            raise
        raise OSError(err.errno, err.strerror, str(dest)) from None
    finally:
        tmp.unlink(missing_ok=True)
    return dest
