"""SQLite connections to an index whose errors are facts, not SQLite's messages.

Every statement the store runs goes through :class:`Connection`, so an
:class:`sqlite3.DatabaseError` never leaves storage: :func:`fact` turns it into the
:mod:`~rag_lab.app.store.errors` class its SQLite result code means (busy or locked,
read-only, a disk or file-system refusal, else a damaged file), naming the index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag_lab.app.store.errors import (
    DiskFull,
    IndexDamaged,
    IndexInaccessible,
    IndexLocked,
    IndexNeedsRecovery,
    IndexReadOnly,
    StoreError,
)

BUSY_SECONDS = 10.0
"""How long a connection waits for another's lock before it gives up."""
_LOCKED = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_INACCESSIBLE = {
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_PERM,
    sqlite3.SQLITE_NOLFS,
    sqlite3.SQLITE_NOMEM,
}


def fact(err: sqlite3.DatabaseError, path: Path, waited: float = BUSY_SECONDS) -> StoreError:
    """What SQLite's ``err`` on the index at ``path`` means, by its primary result code."""
    message = " ".join(str(err).split())
    extended = getattr(err, "sqlite_errorcode", None) or 0
    code = extended & 0xFF  # extended → primary
    if extended == sqlite3.SQLITE_READONLY_ROLLBACK:  # a hot journal a reader cannot play
        return IndexNeedsRecovery(path)
    if code in _LOCKED:
        return IndexLocked(path, waited)
    if code == sqlite3.SQLITE_FULL:
        return DiskFull(path)
    if code == sqlite3.SQLITE_READONLY:
        return IndexReadOnly(path, f"cannot write the index {path} ({message})")
    if code in _INACCESSIBLE:
        return IndexInaccessible(path, f"cannot use the index {path} ({message})")
    return IndexDamaged(path, message)  # corrupt, not a database, a missing table…


class Connection:
    """An autocommit SQLite connection (every transaction opened and closed explicitly).

    ``file`` is opened; ``index`` is what the facts name (the same file, unless a new
    index is being built aside). ``readonly`` opens it in SQLite's read-only mode.
    """

    def __init__(
        self, file: Path, *, readonly: bool, timeout: float, index: Path | None = None
    ) -> None:
        self.index = index or file
        self.timeout = timeout
        with self.facts():
            if readonly:
                uri = file.resolve().as_uri() + "?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout)
            else:
                self._db = sqlite3.connect(file, isolation_level=None, timeout=timeout)
                # A transaction that outgrows the page cache would spill it into the file,
                # which takes the exclusive lock until the commit: every reader then waits
                # (a long document is one transaction while it is embedded). Unspilled, the
                # lock is taken at the commit only, for as long as writing the pages takes.
                self._db.execute("PRAGMA cache_spill = OFF")

    @contextmanager
    def facts(self) -> Iterator[None]:
        """Raise SQLite's errors inside as the facts they are (a misuse stays a bug)."""
        try:
            yield
        except sqlite3.ProgrammingError:
            raise
        except sqlite3.DatabaseError as err:
            raise fact(err, self.index, self.timeout) from err

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        with self.facts():
            return Rows(self._db.execute(sql, params), self)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.facts():
            self._db.executemany(sql, rows)

    def executescript(self, sql: str) -> None:
        with self.facts():
            self._db.executescript(sql)

    @property
    def in_transaction(self) -> bool:
        return self._db.in_transaction

    def close(self) -> None:
        self._db.close()


class Rows:
    """A cursor's rows, fetched lazily; a fault met while fetching is a fact too."""

    def __init__(self, cursor: sqlite3.Cursor, connection: Connection) -> None:
        self._cursor = cursor
        self._connection = connection

    def fetchone(self) -> Any:
        with self._connection.facts():
            return self._cursor.fetchone()

    def __iter__(self) -> Iterator[Any]:
        with self._connection.facts():
            yield from self._cursor
