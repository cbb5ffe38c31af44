"""The application: the lab on users' own documents.

- ``store``: the SQLite file that holds documents, their stamps and their vectors.
- ``index``: the stamped index: status, stale detection, the one way to search it.
- ``ingest``: bring an index up to date with a folder, one document at a time.
- ``cli``: the ``rag-lab`` command (index, status, retry, ask, evaluate).

May import the core, ``models`` and ``sources``. The one exception is ``cli``'s
``evaluate`` command, which hands over to :mod:`rag_lab.evaluation.report`.
"""
