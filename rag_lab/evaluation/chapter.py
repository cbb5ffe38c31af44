"""What the chapter reports, kept apart so every comparison names its reference.

These are the chapter's published figures for *its* corpus (13 chapters of a course,
359,067 characters, 940 chunks per boundary strategy). They are never used in a
computation: notebooks show them beside the numbers measured here.
"""

from __future__ import annotations

from rag_lab import gate

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
PAIRED = {
    ("B", "A", 8): (8, 6, "0.79"),
    ("B", "A", 20): (9, 7, "0.80"),
    ("E", "A", 20): (18, 3, "0.0015"),
    ("E", "C", 20): (12, 2, "0.0129"),
    ("F", "E", 20): (2, 6, None),
    ("hybrid", "BM25", 4): (10, 3, "0.09"),
    ("hybrid", "dense", 4): (10, 6, "0.45"),
}
"""(system a, system b, k) -> (wins of a, losses of a, the sign-test p as printed, if printed)."""

RERANK_TOP_N = 25
"""The chapter reranks its first stage's top 25."""
RERANK_R1 = {"dense": 0.094, "cross-encoder": 0.312}
RERANK_MRR = {"dense": 0.280, "cross-encoder": 0.447}

IDENTITY_MAX_DIFF = 8.3e-07
WORST_IN_DOMAIN = 0.721
BEST_OUT_OF_DOMAIN = 0.497
PROMPT_TOKENS = 591
"""Tokens of the prompt the chapter's first question becomes (its generator's tokenizer)."""

TRAP_DISTANCE = 0.671
"""How close the chapter's literal-trap example (a question the corpus does not answer)
came to a chunk sharing its rare term: under the cutoff."""

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
    0.0015``), or an empty string when it reports none."""
    ref = PAIRED.get((a, b, k))
    if ref is None:
        return ""
    wins, losses, p = ref
    return f"+{wins}/\N{MINUS SIGN}{losses}" + (f", p = {p}" if p else "")


# --- the chapter's comparisons and claims, as hypotheses any corpus can be tested on -----

STRATEGY_PAIRS = (("B", "A"), ("C", "A"), ("E", "A"), ("E", "C"), ("F", "E"))
"""The chapter's paired comparisons between strategies, and C vs A, which separates the
boundaries' share of E vs A from the header's."""
SYSTEM_PAIRS = (("BM25", "dense"), ("hybrid", "BM25"), ("hybrid", "dense"))
"""The chapter's paired comparisons between first-stage systems."""

STRATEGY_CLAIMS = (
    ("E", "A", 20, ">", "boundaries with a header beat blind cuts"),
    ("C", "A", 20, ">", "boundaries alone beat blind cuts (not a chapter claim: the control)"),
    ("E", "C", 20, ">", "the header, on the same cuts, buys recall"),
    ("F", "E", 20, "<", "overlap on top of the header hurts"),
)
"""(a, b, k, the direction claimed, the claim) between chunkings under dense retrieval."""
SYSTEM_CLAIMS = (
    ("BM25", "dense", 8, "<", "BM25 loses to dense by rank 8"),
    ("hybrid", "dense", 4, "=", "fusion is not significantly better than dense"),
    ("hybrid", "BM25", 4, "=", "fusion is not significantly better than BM25"),
)
"""(a, b, k, the direction the chapter reports, what it means) between first-stage systems;
``"="`` is the chapter's "no significant difference"."""
