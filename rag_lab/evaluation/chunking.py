"""What each chunking does to a corpus before any retrieval: sizes, destroyed answers, cost.

A *destroyed* answer is a question none of whose passages (usually one needle) any chunk's
embedded ``text`` holds whole: its recall ceiling is zero whatever the retriever, so it is
counted before any ranking. Word-pieces are counted with the encoder's own tokenizer
(``[CLS]`` and ``[SEP]`` included, no truncation), and a header's cost is ``pieces(text) −
pieces(text without its header line)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rag_lab.chunking import STRATEGIES, Chunk
from rag_lab.documents import Document
from rag_lab.evaluation.jsonable import frame_json
from rag_lab.metrics import relevant_chunks
from rag_lab.models.minilm import count_word_pieces, minilm_fingerprint
from rag_lab.questions import Question


@dataclass(frozen=True)
class Sizes:
    """Chunk counts and sizes per strategy: characters of ``content`` (what is quoted) and
    of ``text`` (what is embedded: content, plus a header and an overlap where the strategy
    has them)."""

    table: pd.DataFrame
    """Per strategy: ``ingredients``, ``chunks``, ``content median``, ``content max``,
    ``text mean``, ``text max``."""
    text_lengths: dict[str, np.ndarray]
    """Per strategy, the characters of each chunk's embedded ``text``, in chunk order."""
    content_lengths: dict[str, np.ndarray] = field(default_factory=dict)
    """Per strategy, the characters of each chunk's ``content`` (what the budget caps)."""

    def chunks(self, strategy: str) -> int:
        return int(self.table.loc[strategy, "chunks"])


def sizes(chunks_by: Mapping[str, Sequence[Chunk]]) -> Sizes:
    rows = []
    for name, chunks in chunks_by.items():
        content = np.array([len(c.content) for c in chunks])
        text = np.array([len(c.text) for c in chunks])
        rows.append(
            {
                "strategy": name,
                "ingredients": STRATEGIES[name].label,
                "chunks": len(chunks),
                "content median": int(np.median(content)),
                "content max": int(content.max()),
                "text mean": round(float(text.mean()), 1),
                "text max": int(text.max()),
            }
        )
    lengths = {name: np.array([len(c.text) for c in chunks]) for name, chunks in chunks_by.items()}
    content = {
        name: np.array([len(c.content) for c in chunks]) for name, chunks in chunks_by.items()
    }
    return Sizes(pd.DataFrame(rows).set_index("strategy"), lengths, content)


@dataclass(frozen=True)
class Destroyed:
    """Per strategy, the questions none of whose passages lies whole in a chunk's ``text``."""

    questions: dict[str, tuple[str, ...]]
    """Strategy → the ids of the destroyed questions, in question order."""
    of: int
    """Questions asked."""

    def count(self, strategy: str) -> int:
        return len(self.questions[strategy])

    def counts(self) -> dict[str, int]:
        """Destroyed questions per strategy, as :func:`rag_lab.evaluation.geometry.entries`
        takes them."""
        return {s: len(ids) for s, ids in self.questions.items()}

    def view(self) -> pd.DataFrame:
        """As shown: ``destroyed``, ``of``, and the ids (``none``)."""
        rows = [
            {"strategy": s, "destroyed": len(ids), "of": self.of, "questions": ", ".join(ids)}
            for s, ids in self.questions.items()
        ]
        table = pd.DataFrame(rows).set_index("strategy")
        table["questions"] = table["questions"].replace("", "none")
        return table

    def to_json(self) -> dict[str, Any]:
        return {"of": self.of, "questions": {s: list(ids) for s, ids in self.questions.items()}}


def destroyed_questions(chunks: Sequence[Chunk], questions: Sequence[Question]) -> list[Question]:
    """The questions none of whose passages lies whole in any chunk's ``text`` (each read by
    its rule, :attr:`rag_lab.questions.Passage.fold`): no chunk is relevant to them
    (:func:`rag_lab.metrics.relevant_chunks`)."""
    held = relevant_chunks(chunks, questions)
    return [q for q, chunks_held in zip(questions, held, strict=True) if not chunks_held]


