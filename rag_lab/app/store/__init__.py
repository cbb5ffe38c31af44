"""Where a persistent index keeps its documents, chunks and vectors: a small interface, and SQLite.

- ``records``: what is kept per document (:class:`Status`, :class:`Stamp`, :class:`Pages`,
  :class:`DocumentRecord`).
- ``protocol``: :class:`Store`, everything the index, the indexer and the command line ask
  of storage, so a server-grade database can replace SQLite without touching them. Its one
  promise beyond reading and writing: a document is replaced whole or not at all.
- ``sqlite``: :class:`SQLiteStore`, the store in one SQLite file; ``schema`` its tables,
  marks and upgrades; ``connection`` the connections whose SQLite errors become facts.
- ``milvus``: :class:`MilvusStore`, the store on Milvus (Milvus Lite in a local folder, or a
  server) at a :class:`MilvusLocation`, with the engine's own (approximate) search.
- ``identify``: :func:`inspect_file`, is a file a rag-lab index, read before anything is
  written (a file that is not ours is never touched).
- ``lock``: :func:`writer_lock`, one writer at a time (readers open read-only); the one
  bounded wait; a process's private temporary folder.
- ``errors``: what can be wrong with an index file, as facts (:class:`StoreError` and its
  subclasses): what and where, never a command or an option, which are the caller's words.

Imports the core (``chunking``) and :mod:`rag_lab.errors`, nothing else of the package.
"""

from rag_lab.app.store.connection import BUSY_SECONDS
from rag_lab.app.store.errors import (
    DiskFull,
    IndexBusy,
    IndexContended,
    IndexDamaged,
    IndexInaccessible,
    IndexLocked,
    IndexMissing,
    IndexNeedsRecovery,
    IndexNotIndexed,
    IndexReadOnly,
    NotAFile,
    NotOurFile,
    OtherSchema,
    StoreError,
)
from rag_lab.app.store.identify import FileKind, inspect_file
from rag_lab.app.store.lock import writer_lock
from rag_lab.app.store.milvus import MilvusLocation, MilvusStore
from rag_lab.app.store.protocol import DocumentTooLarge, DocumentWriter, Store
from rag_lab.app.store.records import DocumentRecord, Pages, Stamp, Status
from rag_lab.app.store.schema import APPLICATION_ID, SCHEMA_VERSION, UPGRADABLE
from rag_lab.app.store.sqlite import SQLiteStore

__all__ = [
    "APPLICATION_ID",
    "BUSY_SECONDS",
    "SCHEMA_VERSION",
    "UPGRADABLE",
    "DiskFull",
    "DocumentRecord",
    "DocumentTooLarge",
    "DocumentWriter",
    "FileKind",
    "IndexBusy",
    "IndexContended",
    "IndexDamaged",
    "IndexInaccessible",
    "IndexLocked",
    "IndexMissing",
    "IndexNeedsRecovery",
    "IndexNotIndexed",
    "IndexReadOnly",
    "MilvusLocation",
    "MilvusStore",
    "NotAFile",
    "NotOurFile",
    "OtherSchema",
    "Pages",
    "SQLiteStore",
    "Stamp",
    "Status",
    "Store",
    "StoreError",
    "inspect_file",
    "writer_lock",
]
