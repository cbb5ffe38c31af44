"""The evaluation library: measures of a RAG pipeline as typed records of numbers.

It knows nothing of notebooks or of the chapter. Suites take a corpus, questions, chunkings
and an encoder and return records (recall tables, paired comparisons, gate sweeps, span
scores, destroyed answers); records render themselves as tables only when asked; verdicts
come from one vocabulary (:mod:`rag_lab.evaluation.verdicts`). ``rag-lab evaluate`` and the
notebook modules both call it.

May import the core (``rag_lab.*``), ``models`` and ``sources``; never ``app`` or
``experiments``.
"""
