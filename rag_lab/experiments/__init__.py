"""The experiments: one module per notebook, returning its tables, figures and readings.

``nb01_corpus_and_questions`` … ``nb11_extraction`` match ``notebooks/01_…`` …
``notebooks/11_…`` by number and name; ``nb11_extraction`` is a package, one module per
concern (its PDFs, the cached extraction, what survives, running lines, OCR, retrieval
over extracted text, the claims, the prose). Beside them:

- ``lab``: the one setup call (corpus, questions, encoder, chunkings, indexes);
- ``runs``: every query through dense, BM25 and hybrid retrieval, as first-hit ranks;
- ``tables``: the Recall@k and paired-test tables several notebooks share;
- ``chapter``: the chapter's published figures, the only place they are written;
- ``plots``, ``timing``, ``provenance``: one look, one way to time, one versions line;
- ``evaluate``: the notebooks' functions run on another corpus (``rag-lab evaluate``).

May import every other layer; nothing outside this folder imports it (except ``rag-lab
evaluate``).
"""
