"""rag_lab: chunking, retrieval and honest citations, measured end to end.

The package is in four layers; each imports only the layers above it in this list.

- ``rag_lab.*`` (the modules at this level): the chapter's algorithms, pure and model-free.
  ``documents`` and ``markdown`` (what a document is), ``chunking`` (the six strategies),
  ``bm25``, ``dense``, ``fusion``, ``ranking``, ``search`` (first-stage retrieval),
  ``rerank`` and ``late_interaction`` (second stage), ``gate``, ``citations``, ``pipeline``
  and ``answers`` (refuse or answer with server-built citations), ``questions``,
  ``metrics`` and ``stats`` (ground truth and how it is scored), ``checksums``, ``text``,
  ``paths``, ``errors`` (the one root of the package's exceptions). An encoder is passed
  in, never loaded here.
- ``rag_lab.models``: the models and their caches (bi-encoder, token vectors,
  cross-encoder, generator).
- ``rag_lab.sources``: where documents come from (the book's corpus, a user's folder).
- ``rag_lab.app``: the application on users' documents: the stamped index, ingestion,
  the ``rag-lab`` command line.
- ``rag_lab.experiments``: one module per notebook (``nb06_distances_and_refusal`` for
  ``notebooks/06_distances_and_refusal.ipynb``), the chapter's reference values, plots,
  timing, and ``evaluate``, which runs the notebooks' functions on another corpus.
"""

__version__ = "0.1.0"
