"""An index's lifecycle: opened to read, opened to write, rebuilt and swapped in.

The policy every caller that reads or changes an index keeps (the ``rag-lab`` commands do):

- Reading (:func:`reading`) opens the index read-only and never creates it.
- Writing (:func:`writer`, :func:`writing`) first refuses, before a byte is written to the
  file or beside it, a file that is not an index, an index or folder this process cannot
  write, and an index whose name leaves no room for the files written beside it
  (:func:`check_writable`); then holds the one writer's lock for the whole run, and
  refuses a damaged index (the store's quick check).
- A rebuild (:func:`plan_rebuild`, then :func:`rebuilding`) builds a fresh index beside the
  old one (``<index>.rebuild``) and swaps it in atomically when it is complete: it also
  replaces a damaged index, an interrupted one leaves the old index as it was, and it is
  how an index changes its encoder or its backend (:func:`~rag_lab.app.index.resolve_encoder`).
- An index given through a symbolic link is its target (:func:`index_file`): SQLite writes
  its journal beside the target, and so do the lock and a rebuild, which replaces the
  target and keeps the link.

Faults are the facts of :mod:`rag_lab.app.store.errors`; the command line words them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rag_lab.app.index import BACKEND_KEY, ENCODER_KEY, Location, open_index, resolve_encoder
from rag_lab.app.ingest import check_folder
from rag_lab.app.store import (
    BUSY_SECONDS,
    FileKind,
    IndexDamaged,
    IndexMissing,
    IndexNeedsRecovery,
    IndexReadOnly,
    MilvusLocation,
    MilvusStore,
    Store,
    inspect_file,
    writer_lock,
)
from rag_lab.app.store.milvus.connection import check_lite_folder
from rag_lab.environ import lock_seconds
from rag_lab.errors import BadInput
from rag_lab.models.encoder import DEFAULT_ENCODER

REBUILD_SUFFIX = ".rebuild"
"""The fresh index of a rebuild is ``<index><suffix>`` until it is swapped in."""
ROOM = len(f"{REBUILD_SUFFIX}-journal")
"""The most bytes a file written beside the index adds to its name: the journal of a
rebuild's fresh file, ``<index>.rebuild-journal`` (SQLite's ``-journal``, the ``.lock``
and the file an index is created under are shorter)."""
NAME_MAX = 255
"""A name's limit in bytes when the file system does not say (ext4, XFS, Btrfs, APFS)."""


class IndexNameTooLong(BadInput, ValueError):
    """An index whose name leaves less than :data:`ROOM` bytes under the file system's
    limit on a name: the files written beside it could not be created."""

    def __init__(self, path: Path, size: int, limit: int) -> None:
        super().__init__(
            f"{path}: its name is {size} bytes, and the files written beside it add up to "
            f"{ROOM} more (its rebuild's journal, {path.name}{REBUILD_SUFFIX}-journal), over "
            f"this file system's limit of {limit} bytes a name"
        )
        self.path = path


def exists(where: Location) -> bool:
    """Is there something at ``where`` already (a file, a Milvus Lite folder; a server: yes)?"""
    if isinstance(where, MilvusLocation):
        return not where.local or Path(where.uri).exists()
    return where.exists()


def on_disk(where: Location) -> Path | None:
    """The file (SQLite) or folder (Milvus Lite) of this machine that holds the index at
    ``where``; None for a server. What a scan of the indexed folder must not read."""
    if isinstance(where, MilvusLocation):
        return Path(where.uri) if where.local else None
    return where


def index_file(path: Path) -> Path:
    """The file an index path names: the target of a symbolic link, else ``path``.

    Callers pass this to the functions below, so that the writer's lock, the journal
    (SQLite follows the link) and a rebuild's fresh file are all beside the one file, and
    a rebuild replaces the target, not the link. A broken link stays a link: the store
    refuses it (it would create a file elsewhere).
    """
    return path.resolve() if path.is_symlink() and path.exists() else path


