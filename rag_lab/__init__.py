"""rag_lab: chunking, retrieval and honest citations, measured end to end.

The package is in six layers; each imports only the layers the list allows it
(``tests/test_layers.py`` checks every import).

- ``rag_lab.*`` (the modules at this level): the chapter's algorithms, pure and model-free.
  ``documents`` and ``markdown`` (what a document is), ``chunking`` (the six strategies and
  the one definition of relevance), ``bm25``, ``dense``, ``fusion``, ``ranking``, ``search``
  (first-stage retrieval), ``rerank`` and ``late_interaction`` (second stage), ``gate``,
  ``citations``, ``pipeline`` and ``answers`` (refuse or answer with server-built citations),
  ``questions``, ``needles`` and ``spans`` (ground truth), ``metrics`` and ``stats`` (how it
  is scored), and the plumbing: ``errors`` (one exception root), ``checksums``, ``atomic``,
  ``json_cache``, ``progress``, ``text``, ``paths``; and ``claims``, the claims as data
  (``chapter.yaml``, the analysis plan), with the verdict vocabulary, the one judge and the
  one renderer. An encoder is passed in, never loaded here. Imports only itself.
- ``rag_lab.models``: the models and their caches (bi-encoder, token vectors,
  cross-encoder, generator). Imports the core.
- ``rag_lab.sources``: where documents come from (the book's corpus, Chroma's benchmark and
  its question file, a user's folder, PDFs). Imports the core.
- ``rag_lab.evaluation``: the evaluation library: suites that return typed records of
  numbers, the ledger that joins a declared claim to them, the report ``rag-lab evaluate``
  writes. Knows nothing of notebooks. Imports the three above.
- ``rag_lab.app``: the application on users' documents: the stamped index, ingestion,
  the ``rag-lab`` command line. Imports the core, models and sources (and the evaluation
  library inside ``rag-lab evaluate`` only).
- ``rag_lab.experiments``: the chapter layer: one module per notebook, the views (tables
  and figures) only that notebook shows of the evaluation library's records, and what needs
  the application (notebook 08's drills); the setup, ``make reproduce`` and the page check.
  Imports everything; nothing imports it.
"""

__version__ = "0.1.0"
