"""BM25 lexical scoring over a fixed list of texts, as a sparse term-by-document matrix.

Robertson & Zaragoza (2009), *The Probabilistic Relevance Framework: BM25 and
Beyond*, Foundations and Trends in Information Retrieval 3(4). With ``N`` texts,
``n_t`` of them containing term ``t``, ``f`` the count of ``t`` in text ``d``,
``|d|`` its token count and ``avgdl`` the mean token count::

    idf(t)    = log(1 + (N - n_t + 0.5) / (n_t + 0.5))
    w(t, d)   = idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * |d| / avgdl))
    score(q, d) = sum of w(t, d) over the query tokens t, repeats included

This is the Lucene flavour of the idf (always positive) with the ``(k1 + 1)``
factor of the original saturation term; bm25s' ``method="lucene"`` omits that
constant factor, so its scores are ours divided by ``k1 + 1`` (same ranking).
Every ``w(t, d)`` is computed once at construction; a query is then the sum of a
few sparse rows, touching only the postings of its terms.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from scipy import sparse

from rag_lab.ranking import order

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_UNICODE_TOKEN = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """The chapter's tokenizer: lower-cased runs of ASCII letters and digits.

    Everything else separates, so "café" becomes ``["caf"]``: right for the chapter's
    English corpus, wrong for most others. No stemming and no stop words: "Tensors" and
    "tensor" are different terms.

    >>> tokenize("x.grad, 2 Tensors; café")
    ['x', 'grad', '2', 'tensors', 'caf']
    """
    return _ASCII_TOKEN.findall(text.lower())


def tokenize_unicode(text: str) -> list[str]:
    """Case-folded runs of Unicode letters and digits: the tokenizer for users' documents.

    >>> tokenize_unicode("Straße, café; ΣΊΣΥΦΟΣ x_1")
    ['strasse', 'café', 'σίσυφοσ', 'x', '1']
    """
    return _UNICODE_TOKEN.findall(text.casefold())


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "ascii": tokenize,
    "unicode": tokenize_unicode,
}
"""By name: ``"ascii"`` reproduces the chapter, ``"unicode"`` is for any other corpus."""


class BM25:
    """BM25 scores of a query against every text given at construction.

    ``k1`` (>= 0) controls term-frequency saturation, ``b`` (in [0, 1]) length
    normalisation; the defaults are Lucene's. Scores are float64, one per text,
    in the order of ``texts``; a query sharing no term with a text scores 0.
    """

    def __init__(
        self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75, tokenizer: str = "ascii"
    ) -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {sorted(TOKENIZERS)}, got {tokenizer!r}")
        if len(texts) == 0:
            raise ValueError("BM25 needs at least one text")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"need k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1 = k1
        self.b = b
        self.tokenizer = tokenizer
        tokenize = TOKENIZERS[tokenizer]

        self._vocabulary: dict[str, int] = {}
        term_ids: list[int] = []
        lengths = np.empty(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            tokens = tokenize(text)
            lengths[i] = len(tokens)
            term_ids.extend(self._vocabulary.setdefault(t, len(self._vocabulary)) for t in tokens)
        doc_ids = np.repeat(np.arange(len(texts)), lengths)

        # One entry per token; building from COO sums the duplicates into counts f.
        counts = sparse.csr_array(
            (np.ones(len(term_ids)), (np.asarray(term_ids, dtype=np.int64), doc_ids)),
            shape=(len(self._vocabulary), len(texts)),
        )

        n_docs = len(texts)
        doc_freq = np.diff(counts.indptr)  # stored entries per term row = n_t
        idf = np.log1p((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))

        f = counts.data
        term_of_entry = np.repeat(np.arange(len(doc_freq)), doc_freq)
        length_norm = 1.0 - b + b * lengths[counts.indices] / lengths.mean()
        weights = idf[term_of_entry] * f * (k1 + 1.0) / (f + k1 * length_norm)
        self._weights = sparse.csr_array(
            (weights, counts.indices, counts.indptr), shape=counts.shape
        )

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every text for ``query``: float64 array, one per text.

        A term repeated in the query counts once per occurrence; terms absent
        from the corpus add nothing.
        """
        n_docs = self._weights.shape[1]
        tokens = TOKENIZERS[self.tokenizer](query)
        known = [self._vocabulary[t] for t in tokens if t in self._vocabulary]
        if not known:
            return np.zeros(n_docs)
        terms, multiplicity = np.unique(known, return_counts=True)
        # Sum the CSR rows of the query terms: gather their postings and add them up
        # per document. Cheaper than scipy's fancy row indexing at this corpus size.
        start, stop = self._weights.indptr[terms], self._weights.indptr[terms + 1]
        postings = np.concatenate([np.arange(i, j) for i, j in zip(start, stop, strict=True)])
        weights = self._weights.data[postings] * np.repeat(multiplicity, stop - start)
        return np.bincount(self._weights.indices[postings], weights=weights, minlength=n_docs)

    def rank(self, query: str) -> np.ndarray:
        """Text indices, best BM25 score first; ties keep text order."""
        return order(self.scores(query))


class LoopBM25:
    """The same scores, one document at a time: the oracle of the tests, the bench's baseline.

    The usual pure-Python implementation, with everything a query does not depend on
    (term counts per text, length norms, idf) computed once, so that a comparison with
    :class:`BM25` measures the scoring loop alone.
    """

    def __init__(
        self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75, tokenizer: str = "ascii"
    ) -> None:
        self._tokenize = TOKENIZERS[tokenizer]
        docs = [self._tokenize(t) for t in texts]
        self.counts = [Counter(d) for d in docs]
        avgdl = sum(len(d) for d in docs) / len(docs)
        self.norms = [k1 * (1 - b + b * len(d) / avgdl) if avgdl else k1 for d in docs]
        df = Counter(t for c in self.counts for t in c)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - n_t + 0.5) / (n_t + 0.5)) for t, n_t in df.items()}
        self.k1 = k1

    def scores(self, query: str) -> np.ndarray:
        terms = [t for t in self._tokenize(query) if t in self.idf]
        out = np.zeros(len(self.counts))
        for i, (counts, norm) in enumerate(zip(self.counts, self.norms, strict=True)):
            total = 0.0
            for t in terms:
                f = counts.get(t, 0)
                if f:
                    total += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            out[i] = total
        return out

    def rank(self, query: str) -> np.ndarray:
        """Text indices, best score first; ties keep text order (as :meth:`BM25.rank`)."""
        return order(self.scores(query))
