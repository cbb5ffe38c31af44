"""Late interaction: score a chunk by MaxSim over token vectors, ColBERT-style.

Khattab & Zaharia (2020), *ColBERT: Efficient and Effective Passage Search via
Contextualized Late Interaction over BERT*. Query and chunk are encoded separately, one
vector per token, and a chunk scores the sum over query tokens of the best cosine with
any of its tokens::

    S(q, d) = Σ_i max_j cos(q_i, d_j)

The chunk side can be computed once at index time, so a query costs one short forward
pass and a few small matrix products: between a vector scan and a cross-encoder.

**These weights were not trained for it.** The token vectors come from the packaged
all-MiniLM-L6-v2, trained so that their *mean* is a good sentence vector; ColBERT trains
its encoder (and a 128-dim projection) for MaxSim itself. What is measured here is what
MaxSim makes of token vectors that were never asked to match one by one.

Tokens: every non-padding word-piece of both texts, ``[CLS]`` and ``[SEP]`` included and
punctuation kept, up to the model's 256-piece window; each vector is L2-normalised. (ColBERT
also prepends ``[Q]``/``[D]`` markers, pads queries with ``[MASK]`` and drops punctuation
from documents; none of that is done here.) Token matrices are cached on disk like the
sentence vectors (:mod:`rag_lab.embed`): by model fingerprint and text sha256, in their own
folder, so a second run costs no model time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag_lab import paths
from rag_lab.embed import BATCH_SIZE, EmbeddingCache, Encoder
from rag_lab.questions import Query
from rag_lab.retrieval import Latency, time_per_call

STAGE = "late interaction (query tokens + MaxSim)"


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


class LateInteraction:
    """MaxSim scoring over the packaged all-MiniLM-L6-v2's token vectors, cached on disk.

    >>> li = LateInteraction()                                    # doctest: +SKIP
    >>> texts = ["A tensor is an array.", "Paella needs saffron."]
    >>> li.score("what is a tensor", texts).round(2)              # doctest: +SKIP
    array([5.09, 0.64])
    """

    def __init__(
        self, *, cache: bool = True, cache_root: Path | None = None, batch_size: int = BATCH_SIZE
    ) -> None:
        self._encoder = Encoder(cache=False, batch_size=batch_size)
        self.fingerprint = self._encoder.fingerprint
        root = cache_root or paths.cache_dir() / "token_embeddings"
        self.cache = EmbeddingCache(self.fingerprint, root) if cache else None

    def tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit token vectors per text, float32 ``(tokens, 384)``; cached texts skip the model."""
        shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        dim = self.fingerprint.dimensions
        known = self.cache.get(shas) if self.cache is not None else {}
        # Length order keeps padding small; the sha breaks ties so batches are always the same.
        pending = {sha: t for sha, t in zip(shas, texts, strict=True) if sha not in known}
        todo = sorted(pending.items(), key=lambda item: (len(item[1]), item[0]))
        if todo:
            fresh = dict(
                zip([sha for sha, _ in todo], self._compute([t for _, t in todo]), strict=True)
            )
            if self.cache is not None:
                self.cache.put(fresh)
            known = {**known, **fresh}
        return [np.asarray(known[sha], dtype=np.float32).reshape(-1, dim) for sha in shas]

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """MaxSim of ``query`` against each text, float64, higher is better."""
        query_tokens, *doc_tokens = self.tokens([query, *texts])
        return np.array([maxsim(query_tokens, d) for d in doc_tokens], dtype=np.float64)

    def _compute(self, texts: list[str]) -> list[np.ndarray]:
        out = []
        for i in range(0, len(texts), self._encoder.batch_size):
            batch = self._encoder.model.encode(
                texts[i : i + self._encoder.batch_size],
                batch_size=self._encoder.batch_size,
                output_value="token_embeddings",  # padding is already cut off per text
                convert_to_numpy=False,
                show_progress_bar=False,
            )
            for matrix in batch:
                m = matrix.float().numpy().astype(np.float64)
                out.append((m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32))
        return out


def latency(
    li: LateInteraction, queries: Sequence[Query], candidates: Sequence[Sequence[str]]
) -> Latency:
    """Per query: its token vectors through the model (cache bypassed), then MaxSim, in ms.

    The candidates' token matrices are read before timing, as an index would hold them.
    """
    docs = [li.tokens(texts) for texts in candidates]

    def run(i: int) -> list[float]:
        (query_tokens,) = li._compute([queries[i].text])
        return [maxsim(query_tokens, d) for d in docs[i]]

    n = max(len(c) for c in candidates)
    return time_per_call(f"{STAGE} × {n}", run, range(len(queries)))
