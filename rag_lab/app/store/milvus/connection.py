"""Where a Milvus index lives (:class:`MilvusLocation`) and the client that reaches it.

:func:`connect` turns the faults of reaching Milvus into the store's facts
(:mod:`rag_lab.app.store.errors`): a folder that is not Milvus Lite's, a server that does not
answer gRPC (refused before pymilvus 3.0.2 retries it without end), a Milvus Lite folder
another process holds (waited for, then :class:`~rag_lab.app.store.errors.IndexLocked`).

Milvus Lite is a gRPC server that a process runs in its own threads. pymilvus, given a
``*.db`` folder, starts it on a TCP port of 127.0.0.1 without authentication (Milvus Lite
3.2 has none), where any local user could reach it and drop a collection past rag-lab's
lock. rag-lab starts it itself instead (:func:`_lite_uri`), on a Unix domain socket in a
folder of its own made by :func:`tempfile.mkdtemp` (mode 0700): only this user (and root)
can reach it, and no TCP port is opened.
"""

from __future__ import annotations

import atexit
import fcntl
import inspect
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rag_lab.app.store.errors import (
    DiskFull,
    IndexContended,
    IndexInaccessible,
    IndexLocked,
    IndexMissing,
    NotOurFile,
    StoreError,
    mount_point,
)
from rag_lab.app.store.lock import poll, private_folder, try_flock

DEFAULT_NAME = "rag_lab"
"""The index name when the URI gives none (``URI#name`` gives one)."""
CONNECT_SECONDS = 10.0
"""How long to wait for a Milvus server before saying it cannot be reached."""
CALL_SECONDS = 600.0
"""How long one call of the client may wait for an answer (a stopped or overloaded server,
Milvus Lite short of memory) before the engine is said not to answer; long enough to load a
collection of millions of vectors."""
_GRPC_OPTIONS = {"grpc.keepalive_time_ms": 300_000, "grpc.keepalive_permit_without_calls": 0}
"""pymilvus pings every 10 s, even between calls; a gRPC server in Python (Milvus Lite's)
allows one ping in 5 minutes by default and, after a few more, drops the connection with
"too many pings" (seen here in a long run): ping no more often than it allows."""
_NAME = re.compile(r"(?=.{1,64}\Z)[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
"""An index name: a letter, then letters, digits and single underscores, none at the end;
64 characters at most. An index owns the collections named ``<name>__…``; since no name ends
in ``_`` or holds ``__``, no name's ``<name>__`` begins another's (``a__`` would begin
``a___…``, the collections of ``a_``)."""


def pymilvus_client_library() -> Any:
    """The client library, imported on first use (it costs half a second), its own log
    lines silenced: they would reach the terminal raw, and its faults are raised anyway."""
    import pymilvus  # configures its loggers on import: quiet them after

    quiet = ("pymilvus", "pymilvus.milvus_client", "pymilvus.bulk_writer", "milvus_lite")
    for name in (*quiet, "grpc._server"):  # grpc's: Milvus Lite's server runs in this process
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return pymilvus


@dataclass(frozen=True)
class MilvusLocation:
    """Where a Milvus index lives: ``uri`` (a local folder for Milvus Lite, or
    ``http(s)://host:port`` for a server) and the index ``name`` in it."""

    uri: str
    name: str = DEFAULT_NAME

    @classmethod
    def parse(cls, text: str) -> MilvusLocation:
        """``URI`` or ``URI#name``; raises :class:`ValueError` with the reason.

        >>> MilvusLocation.parse("http://db:19530#docs")
        MilvusLocation(uri='http://db:19530', name='docs')
        >>> MilvusLocation.parse("kb.db").local
        True
        """
        uri, _, name = text.partition("#")
        name = name or DEFAULT_NAME
        if not uri:
            raise ValueError("give a folder for Milvus Lite or http://host:port for a server")
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"{name!r} is not an index name: a letter, then up to 63 letters, digits "
                "and single underscores, not ending in one"
            )
        if uri.startswith(("http://", "https://", "tcp://")):
            _check_server_address(uri)
            return cls(uri, name)
        if "://" in uri:
            raise ValueError(
                f"{without_password(uri)}: a local folder, or http://host:port for a server"
            )
        if not uri.rstrip("/").endswith(".db"):
            raise ValueError(f"{uri}: Milvus Lite's folder is named *.db (e.g. kb.db)")
        return cls(str(Path(uri.rstrip("/")).expanduser().absolute()), name)

    @property
    def local(self) -> bool:
        """Milvus Lite in a folder of this machine (else a server)."""
        return "://" not in self.uri

    def __str__(self) -> str:
        """The location as people see it (a message, a listing, a report): ``URI#name``,
        its password hidden (:func:`without_password`)."""
        uri = without_password(self.uri)
        return uri if self.name == DEFAULT_NAME else f"{uri}#{self.name}"

    def hide_password(self, text: str) -> str:
        """``text`` (the client library's error, which may quote the URI or its token
        ``user:password``) with this location's password written ``***``."""
        _, user, password, _ = _userinfo(self.uri)
        return text if password is None else text.replace(f"{user}:{password}", f"{user}:***")


