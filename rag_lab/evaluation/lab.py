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
class Chunked:
    """A corpus chunked several ways, each chunking's index built (and embedded) on first use:
    what both ground truths rank over. :class:`Lab` adds needle questions,
    :class:`rag_lab.evaluation.spans.Bench` questions answered by excerpts at offsets."""

    docs: list[Document]
    encoder: TextEncoder
    chunks_by: dict[str, list[Chunk]]
    """Each chunking's chunks, by name (the six strategies are ``"A"``–``"F"``)."""
    tokenizer: str = "ascii"
    """BM25's tokenizer: the chapter's ``"ascii"`` for its corpus, ``"unicode"`` for others."""
    _indexes: dict[str, ChunkIndex] = field(default_factory=dict, repr=False)

    @property
    def titles(self) -> dict[str, str]:
        return {d.id: d.title for d in self.docs}

    @property
    def texts(self) -> dict[str, str]:
        return {d.id: d.text for d in self.docs}

    def index(self, name: str) -> ChunkIndex:
        """The chunking's chunks with their vectors (embedded once, then from the cache)."""
        if name not in self._indexes:
            with progress.context(f"strategy {name}"):
                self._indexes[name] = ChunkIndex.build(
                    self.chunks_by[name], self.encoder, tokenizer=self.tokenizer
                )
        return self._indexes[name]


@dataclass
class Lab(Chunked):
    """Everything a needle experiment starts from: :class:`Chunked` and its questions."""

    qset: QuestionSet = field(kw_only=True)

    @property
    def queries(self) -> list[Query]:
        """Every question in each of its phrasings: all the first (course) ones first."""
        return self.qset.queries()

    @property
    def negatives(self) -> list[Negative]:
        return list(self.qset.negatives)

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
        return cls(list(docs), encoder, chunk_all(docs), tokenizer=tokenizer, qset=qset)
