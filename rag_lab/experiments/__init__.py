"""The chapter layer: one module per notebook, wording the evaluation library's records.

``nb01_corpus_and_questions`` … ``nb11_extraction`` match ``notebooks/01_…`` …
``notebooks/11_…`` by number and name. Each turns records of :mod:`rag_lab.evaluation` into
the notebook's prose (a ``reading``) and the few tables and figures only that notebook
shows; it measures only what no suite does (notebook 06's identity, 09's generation, 11's
extraction). ``nb11_extraction`` is a package, one module per concern (its PDFs, the cached
extraction, what survives, running lines, OCR, retrieval over extracted text, the claims,
the prose). Beside them:

- ``lab``: the one setup call for the lab's own corpus and questions;
- ``probes``: the identifier questions and literal-trap negatives of ``data/probes.yaml``;
- ``timing``, ``provenance``: one way to time a stage, one versions line;
- ``reproduce``: ``make reproduce``, every notebook in order, progress on the terminal.

May import every other layer; nothing outside this folder imports it.
"""