def check_writable(path: Location) -> None:
    """Refuse an index file, or the folder to create it in, that this process cannot write.

    Raises :class:`~rag_lab.app.store.errors.IndexReadOnly`; the folder of an existing
    index must be writable too, since SQLite writes a journal beside the file.
    :class:`~rag_lab.app.store.errors.IndexNeedsRecovery` when a writer that stopped left
    a journal there too, which this process cannot roll back; :class:`IndexNameTooLong`
    when the index's name leaves no room for the files written beside it. A Milvus Lite
    folder is checked as a file is; a server's permissions are the server's to refuse.
    """
    if isinstance(path, MilvusLocation):
        if not path.local:
            return
        path = Path(path.uri)
        place = path if path.exists() else next(p for p in path.parents if p.exists())
        if not os.access(place, os.W_OK):
            raise IndexReadOnly(path, f"cannot write the index: {place} is read-only")
        return
    place = path if path.exists() else next(p for p in path.parents if p.exists())
    size, limit = len(os.fsencode(path.name)), _name_max(place if place.is_dir() else place.parent)
    if size + ROOM > limit:
        raise IndexNameTooLong(path, size, limit)
    writable = os.access(place, os.W_OK) and (not path.exists() or os.access(path.parent, os.W_OK))
    if not writable and _hot_journal(path):
        raise IndexNeedsRecovery(path)
    if not os.access(place, os.W_OK):
        what = "file" if place == path else "folder"
        raise IndexReadOnly(path, f"cannot write the index: the {what} {place} is read-only")
    if path.exists() and not os.access(path.parent, os.W_OK):
        raise IndexReadOnly(
            path,
            f"cannot write the index: its folder {path.parent} is read-only (SQLite writes a "
            "journal beside the file)",
        )


@contextmanager
def reading(path: Location, *, check: bool = False) -> Iterator[Store]:
    """The index at ``path``, read-only, closed on leaving; a missing file is
    :class:`~rag_lab.app.store.errors.IndexMissing`, not a new index.

    ``check``: first refuse a damaged index (the store's quick check).
    """
    with open_index(path, readonly=True) as store:
        if check:
            _check_sound(store, path)
        yield store


@contextmanager
def writer(path: Location, *, create: bool = True) -> Iterator[None]:
    """Hold the one writer's lock on ``path`` inside, after refusing what cannot be written.

    Refused first, in this order and before a lock file is written beside it: a file that
    is not an index; no index at all unless ``create``; a file or folder this process
    cannot write. A second writer waits ``$RAG_LAB_LOCK_TIMEOUT`` seconds (default
    :data:`~rag_lab.app.store.BUSY_SECONDS`), then is refused naming the first.
    """
    if isinstance(path, MilvusLocation):
        if not create and not exists(path):
            raise IndexMissing(path)
        check_writable(path)
        if not path.local:  # a server: rag-lab does not lock across machines
            yield
            return
        check_lite_folder(path, create=True)  # a file there gets no lock beside it
        with writer_lock(Path(path.uri), lock_seconds(BUSY_SECONDS)):
            yield
        return
    if inspect_file(path) is FileKind.MISSING and not create:
        raise IndexMissing(path)
    check_writable(path)
    with writer_lock(path, lock_seconds(BUSY_SECONDS)):
        for left in leftovers(path):  # no rebuild runs: this process holds the lock
            left.unlink(missing_ok=True)
        yield


def leftovers(path: Location) -> list[Path]:
    """What a rebuild killed before it could clean up (``kill -9``, a power cut) left beside
    a SQLite index: its fresh file and that file's journal. The next writer removes them
    (:func:`writer`); while a writer holds the lock they may be its own, in progress."""
    if isinstance(path, MilvusLocation):
        return []  # a stopped rebuild's generation: the next writer drops it (MilvusStore)
    fresh = path.with_name(path.name + REBUILD_SUFFIX)
    return [p for p in (fresh, Path(f"{fresh}-journal")) if p.exists()]


@contextmanager
def writing(path: Location, *, create: bool = True) -> Iterator[Store]:
    """:func:`writer`, then the index opened for writing (created if missing) and checked."""
    with writer(path, create=create), open_index(path) as store:
        _check_sound(store, path)
        yield store


