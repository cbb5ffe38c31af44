"""A corpus, its questions, an encoder and the six chunkings: what every suite starts from.

>>> lab = Lab.of(docs, qset, Encoder())                     # doctest: +SKIP
>>> sorted(lab.chunks_by), lab.index("E").vectors.shape     # doctest: +SKIP
(['A', 'B', 'C', 'D', 'E', 'F'], (912, 384))

Indexes are embedded on first use and kept, so the suites that share a chunking embed it
once. (The lab's own corpus and question file are loaded by
:func:`rag_lab.experiments.lab.setup`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_lab import progress
from rag_lab.chunking import Chunk, chunk_all
from rag_lab.documents import Document
from rag_lab.questions import Negative, Query, QuestionSet
from rag_lab.search import ChunkIndex, DenseRetriever, TextEncoder


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
        """Every question in each of its phrasings: all the first (course) ones first."""
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
            with progress.context(f"strategy {strategy}"):
                self._indexes[strategy] = ChunkIndex.build(
                    self.chunks_by[strategy], self.encoder, tokenizer=self.tokenizer
                )
        return self._indexes[strategy]

    def retriever(self, strategy: str) -> DenseRetriever:
        """Dense retrieval over one strategy: what the gate and the citations sit on."""
        return DenseRetriever(self.index(strategy), self.encoder, self.titles)

    @property
    def clusters(self) -> list[str]:
        """The question each query asks: a question's phrasings (one or more) form one cluster."""
        return [q.question.id for q in self.queries]

    @classmethod
    def of(
        cls,
        docs: Sequence[Document],
        qset: QuestionSet,
        encoder: TextEncoder,
        *,
        tokenizer: str = "ascii",
    ) -> Lab:
        """``docs`` chunked the six ways (nothing embedded yet)."""
        return cls(list(docs), qset, encoder, chunk_all(docs), tokenizer=tokenizer)
