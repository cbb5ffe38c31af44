"""The chapter layer: one module per notebook, the tables and figures only it shows.

``nb01_corpus_and_questions`` … ``nb11_extraction`` match ``notebooks/01_…`` …
``notebooks/11_…`` by number and name. Each builds the tables and figures only that notebook
shows from records of :mod:`rag_lab.evaluation`, and measures only what no suite does
(notebook 06's identity, 09's generation, 11's extraction). No module here writes prose
from numbers: what explains is the notebook's Markdown, and every claim line comes from
:mod:`rag_lab.claims.render`. ``nb11_extraction`` is a package: its PDFs, what it measures
(survival, OCR, retrieval over extracted text), the run with its claims, the views.
Beside them:

- ``lab``: the one setup call for the lab's own corpus and questions;
- ``probes``: the identifier questions and literal-trap negatives of ``data/probes.yaml``;
- ``findings``: the claims ledger gathered, counted by role, and the README's summary;
- ``present``: how a table, a notebook's findings and its environment are shown;
- ``timing``, ``provenance``: one way to time a stage, one versions line;
- ``reproduce``: ``make reproduce``, every notebook in order, progress on the terminal.

May import every other layer; nothing outside this folder imports it.
"""
