"""What can be wrong with an index file, as facts: what and where, never what to type.

Storage raises these (SQLite's own errors are translated where they happen,
:mod:`rag_lab.app.store.connection`); the command line adds what to do, with its commands
and options (:mod:`rag_lab.app.cli`). Each is an :class:`~rag_lab.errors.UnusableIndex`
and keeps ``path``, the index file.
"""

from __future__ import annotations

import os
from pathlib import Path

from rag_lab.app.store.schema import SCHEMA_VERSION
from rag_lab.errors import UnusableIndex


class StoreError(UnusableIndex, RuntimeError):
    """The index file cannot be used as asked; the message says what and where."""

    def __init__(self, path: str | os.PathLike, message: str) -> None:
        super().__init__(message)
        # A file's path; another store's location (a Milvus URI) is kept as it is.
        self.path = Path(path) if isinstance(path, str | os.PathLike) else path


class IndexMissing(StoreError):
    """No file where the index should be, and the command does not create one."""

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path, f"no index at {path}")


class NotOurFile(StoreError):
    """A file that is not a rag-lab index (empty, not SQLite, another program's database).

    It is refused before a byte is written to it or beside it. ``what`` says what it is.
    """

    def __init__(self, path: str | os.PathLike, what: str) -> None:
        super().__init__(path, f"{path} {what}")
        self.what = what


class NotAFile(NotOurFile):
    """A folder where the index file should be."""

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(path, "is a folder, not an index file")


class OtherSchema(StoreError):
    """A rag-lab index of a schema this version neither reads nor upgrades."""

    def __init__(self, path: str | os.PathLike, found: object) -> None:
        super().__init__(
            path, f"{path} has index schema {found}; this rag_lab reads {SCHEMA_VERSION}"
        )
        self.found = found


class IndexDamaged(StoreError):
    """The file is ours, but its content cannot be trusted; ``what`` is the first symptom."""

    def __init__(self, path: str | os.PathLike, what: str) -> None:
        super().__init__(path, f"the index {path} is damaged ({what})")
        self.what = what


class IndexLocked(StoreError):
    """Another process held SQLite's lock on the index for longer than a connection waits."""

    def __init__(self, path: str | os.PathLike, waited: float) -> None:
        super().__init__(
            path, f"the index {path} is locked by another process (waited {waited:g} s)"
        )
        self.waited = waited


class IndexBusy(StoreError):
    """Another rag-lab holds the writer lock of the index (``holder``: its pid and since when)."""

    def __init__(self, path: str | os.PathLike, holder: str, waited: float) -> None:
        super().__init__(
            path, f"{path} is being written by another rag-lab ({holder}); waited {waited:g} s"
        )
        self.holder = holder
        self.waited = waited


class IndexNeedsRecovery(StoreError):
    """A writer stopped mid-transaction and left a hot journal (``<index>-journal``) that
    this process cannot roll back, since it cannot write the index or its folder. Until a
    process that can write them opens the index (which rolls the journal back), the file
    holds a half-written transaction and is not read."""

    def __init__(self, path: str | os.PathLike) -> None:
        super().__init__(
            path,
            f"the index {path} was left mid-transaction by a writer that stopped (its journal "
            f"{path}-journal is to be rolled back), and this process cannot write the file or "
            "its folder to roll it back",
        )


class IndexReadOnly(StoreError):
    """The index, or the folder it is written in, cannot be written by this process."""


class IndexInaccessible(StoreError):
    """The index cannot be created, opened or read: the disk or the file system refused."""


class DiskFull(IndexInaccessible):
    """The disk that holds the index has no space left (``disk``: which; by default the one
    mounted where the index's file or folder is). What was written is whole: each document
    is written whole or not at all."""

    def __init__(self, path: str | os.PathLike, disk: str | None = None) -> None:
        disk = disk or f"the disk mounted at {mount_point(Path(os.fspath(path)))}"
        super().__init__(path, f"no space left on {disk}, which holds the index {path}")


class IndexContended(StoreError):
    """On a Milvus server, where rag-lab takes no lock, another process changed the index
    while this one used it (``cause``: the engine's words, such as a collection that another
    writer dropped or created meanwhile)."""

    def __init__(self, path: str | os.PathLike, cause: str) -> None:
        super().__init__(
            path,
            f"another process changed the index {path} while this one used it ({cause}); "
            "rag-lab takes no lock on a Milvus server",
        )


class IndexNotIndexed(StoreError):
    """A Milvus server had not indexed the rows just written within the wait: they are
    stored and searchable, through its temporary index, until it has."""

    def __init__(self, path: str | os.PathLike, indexed: int, total: int, waited: float) -> None:
        super().__init__(
            path,
            f"the Milvus server at {path} had indexed {indexed:,} of {total:,} chunks after "
            f"{waited:g} s; what was written is kept and searched, with lower recall, until "
            "its index covers every chunk",
        )
        self.indexed = indexed
        self.total = total


def mount_point(path: Path) -> Path:
    """The mount point of the file system that holds ``path`` (or would: its nearest
    existing folder).

    >>> mount_point(Path("/no/such/folder")) == Path("/")
    True
    """
    place = path.absolute()
    while not place.exists():
        place = place.parent
    while not os.path.ismount(place):
        place = place.parent
    return place
