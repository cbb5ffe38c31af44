"""The application: the lab on users' own documents.

- ``store``: where an index keeps documents, their stamps and their vectors: the records,
  the :class:`~rag_lab.app.store.Store` protocol and its SQLite implementation, file
  identification, the writer lock, and what can be wrong with an index file, as facts.
- ``index``: the stamped index: status, stale detection, the encoder backend (one rule,
  :func:`~rag_lab.app.index.resolve_backend`), the one way to search it.
- ``deployed``: what an index serves: its chunking strategy, its retriever (dense, BM25,
  hybrid) and its stored refusal cutoff with the evidence for it.
- ``ingest``: bring an index up to date with a folder, one document at a time.
- ``lifecycle``: open an index to read or to write (writability, the writer lock, a quick
  check), and rebuild it beside the old one and swap it in.
- ``values``: what an option's value must be (a cutoff, a rate, a count, a store URI).
- ``arguments``: the ``rag-lab`` arguments, one ``define_<command>_args`` per subcommand.
- ``output``: what the commands print (an indexing report, an answer, status as JSON).
- ``exits``: the exit statuses, and the one table from a kind of error to its status.
- ``commands``: the body of each ``rag-lab`` subcommand (index, retry, status, ask, evaluate).
- ``cli``: the ``rag-lab`` command: dispatch to the bodies, and the words for every error
  (commands and options are named only there, in ``commands`` and in ``arguments``).

Within the folder each module imports only those above it in this list (``store`` none of
them). May import the core (:mod:`rag_lab.errors` among it), ``models`` and ``sources``.
The one exception is the ``evaluate`` command (:mod:`rag_lab.app.commands.evaluate`), which
hands over to :mod:`rag_lab.evaluation` (the evaluation library).
"""
