"""Question in, cited answer or refusal out: retrieve, gate, build the context, generate.

When nothing passes the cutoff the pipeline stops before the generator: a refusal is
the comparison of two numbers, cheaper and more reliable than any instruction asking a
model to abstain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rag_lab.citations import Citation, Hit, build_context
from rag_lab.gate import MAX_KEPT, gate


class Retriever(Protocol):
    """Anything that returns the ``k`` nearest chunks to a question, nearest first."""

    def nearest(self, question: str, k: int) -> Sequence[Hit]: ...


@dataclass(frozen=True)
class Refusal:
    """Nothing was close enough; the generator was not called."""

    question: str
    cutoff: float
    nearest: float | None
    """Distance of the nearest chunk, to show how far the question is from the corpus."""

    def __str__(self) -> str:
        near = f" (nearest chunk at {self.nearest:.3f})" if self.nearest is not None else ""
        return f'NO ANSWER: nothing under cosine distance {self.cutoff} for "{self.question}"{near}'


@dataclass(frozen=True)
class Answer:
    """The prompt the generator saw, the citations the server keeps, and the text if any."""

    question: str
    prompt: str
    citations: list[Citation]
    hits: list[Hit]
    """The chunks behind the citations, in the same order (server side only)."""
    text: str | None = None
    """The generator's output; None when no generator was given."""


def answer(
    question: str,
    retriever: Retriever,
    cutoff: float | None,
    *,
    generate: Callable[[str], str] | None = None,
    k: int = MAX_KEPT,
) -> Answer | Refusal:
    """Retrieve the ``k`` nearest chunks, keep those under ``cutoff``, then answer or refuse.

    What passes is :func:`rag_lab.gate.gate`'s decision, the same the notebooks measure.
    A retriever that ranks otherwise than by distance (BM25, hybrid) has ``ranked(question,
    k)`` → (its top ``k``, the dense nearest distance): the question is refused when that
    distance is not under ``cutoff`` (what the gate decides for its nearest chunk), else
    its top ``k`` are kept whatever their distances.
    ``generate`` (prompt → text) is called only when at least one chunk passes.
    ``cutoff=None`` disables the gate: every question is answered, which is how a
    retriever without a threshold bluffs.
    """
    ranked = getattr(retriever, "ranked", None)
    if ranked is not None:  # ranked by BM25 or a fusion: the gate's question-level rule
        found, closest = ranked(question, k)
        kept = list(found) if cutoff is None or closest < cutoff else []
    else:
        hits = list(retriever.nearest(question, k))
        kept = [hits[i] for i in gate(np.array([h.distance for h in hits]), cutoff, k).positions]
        closest = hits[0].distance if hits else None
    if not kept:
        assert cutoff is not None  # without a cutoff every hit is kept
        return Refusal(question, cutoff, closest)
    prompt, citations = build_context(question, kept)
    return Answer(question, prompt, citations, kept, generate(prompt) if generate else None)