def _check_server_address(uri: str) -> None:
    """Refuse a server URI with no host, a port that is not a number from 1 to 65535, or a
    bracket not closed (``http://[::1``), before anything is tried.

    >>> _check_server_address("http://127.0.0.1:abc")
    Traceback (most recent call last):
    ValueError: http://127.0.0.1:abc: the port is not a number from 1 to 65535 (http://host:port)
    """
    shown = without_password(uri)
    try:
        parsed = urlsplit(uri)
    except ValueError:  # an IPv6 address whose bracket is not closed
        raise ValueError(f"{shown}: not a server address (http://host:port)") from None
    try:
        port = parsed.port
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(f"{shown}: the port is not a number from 1 to 65535 (http://host:port)")
    if not parsed.hostname:
        raise ValueError(f"{shown}: no host (http://host:port)")


def without_password(uri: str) -> str:
    """``uri`` with the password of its user information written ``***``: the one form of a
    server's address that is printed or written (``http://admin:S3cret@db:19530`` is
    ``http://admin:***@db:19530``). Only the client is given the password: pymilvus takes
    ``user:password`` in the URI as its token.

    >>> without_password("http://admin:S3cret@db:19530")
    'http://admin:***@db:19530'
    """
    scheme, user, password, rest = _userinfo(uri)
    return uri if password is None else f"{scheme}{user}:***@{rest}"


def _userinfo(uri: str) -> tuple[str, str, str | None, str]:
    """``scheme://``, the user, the password (None without one) and what follows ``@``."""
    scheme, sep, after = uri.partition("://")
    end = len(re.split(r"[/?]", after, maxsplit=1)[0])
    authority, path = after[:end], after[end:]
    if not sep or "@" not in authority:
        return "", "", None, uri
    userinfo, _, host = authority.rpartition("@")
    user, colon, password = userinfo.partition(":")
    return f"{scheme}://", user, password if colon else None, host + path


def check_lite_folder(where: MilvusLocation, *, create: bool) -> Path:
    """The folder of a Milvus Lite index, refused before anything is written in it or beside
    it: a file or a folder Milvus Lite did not write (:class:`~.errors.NotOurFile`); unless
    ``create``, a missing or empty folder (:class:`~.errors.IndexMissing`: a reader writes
    no skeleton of an index into it)."""
    folder = Path(where.uri)
    if folder.exists() and not folder.is_dir():
        raise NotOurFile(where, "is a file, not a Milvus Lite folder")
    filled = folder.is_dir() and any(folder.iterdir())
    if filled and not (folder / "collections").is_dir():
        raise NotOurFile(where, "is a folder that Milvus Lite did not write")
    if not filled and not create:
        raise IndexMissing(where)
    return folder


def connect(where: MilvusLocation, *, create: bool, wait: float = 0.0) -> Any:
    """A ``pymilvus.MilvusClient`` for ``where``; its faults as the store's facts.

    Milvus Lite lets one process open a folder at a time: another waits up to ``wait``
    seconds, then is refused (:class:`~.errors.IndexLocked`).

    A local folder that is not Milvus Lite's is refused before Milvus touches it
    (:func:`check_lite_folder`).
    """
    try:
        pymilvus = pymilvus_client_library()
    except ImportError as err:  # the extra is not installed
        raise IndexInaccessible(
            where, f"the Milvus client is not installed ({err.name}): pip install rag-lab[milvus]"
        ) from None
    if where.local:
        folder = check_lite_folder(where, create=create)
        if not folder.exists():
            try:
                folder.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise IndexInaccessible(
                    where, f"cannot create the folder of {folder}: {err.strerror or err}"
                ) from None
    if where.local:
        _wait_for_lite(where, wait)
    else:
        _reachable(where)
    lite_errors: tuple[type[Exception], ...] = ()
    if where.local:
        try:
            from milvus_lite.exceptions import MilvusLiteError
        except ImportError as err:
            raise IndexInaccessible(
                where, f"Milvus Lite is not installed ({err.name}): pip install rag-lab[milvus]"
            ) from None
        lite_errors = (MilvusLiteError, RuntimeError)  # RuntimeError: a socket not bound
    failure: list[str] = []

    def attempt() -> pymilvus.MilvusClient | None:
        try:
            uri = _lite_uri(where.uri) if where.local else where.uri
            return pymilvus.MilvusClient(
                uri=uri, timeout=CONNECT_SECONDS, grpc_options=_GRPC_OPTIONS
            )
        except (pymilvus.MilvusException, *lite_errors) as err:
            cause = cause_text(err)
            if where.local and "lock" in cause.lower():
                return None  # Milvus Lite: one process at a time; wait for the other
            failure.append(cause)
            return False  # not a lock: stop waiting

    client = poll(attempt, wait, every=0.2)
    if client:
        import grpc

        return _Facts(client, where, (pymilvus.MilvusException, grpc.RpcError, *lite_errors))
    if where.local:  # a server started for a client that failed holds the folder's lock
        release_lite(where.uri)
    if not failure:
        raise IndexLocked(where, wait)
    cause = where.hide_password(failure[0])
    if _disk_full(cause):
        raise DiskFull(where, _disk(where))
    if where.local:
        raise IndexInaccessible(where, f"Milvus Lite could not open it: {cause}")
    raise IndexInaccessible(
        where, f"cannot reach the Milvus server at {without_password(where.uri)}: {cause}"
    )


class _Facts:
    """A ``pymilvus.MilvusClient`` whose calls wait at most :data:`CALL_SECONDS` each, and
    raise the engine's faults that are facts of the environment as the store's facts
    (:func:`engine_fact`); any other fault as it is."""

    def __init__(self, client: Any, where: MilvusLocation, errors: tuple[type, ...]) -> None:
        self._client, self._where, self._errors = client, where, errors

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._client, name)
        if name.startswith("_") or not callable(found):
            return found
        bounded = "timeout" in inspect.signature(found).parameters

        def call(*args: Any, **kwargs: Any) -> Any:
            if bounded and kwargs.get("timeout") is None:
                kwargs["timeout"] = CALL_SECONDS
            try:
                return found(*args, **kwargs)
            except self._errors as err:
                fact = engine_fact(err, self._where)
                if fact is None:
                    raise
                raise fact from err

        return call


def engine_fact(err: BaseException, where: MilvusLocation) -> StoreError | None:
    """What the engine's ``err`` means when the environment, not rag-lab, is at fault: a
    full disk (:class:`~.errors.DiskFull`, Milvus Lite's ``Errno 28`` or a server's); on a
    server, where rag-lab takes no lock, a collection of the index that another process
    dropped or created meanwhile (:class:`~.errors.IndexContended`); an engine that does
    not answer a call in time, or stopped answering (:class:`~.errors.IndexInaccessible`).
    None otherwise."""
    status = err.code().name if callable(getattr(err, "code", None)) else None  # gRPC's
    engine = "Milvus Lite" if where.local else f"the Milvus server at {where}"
    if status == "DEADLINE_EXCEEDED":
        return IndexInaccessible(where, f"{engine} did not answer within {CALL_SECONDS:g} s")
    if status == "UNAVAILABLE":
        details = where.hide_password(str(err.details()))
        return IndexInaccessible(where, f"{engine} stopped answering ({details})")
    cause = where.hide_password(getattr(err, "message", None) or cause_text(err))
    if _disk_full(cause):
        return DiskFull(where, _disk(where))
    changed = getattr(err, "code", None) == _COLLECTION_NOT_FOUND or "already exist" in cause
    if changed and not where.local:
        return IndexContended(where, f"Milvus: {cause}")
    return None


_COLLECTION_NOT_FOUND = 100
"""Milvus's code for a collection that does not exist (``pymilvus.ErrorCode``)."""


def _disk_full(cause: str) -> bool:
    return "Errno 28" in cause or "No space left on device" in cause


def _disk(where: MilvusLocation) -> str:
    """The disk a full-disk error is about: Milvus Lite's folder's, or the server's."""
    if where.local:
        return f"the disk mounted at {mount_point(Path(where.uri))}"
    return "the Milvus server's disk"


def _reachable(where: MilvusLocation) -> None:
    """Refuse a server that does not answer gRPC within :data:`CONNECT_SECONDS`, before the
    client tries: pymilvus 3.0.2 retries an address that refuses, or that is not gRPC,
    without end, its memory growing by gigabytes a minute (seen here)."""
    import grpc

    parsed = urlsplit(where.uri)
    target = f"{parsed.hostname or 'localhost'}:{parsed.port or 19530}"
    channel = (
        grpc.secure_channel(target, grpc.ssl_channel_credentials())
        if parsed.scheme == "https"
        else grpc.insecure_channel(target)
    )
    try:
        grpc.channel_ready_future(channel).result(timeout=CONNECT_SECONDS)
    except grpc.FutureTimeoutError:
        raise IndexInaccessible(
            where,
            f"cannot reach the Milvus server at {without_password(where.uri)}: no gRPC answer "
            f"within {CONNECT_SECONDS:g} s",
        ) from None
    finally:
        channel.close()


def _wait_for_lite(where: MilvusLocation, wait: float) -> None:
    """Wait up to ``wait`` seconds while another process holds the Milvus Lite folder's
    lock (its ``LOCK`` file, held with ``flock`` while a process has it open), then refuse."""
    lock = Path(where.uri) / "LOCK"
    if not lock.exists():
        return
    with lock.open("rb") as f:
        if not poll(lambda: try_flock(f.fileno()), wait, every=0.2):
            raise IndexLocked(where, wait)
        fcntl.flock(f, fcntl.LOCK_UN)


_LITE: dict[str, tuple[Any, Any, str, str]] = {}
"""Folder → the Milvus Lite server this process runs for it: (gRPC server, database, its
private folder, the client's ``unix:`` URI)."""


_SOCKET_MAX = 107
"""The longest path of a Unix socket on Linux (``sun_path`` holds 108 bytes with its NUL)."""


def _lite_uri(folder: str) -> str:
    """The ``unix:`` URI of the Milvus Lite server of ``folder``, started on first use on a
    socket in a new private folder (0700, :func:`~rag_lab.app.store.lock.private_folder`,
    which removes those of killed processes first); a server another process
    holds the folder's lock of raises Milvus Lite's ``DataDirLockedError``.

    ``start_server_in_thread`` binds ``f"{host}:{port}"``: given ``unix:<socket>`` and port 0
    it listens on the socket file ``<socket>:0``."""
    if folder in _LITE:
        return _LITE[folder][3]
    from milvus_lite.adapter.grpc.server import start_server_in_thread

    private = str(private_folder("rag-lab-milvus-"))
    socket = os.path.join(private, "milvus")
    if len(os.fsencode(f"{socket}:0")) > _SOCKET_MAX:
        os.rmdir(private)
        raise RuntimeError(
            f"its socket in $TMPDIR ({tempfile.gettempdir()}) would be "
            f"{len(os.fsencode(f'{socket}:0'))} bytes long, over the {_SOCKET_MAX} bytes a "
            "Unix socket's path may have: set TMPDIR to a shorter folder"
        )
    try:
        server, db, _ = start_server_in_thread(data_dir=folder, host=f"unix:{socket}", port=0)
    except BaseException:
        shutil.rmtree(private, ignore_errors=True)
        raise
    _LITE[folder] = (server, db, private, f"unix:{socket}:0")
    return _LITE[folder][3]


def release_lite(folder: str) -> None:
    """Stop the Milvus Lite server this process runs for ``folder``, releasing its lock, so
    that another process may open it (a client's ``close`` leaves it running), and remove
    its socket's folder."""
    entry = _LITE.pop(folder, None)
    if entry is None:
        return
    server, db, private, _ = entry
    try:
        server.stop(grace=2).wait(5)  # its requests cut after 2 s; bounded all the same
        db.close()
    finally:
        shutil.rmtree(private, ignore_errors=True)


@atexit.register
def _release_every_lite() -> None:
    for folder in list(_LITE):
        release_lite(folder)


def cause_text(err: BaseException) -> str:
    parts = []
    while err is not None:
        parts.append(str(err))
        err = err.__cause__ or err.__context__
    return " ".join(parts)
