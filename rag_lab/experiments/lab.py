"""One setup call for every notebook: the corpus, the questions, the encoder, the chunkings.

>>> lab = setup()                                   # doctest: +SKIP
>>> len(lab.docs), len(lab.queries), sorted(lab.chunks_by)   # doctest: +SKIP
(20, 64, ['A', 'B', 'C', 'D', 'E', 'F'])
>>> lab.index("E").vectors.shape                    # doctest: +SKIP
(912, 384)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rag_lab import paths
from rag_lab.chunking import Chunk, chunk_all
from rag_lab.documents import Document
from rag_lab.questions import CHAPTER_DESIGN, Negative, Query, QuestionSet, load_questions
from rag_lab.search import ChunkIndex, DenseRetriever, TextEncoder
from rag_lab.sources.d2l import load_corpus

PANDAS_OPTIONS = {"display.width": 250, "display.max_colwidth": 120}
"""How notebook tables are shown: wide enough for a row of Recall@k intervals."""


@dataclass
class Lab:
    """Everything an experiment starts from; indexes are built (and embedded) on first use."""

    docs: list[Document]
    qset: QuestionSet
    encoder: TextEncoder
    chunks_by: dict[str, list[Chunk]]
    """The six strategies' chunks, keyed ``"A"``–``"F"``."""
    tokenizer: str = "ascii"
    """BM25's tokenizer: the chapter's ``"ascii"`` for its corpus, ``"unicode"`` for others."""
    _indexes: dict[str, ChunkIndex] = field(default_factory=dict, repr=False)

    @property
    def queries(self) -> list[Query]:
        """Every question in both phrasings, course first."""
        return self.qset.queries()

    @property
    def negatives(self) -> list[Negative]:
        return list(self.qset.negatives)

    @property
    def titles(self) -> dict[str, str]:
        return {d.id: d.title for d in self.docs}

    @property
    def texts(self) -> dict[str, str]:
        return {d.id: d.text for d in self.docs}

    def index(self, strategy: str) -> ChunkIndex:
        """The strategy's chunks with their vectors (embedded once, then from the cache)."""
        if strategy not in self._indexes:
            self._indexes[strategy] = ChunkIndex.build(
                self.chunks_by[strategy], self.encoder, tokenizer=self.tokenizer
            )
        return self._indexes[strategy]

    def retriever(self, strategy: str) -> DenseRetriever:
        """Dense retrieval over one strategy: what the gate and the citations sit on."""
        return DenseRetriever(self.index(strategy), self.encoder, self.titles)


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
    return Lab(docs, qset, encoder, chunk_all(docs))
