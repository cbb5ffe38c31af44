"""The index on Milvus: Milvus Lite in a local folder, or a Milvus server or cluster.

:mod:`.store` is the :class:`~rag_lab.app.store.protocol.Store` and its crash-consistency
design; :mod:`.rows` how records and chunks are written as rows; :mod:`.connection` where an
index lives (:class:`MilvusLocation`) and how the client reaches it.
"""

from rag_lab.app.store.milvus.connection import DEFAULT_NAME, MilvusLocation, connect
from rag_lab.app.store.milvus.store import HNSW_BUILD, HNSW_EF, MilvusStore

__all__ = ["DEFAULT_NAME", "HNSW_BUILD", "HNSW_EF", "MilvusLocation", "MilvusStore", "connect"]
