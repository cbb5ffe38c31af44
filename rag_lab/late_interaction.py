"""Late interaction: score a chunk by MaxSim over token vectors, ColBERT-style.

Khattab & Zaharia (2020), *ColBERT: Efficient and Effective Passage Search via
Contextualized Late Interaction over BERT*. Query and chunk are encoded separately, one
vector per token, and a chunk scores the sum over query tokens of the best cosine with
any of its tokens::

    S(q, d) = Σ_i max_j cos(q_i, d_j)

The chunk side can be computed once at index time, so a query costs one short forward
pass and a few small matrix products: between a vector scan and a cross-encoder. The
token vectors come from :mod:`rag_lab.models.token_vectors`.
"""

from __future__ import annotations

import numpy as np


def maxsim(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """ColBERT's score ``Σ_i max_j q_i·d_j`` for unit token rows ``(m, d)`` and ``(n, d)``.

    With unit rows each product is a cosine, so the score lies in ``[-m, m]``.
    Accumulated in float64, like the dense distances, so near-ties do not depend on BLAS.
    """
    q = np.asarray(query_tokens, dtype=np.float64)
    d = np.asarray(doc_tokens, dtype=np.float64)
    if q.ndim != 2 or d.ndim != 2 or q.shape[1] != d.shape[1] or not len(q) or not len(d):
        raise ValueError(
            f"need non-empty (m, d) and (n, d) token matrices, got {q.shape}, {d.shape}"
        )
    return float((q @ d.T).max(axis=1).sum())