@dataclass(frozen=True)
class RebuildPlan:
    """What a rebuild will do, decided before anything is written."""

    folder: Path
    """The folder to index, resolved."""
    backend: str
    """The encoder backend of the fresh index."""
    damaged: str | None = None
    """Why the old index could not be read, when it could not (it is replaced all the same)."""
    encoder: str = DEFAULT_ENCODER
    """The encoder of the fresh index."""


def plan_rebuild(
    path: Location, folder: Path, requested: str | None, encoder: str | None = None
) -> RebuildPlan:
    """The folder, encoder and backend of a rebuild of the index at ``path`` from ``folder``.

    They are :func:`~rag_lab.app.index.resolve_encoder`'s with ``rebuild`` (``requested``
    is the backend asked for, ``encoder`` the encoder): the ones asked for, else the old
    index's, else the defaults. An old index of another folder is refused
    (:class:`~rag_lab.sources.folder.IngestError`); a damaged one is noted. Hold the writer
    lock (:func:`writer`).
    """
    root = folder.resolve()
    held, damaged = None, None
    chosen = resolve_encoder(encoder, requested, None, rebuild=True)
    try:
        with reading(path) as old:
            held = old.meta("folder")
            chosen = resolve_encoder(encoder, requested, old, rebuild=True)
    except IndexMissing:
        pass
    except IndexDamaged as err:
        damaged = err.what
    check_folder(held, root)
    return RebuildPlan(root, chosen[1], damaged, chosen[0])


@contextmanager
def rebuilding(path: Location, backend: str, encoder: str = DEFAULT_ENCODER) -> Iterator[Store]:
    """A fresh index beside ``path``, recording ``encoder`` and ``backend``, swapped in when
    the block ends.

    Until then the old index is untouched (readers keep reading it); if the block raises
    (or the process dies), the fresh file is removed, or by the next rebuild, and the old
    index stays as it was. Hold the writer lock (:func:`writer`). On Milvus the fresh index
    is a new generation of collections, swapped in by one upsert of the index's pointer
    (:meth:`~rag_lab.app.store.MilvusStore.promote`); a killed rebuild's are dropped by the
    next writer.
    """
    if isinstance(path, MilvusLocation):
        with _milvus_rebuilding(path, backend, encoder) as store:
            yield store
        return
    fresh = path.with_name(path.name + REBUILD_SUFFIX)
    journals = [Path(f"{p}-journal") for p in (fresh, path)]
    for stale in (fresh, journals[0]):  # what a killed rebuild left
        stale.unlink(missing_ok=True)
    try:
        with open_index(fresh) as store:
            _record_encoder(store, backend, encoder)
            yield store
        # A hot journal of the old file must never be played into the new one.
        journals[1].unlink(missing_ok=True)
        os.replace(fresh, path)
    finally:
        for leftover in (fresh, journals[0]):
            leftover.unlink(missing_ok=True)


@contextmanager
def _milvus_rebuilding(where: MilvusLocation, backend: str, encoder: str) -> Iterator[Store]:
    store = MilvusStore.fresh_generation(where)
    try:
        _record_encoder(store, backend, encoder)
        yield store
        store.promote()
    except BaseException:
        store.drop()
        raise
    finally:
        store.close()


def _record_encoder(store: Store, backend: str, encoder: str) -> None:
    store.set_meta(BACKEND_KEY, backend)
    store.set_meta(ENCODER_KEY, encoder)


def _name_max(folder: Path) -> int:
    """The file system's limit on a name in ``folder``, in bytes."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # not POSIX, or it does not say
        return NAME_MAX


def _hot_journal(path: Path) -> bool:
    """Whether a writer that stopped mid-transaction left its journal beside ``path``."""
    try:
        return Path(f"{path}-journal").stat().st_size > 0
    except OSError:
        return False


def _check_sound(store: Store, path: Location) -> None:
    """A quick check before using an index: a damaged file is refused, not half-read."""
    problems = store.integrity(quick=True)
    if problems:
        raise IndexDamaged(path, problems[0])
