"""The index on Milvus: Milvus Lite in a local folder, or a Milvus server or cluster.

:mod:`.store` is the :class:`~rag_lab.app.store.protocol.Store` (its collections, opened and
closed), in three parts: :mod:`.writes` (the crash-consistency design: a document replaced
whole by write generations), :mod:`.reads` (what a read sees; the records, the chunks and
the engine's search) and :mod:`.generations` (the pointer row; a rebuild swapped in).
:mod:`.rows` is how records and chunks are written as rows; :mod:`.connection` where an
index lives (:class:`MilvusLocation`) and how the client reaches it.
"""

from rag_lab.app.store.milvus.connection import DEFAULT_NAME, MilvusLocation, connect
from rag_lab.app.store.milvus.reads import HNSW_BUILD, HNSW_EF
from rag_lab.app.store.milvus.store import MilvusStore

__all__ = ["DEFAULT_NAME", "HNSW_BUILD", "HNSW_EF", "MilvusLocation", "MilvusStore", "connect"]
