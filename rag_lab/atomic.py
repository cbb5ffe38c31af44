"""One way to write a file so that a reader sees the old file, the new one or none: never half.

The content is written to a temporary file beside ``dest`` whose name no other writer
(process or thread) can pick and which never ends like ``dest``, then renamed over it with
``os.replace`` (atomic on POSIX and Windows for files on one file system). If writing fails,
the temporary file is removed and ``dest`` is left as it was.

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


def write_atomically(dest: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a fresh temporary path beside ``dest``, then move it to ``dest``.

    The folder is made if missing. Returns ``dest``.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        write(tmp)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest
