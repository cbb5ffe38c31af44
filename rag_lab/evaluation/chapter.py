"""What the chapter reports, kept apart so every comparison names its reference.

These are the chapter's published figures for *its* corpus (13 chapters of a course,
359,067 characters, 940 chunks per boundary strategy). They are never used in a
computation: notebooks show them beside the numbers measured here. What the chapter claims,
and its result for each claim, is declared in ``rag_lab/claims/chapter.yaml``
(:mod:`rag_lab.claims`).
"""

from __future__ import annotations

from rag_lab import gate
from rag_lab.claims import Compare, claims

CORPUS = {"documents": 13, "characters": 359_067, "sections": 127, "questions": 32, "queries": 64}

CHUNKS_PER_BOUNDARY_STRATEGY = 940

DESTROYED_BY_BLIND = 4
"""Needles cut by the 512-character blind cuts, out of 32."""
DESTROYED_WITH_OVERLAP = 0

HEADER_TOKENS = 24_213
EMBEDDED_TOKENS = 114_275
"""Word-pieces embedded by strategy E, header included (the share is 21.2 %)."""
OVER_WINDOW = {"E": 17, "F": 28}
"""Chunks over the encoder's 256 word-piece window."""

INDEX_MS_PER_CHUNK = 22.0
QUERY_EMBED_MS = 13.0
BM25_MS_PER_QUERY = 1.14
VECTOR_SCAN_MS_PER_QUERY = 0.3
CROSS_ENCODER_MS_PER_QUERY = 569.0

WILSON_R20 = {"A": (0.471, 0.705), "E": (0.718, 0.901)}

RERANK_TOP_N = 25
"""The chapter reranks its first stage's top 25."""
RERANK_R1 = {"dense": 0.094, "cross-encoder": 0.312}
RERANK_MRR = {"dense": 0.280, "cross-encoder": 0.447}

CUTOFF = gate.CUTOFF
"""The cutoff the chapter settles on (cosine distance, strictly under it is kept); the lab's
default, owned by :mod:`rag_lab.gate`."""
STRICT_CUTOFF = 0.525
"""The stricter cutoff the chapter also reports."""
NEGATIVES = 30
BLUFFS = {None: 30, CUTOFF: 10, STRICT_CUTOFF: 2}
"""Negatives answered (out of 30) at no cutoff and two cutoffs."""
REFUSED_ANSWERABLE = {STRICT_CUTOFF: 12}


def paired_reference(a: str, b: str, k: int) -> str:
    """The chapter's result for the comparison of ``a`` and ``b`` at R@k (``+18/−3, p =
    0.0015``): the ``chapter`` of the declared claim that compares them
    (:mod:`rag_lab.claims`), or an empty string when the chapter reports none."""
    wanted = Compare(a, b, k)
    for c in claims().values():
        if c.compare == wanted and c.chapter != "–":
            return c.chapter
    return ""


# --- the chapter's comparisons, as tables on any corpus show them ------------------------

STRATEGY_PAIRS = (("B", "A"), ("C", "A"), ("E", "A"), ("E", "C"), ("F", "E"))
"""The chapter's paired comparisons between strategies, and C vs A, which separates the
boundaries' share of E vs A from the header's."""
SYSTEM_PAIRS = (("BM25", "dense"), ("hybrid", "BM25"), ("hybrid", "dense"))
"""The chapter's paired comparisons between first-stage systems."""
