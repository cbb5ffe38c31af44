"""Search one chunking: dense (cosine), lexical (BM25) and their reciprocal rank fusion.

A :class:`ChunkIndex` holds one strategy's chunks and their unit vectors, in memory; its
BM25 index over the same embedded ``text`` is built on first use. Rankings are full
(every chunk, best first) so that a first hit at any depth is seen, and ties always fall
back to chunk order. The encoder is anything with :class:`TextEncoder`'s shape, so this
module never loads a model itself.

(The persistent, stamped index of the command line is :mod:`rag_lab.app.index`; it
loads its documents into a :class:`ChunkIndex` to search them.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

import numpy as np

from rag_lab import dense, fusion
from rag_lab.chunking import Chunk
from rag_lab.citations import Hit
from rag_lab.ranking import order

if TYPE_CHECKING:  # types only: the core never imports the models
    from rag_lab.bm25 import BM25
    from rag_lab.models.minilm import Fingerprint


RRF_K = 60
"""Reciprocal rank fusion's damping constant (the paper's and the chapter's)."""
SERVED_TOKENIZER = "unicode"
"""BM25's tokenizer on a user's documents, in ``ask`` and in ``evaluate`` alike (words of any
script); the chapter's ``"ascii"`` is kept for the lab's corpus, which it reproduces."""


class TextEncoder(Protocol):
    """What search needs of an encoder: its fingerprint and unit vectors for texts."""

    fingerprint: Fingerprint

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray: ...


@dataclass(frozen=True)
class ChunkIndex:
    """One strategy's chunks, searchable densely and lexically."""

    chunks: list[Chunk]
    vectors: np.ndarray
    """Unit float32 vectors, one row per chunk, in chunk order."""
    tokenizer: str = field(default="ascii", kw_only=True)
    """BM25's tokenizer (:data:`rag_lab.bm25.TOKENIZERS`): the chapter's ``"ascii"`` by default."""

    @classmethod
    def build(
        cls, chunks: Sequence[Chunk], encoder: TextEncoder, *, tokenizer: str = "ascii"
    ) -> ChunkIndex:
        return cls(list(chunks), encoder.encode([c.text for c in chunks]), tokenizer=tokenizer)

    @cached_property
    def bm25(self) -> BM25:
        from rag_lab.bm25 import BM25  # scipy: imported by lexical search only, not by ask

        return BM25([c.text for c in self.chunks], tokenizer=self.tokenizer)


@dataclass(frozen=True)
class DenseRetriever:
    """A :class:`ChunkIndex` searched by cosine distance: the retriever behind the gate."""

    index: ChunkIndex
    encoder: TextEncoder
    titles: dict[str, str]
    """Document id → document name, for citations."""

    def nearest(self, question: str, k: int) -> list[Hit]:
        query = self.encoder.encode([question])[0]
        chunks = self.index.chunks
        return [
            Hit(chunks[i], self.titles[chunks[i].doc_id], d)
            for i, d in dense.nearest(query, self.index.vectors, k)
        ]


def rank_one(index: ChunkIndex, text: str, distances: np.ndarray) -> dict[str, np.ndarray]:
    """Dense, BM25 and hybrid rankings (chunk positions, best first) of one query, from its
    cosine distances to every chunk of ``index``: what the lab measures
    (:func:`rag_lab.evaluation.runs.rank_all`) and ``rag-lab ask --retriever`` serves.

    The hybrid is RRF (k = :data:`RRF_K`) of dense's full ranking and of the chunks BM25
    *retrieved*, those with a positive score (the reason is in ``rank_all``'s docstring).
    """
    dense_r = order(distances, descending=False)
    scores = index.bm25.scores(text)
    ranking = order(scores)
    hybrid = np.array(fusion.rrf([dense_r, ranking[scores[ranking] > 0]], k=RRF_K))
    return {"dense": dense_r, "BM25": ranking, "hybrid": hybrid}
