"""The evaluation library: measures of a RAG pipeline as typed records of numbers.

It knows nothing of notebooks. Suites take a corpus, questions, chunkings and an encoder
and return records; records render themselves as tables only when asked:

- ``lab``: a corpus, its questions, an encoder and the six chunkings, indexed on first use;
- ``runs``, ``retrieval``: queries through dense, BM25 and hybrid, as first-hit ranks, and
  the suites over every chunking and over the three systems;
- ``recall``, ``paired``: Recall@k with intervals, paired comparisons in families;
- ``chunking``, ``geometry``, ``overlap``: what chunking destroys and costs, how many
  answers blind cuts should destroy from the needles' lengths, what the overlap rescues;
- ``fusion``: reciprocal rank fusion against score fusion on the same runs;
- ``refusal``, ``twins``: the gate's distances and sweep, a cutoff calibrated on
  unanswerable twins;
- ``spans``, ``chroma_table``: questions answered by excerpts (Chroma's format), and
  Chroma's own table on its benchmark;
- ``baselines``, ``power``: the chapter's dense baseline beside the lab's, and how many
  questions a paired test needs;
- ``long_context``: does the generator cite the needle's source less in twenty chunks;
- ``failures``: what the deployed configuration missed or refused, and what it returned
  instead;
- ``extraction``, ``extraction_pdfs``: the corpus typeset as PDFs, read back by each reader
  (cached), and what extraction keeps and costs before and through retrieval;
- ``corpus``, ``identifiers``, ``joint``, ``generation``, ``migration``, ``latency``: the
  corpus's own checks, identifier probes, second stages, retrieve → gate → generate, a
  half-migrated index, and what each stage costs (timed single-threaded);
- ``ledger``: the claims ledger, each entry judged by :mod:`rag_lab.claims.judge`;
  ``hypotheses``, ``generalisation``: the chapter's claims judged on any corpus, and again
  under another encoder;
- ``chapter``: the chapter's published figures, the only place they are written;
- ``figures``, ``recall_curves``, ``plots``, ``render``: the figures and tables a report shows;
- ``sections``, ``report``, ``runner``: what the report shows of each record, the report
  ``rag-lab evaluate`` writes (``report.md``, ``report.json``, ``claims.json``), and the run
  that measures and writes it.
- ``trec``, ``jsonable``: the rankings as TREC files, tables as plain JSON values;
- ``deploy``, ``served``, ``lost``, ``regression``, ``baseline_file``, ``gate_report``: a
  deploy's per-query record, a built index asked as ``rag-lab ask`` asks it, and the
  regression gate (a new report against a stored one, question by question) and its files.

May import the core (``rag_lab.*``), ``models`` and ``sources``; never ``app`` or
``experiments``.
"""

from rag_lab import environ

environ.write_only_in_the_cache()
