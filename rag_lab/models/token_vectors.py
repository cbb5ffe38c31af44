"""Token vectors for late interaction (:func:`rag_lab.late_interaction.maxsim`).

**These weights were not trained for it.** The token vectors come from the packaged
all-MiniLM-L6-v2, trained so that their *mean* is a good sentence vector; ColBERT trains
its encoder (and a 128-dim projection) for MaxSim itself. What is measured here is what
MaxSim makes of token vectors that were never asked to match one by one.

Tokens: every non-padding word-piece of both texts, ``[CLS]`` and ``[SEP]`` included and
punctuation kept, up to the model's 256-piece window; each vector is L2-normalised. (ColBERT
also prepends ``[Q]``/``[D]`` markers, pads queries with ``[MASK]`` and drops punctuation
from documents; none of that is done here.) Token matrices are cached on disk like the
sentence vectors (:mod:`rag_lab.models.vector_cache`): by model fingerprint and text sha256,
in their own folder, so a second run costs no model time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag_lab import paths
from rag_lab.late_interaction import maxsim
from rag_lab.models.encoder import BATCH_SIZE, Encoder
from rag_lab.models.vector_cache import open_cache, through_cache


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
        # Token vectors come from the torch model's token_embeddings output (the ONNX graph
        # ends in the pooled sentence vector), so the fingerprint is torch's.
        self._encoder = Encoder(backend="torch", cache=False, batch_size=batch_size)
        self.fingerprint = self._encoder.fingerprint
        root = cache_root or paths.cache_dir() / "token_embeddings"
        self.cache = open_cache(self.fingerprint, root) if cache else None

    def tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit token vectors per text, float32 ``(tokens, 384)``; cached texts skip the model."""
        matrices, _ = through_cache(texts, self.cache, self._compute)
        dim = self.fingerprint.dimensions
        return [np.asarray(m, dtype=np.float32).reshape(-1, dim) for m in matrices]

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
