"""One setup call for every notebook: the lab's corpus, its questions, the encoder.

>>> lab = setup()                                   # doctest: +SKIP
>>> len(lab.docs), len(lab.queries), sorted(lab.chunks_by)   # doctest: +SKIP
(20, 64, ['A', 'B', 'C', 'D', 'E', 'F'])
>>> lab.index("E").vectors.shape                    # doctest: +SKIP
(912, 384)
"""

from __future__ import annotations

import os

from rag_lab import paths
from rag_lab.evaluation.lab import Lab
from rag_lab.questions import CHAPTER_DESIGN, load_questions
from rag_lab.search import TextEncoder
from rag_lab.sources.d2l import load_corpus

__all__ = ["PANDAS_OPTIONS", "Lab", "setup"]

PANDAS_OPTIONS = {"display.width": 250, "display.max_colwidth": 120}
"""How notebook tables are shown: wide enough for a row of Recall@k intervals."""


def setup(
    corpus_dir: str | os.PathLike | None = None,
    questions_path: str | os.PathLike | None = None,
    *,
    encoder: TextEncoder | None = None,
) -> Lab:
    """The lab's verified corpus, its 32 questions checked against the chapter's design,
    the packaged encoder and the six chunkings; sets :data:`PANDAS_OPTIONS`.

    ``corpus_dir`` and ``questions_path`` default to the lab's own (see
    :func:`rag_lab.sources.d2l.load_corpus` and ``data/questions.yaml``).
    """
    import pandas as pd

    for key, value in PANDAS_OPTIONS.items():
        pd.set_option(key, value)
    docs = load_corpus(corpus_dir)
    qset = load_questions(questions_path or paths.QUESTIONS, docs, CHAPTER_DESIGN)
    if encoder is None:
        from rag_lab.models.encoder import Encoder

        encoder = Encoder()
    return Lab.of(docs, qset, encoder)