def destroyed(chunks_by: Mapping[str, Sequence[Chunk]], questions: Sequence[Question]) -> Destroyed:
    return Destroyed(
        {
            name: tuple(q.id for q in destroyed_questions(c, questions))
            for name, c in chunks_by.items()
        },
        len(questions),
    )


def preamble_loss(
    docs: Sequence[Document], chunks: Sequence[Chunk], questions: Sequence[Question]
) -> pd.Series:
    """What a chunker that starts at the first ``## `` heading, as the chapter's does, would
    silently drop: here the text before it is a section of its own."""
    intro = [c for c in chunks if c.section == ""]
    characters = sum(len(c.content) for c in intro)
    return pd.Series(
        {
            "documents with an intro": len({c.doc_id for c in intro}),
            "intro chunks": len(intro),
            "intro characters": characters,
            "share of corpus": round(characters / sum(len(d.text) for d in docs), 3),
            "needles in intros": ", ".join(
                q.id for q in questions if any(q.needle in c.content for c in intro)
            ),
        }
    )


@dataclass(frozen=True)
class WordPieces:
    """Word-pieces embedded per strategy, the header's share, and chunks past the window."""

    table: pd.DataFrame
    """Per strategy: ``embedded word-pieces``, ``header word-pieces``, ``header share`` (a
    share), ``over window`` (chunks longer than the window) and ``max``."""
    window: int
    """The encoder's window in word-pieces: past it, text is truncated silently."""
    per_chunk: dict[str, np.ndarray]
    """Per strategy, the word-pieces of each chunk's embedded ``text``, in chunk order."""

    def over(self, strategy: str) -> int:
        return int(self.table.loc[strategy, "over window"])

    def view(self) -> pd.DataFrame:
        """As shown: the share as a percentage, the window in the column's name."""
        view = self.table.rename(columns={"over window": f"over {self.window}"})
        view["header share"] = view["header share"].map("{:.1%}".format)
        return view


def word_pieces(chunks_by: Mapping[str, Sequence[Chunk]], window: int | None = None) -> WordPieces:
    """Word-pieces per strategy; ``window`` is the encoder's (None: all-MiniLM-L6-v2's)."""
    window = window or minilm_fingerprint().max_seq_length
    rows = []
    per_chunk = {}
    for name, chunks in chunks_by.items():
        texts = [c.text for c in chunks]
        pieces = per_chunk[name] = count_word_pieces(texts)
        header = 0
        if STRATEGIES[name].header:
            bodies = [t.split("\n", 1)[1] for t in texts]
            header = int((pieces - count_word_pieces(bodies)).sum())
        total = int(pieces.sum())
        rows.append(
            {
                "strategy": name,
                "embedded word-pieces": total,
                "header word-pieces": header,
                "header share": header / total,
                "over window": int((pieces > window).sum()),
                "max": int(pieces.max()),
            }
        )
    return WordPieces(pd.DataFrame(rows).set_index("strategy"), window, per_chunk)


@dataclass(frozen=True)
class Chunking:
    """Everything measured of the chunkings before retrieval, for one corpus."""

    sizes: Sizes
    destroyed: Destroyed
    pieces: WordPieces

    def to_json(self) -> dict[str, Any]:
        return {
            "sizes": frame_json(self.sizes.table),
            "destroyed": self.destroyed.to_json(),
            "word-pieces": {"window": self.pieces.window, **frame_json(self.pieces.table)},
        }


def measure(
    chunks_by: Mapping[str, Sequence[Chunk]],
    questions: Sequence[Question],
    window: int | None = None,
) -> Chunking:
    """Sizes, destroyed answers and word-pieces of every chunking (chunks past ``window``,
    the encoder's: None for all-MiniLM-L6-v2's)."""
    return Chunking(
        sizes(chunks_by), destroyed(chunks_by, questions), word_pieces(chunks_by, window)
    )
