"""Our implementations against independent ones, and against the chapter's printed numbers.

References: bm25s (BM25), ranx (RRF); Wilson, the sign test and Holm (statsmodels and scipy
in rag_lab.stats) checked against their formulas.
They are needed only here, by the ``comparison`` marker.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rag_lab.bm25 import BM25, tokenize
from rag_lab.fusion import rrf, rrf_scores
from rag_lab.paths import MIRROR_CORPUS
from rag_lab.stats import sign_test, wilson

pytestmark = pytest.mark.comparison

bm25s = pytest.importorskip("bm25s")
ranx = pytest.importorskip("ranx")


# BM25 -------------------------------------------------------------------------


def _synthetic_corpus(rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """400 texts of 5-200 Zipf-distributed words, and 300 queries of 1-8 words.

    Queries repeat words and include words absent from every text ("q..." terms).
    """
    vocabulary = np.array([f"w{i}" for i in range(3000)])
    zipf = 1 / np.arange(1, len(vocabulary) + 1)
    zipf /= zipf.sum()
    texts = [
        " ".join(rng.choice(vocabulary, size=rng.integers(5, 201), p=zipf)) for _ in range(400)
    ]
    queries = []
    for _ in range(300):
        words = list(rng.choice(vocabulary, size=rng.integers(1, 9), p=zipf))
        if rng.random() < 0.2:
            words.append(f"q{rng.integers(100)}")
        if rng.random() < 0.2:
            words.append(words[0])
        queries.append(" ".join(words))
    return texts, queries


def _d2l_corpus(rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """The corpus' documents cut every 512 characters; queries are 2-8 token windows of them."""
    documents = sorted(MIRROR_CORPUS.glob("[0-9][0-9]-*.md"))
    if not documents:
        pytest.skip(f"no corpus at {MIRROR_CORPUS}")
    texts = []
    for path in documents:
        text = path.read_text(encoding="utf-8")
        texts += [text[i : i + 512] for i in range(0, len(text), 512)]
    queries = []
    for text in rng.choice(texts, size=300):
        tokens = tokenize(text)
        start = rng.integers(max(1, len(tokens) - 2))
        queries.append(" ".join(tokens[start : start + rng.integers(2, 9)]))
    return texts, queries


@pytest.mark.parametrize(
    "make_corpus",
    [
        pytest.param(_synthetic_corpus, id="synthetic"),
        pytest.param(_d2l_corpus, id="d2l", marks=pytest.mark.corpus),
    ],
)
@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (1.5, 0.75), (0.9, 0.4), (2.0, 1.0)])
def test_bm25_equals_bm25s_lucene_times_k1_plus_1(make_corpus, k1, b):
    # bm25s' "lucene" variant: idf = log(1 + (N - n_t + 0.5)/(n_t + 0.5)) as ours, and
    # tf part f / (f + k1 (1 - b + b |d|/avgdl)), i.e. ours without the constant (k1 + 1).
    # It is fed our tokens, so only the scoring is compared; float64 so that rtol 1e-6
    # measures the formulas, not bm25s' default float32 storage.
    texts, queries = make_corpus(np.random.default_rng(0))
    ours = BM25(texts, k1=k1, b=b)
    reference = bm25s.BM25(k1=k1, b=b, method="lucene", idf_method="lucene", dtype="float64")
    reference.index([tokenize(t) for t in texts], show_progress=False)
    compared = 0
    for query in queries:
        tokens = tokenize(query)
        if not tokens:  # bm25s.get_scores needs at least one token
            continue
        expected = reference.get_scores(tokens) * (k1 + 1)
        np.testing.assert_allclose(ours.scores(query), expected, rtol=1e-6, atol=1e-12)
        compared += 1
    assert compared >= 250


# RRF --------------------------------------------------------------------------


def _descending_scores(ranking: list[int]) -> dict[str, float]:
    return {str(doc): float(len(ranking) - i) for i, doc in enumerate(ranking)}


# ranx's own numba code casts its loop index; nothing to do with the values compared.
@pytest.mark.filterwarnings("ignore:unsafe cast from uint64 to int64")
def test_rrf_equals_ranx():
    # ranx.fusion.rrf gives each doc 1 / (k + i + 1), i its 0-based position in a run
    # sorted by score, then sums over runs with comb_sum (absent = 0). Feeding it
    # strictly decreasing scores makes its ranks ours, and norm=None keeps them as given.
    # Compared per query: the set of fused ids, every fused score (ranx sums floats in
    # run order, we round the exact sum once, so they agree to a few ulp), and the
    # order wherever scores differ. Not compared: the order of tied ids, which ranx
    # leaves to numba's unstable argsort, and which we fix by first appearance.
    rng = np.random.default_rng(1)
    n_queries, n_runs, k = 200, 3, 60
    # Per query three rankings of 1-40 ids out of 100: unequal lengths, partial overlap.
    lists = {
        f"q{q}": [rng.permutation(100)[: rng.integers(1, 41)].tolist() for _ in range(n_runs)]
        for q in range(n_queries)
    }
    runs = [
        ranx.Run({q: _descending_scores(r[j]) for q, r in lists.items()}) for j in range(n_runs)
    ]
    fused = ranx.fuse(runs, norm=None, method="rrf", params={"k": k})
    for q, rankings in lists.items():
        ours = rrf_scores(rankings, k=k)
        theirs = {int(doc): score for doc, score in fused.run[q].items()}
        assert theirs.keys() == ours.keys()
        for doc, score in ours.items():
            assert theirs[doc] == pytest.approx(score, rel=1e-14)
        # Our scores along ranx's order never increase (beyond rounding) ...
        along_theirs = [ours[doc] for doc in theirs]
        assert all(x >= y - 1e-15 for x, y in itertools.pairwise(along_theirs))
        # ... and along our own order not at all.
        along_ours = [ours[doc] for doc in rrf(rankings, k=k)]
        assert along_ours == sorted(along_ours, reverse=True)


# Wilson, the sign test and Holm: the library calls checked against the formulas -----
# (rag_lab.stats calls statsmodels and scipy; these check the call, not the library)


@pytest.mark.parametrize("level", [0.5, 0.95, 0.999])
def test_wilson_is_the_score_interval(level):
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    for n in [1, 2, 5, 32, 64, 1000]:
        for k in range(n + 1):
            p, z2n = k / n, z * z / n
            centre = (p + z2n / 2) / (1 + z2n)
            half = z / (1 + z2n) * np.sqrt(p * (1 - p) / n + z2n / (4 * n))
            lo, hi = wilson(k, n, level)
            assert (lo, hi) == pytest.approx((centre - half, centre + half), abs=1e-12)
            assert (lo == 0.0) == (k == 0) and (hi == 1.0) == (k == n)


def test_sign_test_is_the_exact_binomial_tail():
    from fractions import Fraction
    from math import comb

    for wins in range(41):
        for losses in range(41):
            n = wins + losses
            tail = sum(comb(n, i) for i in range(min(wins, losses) + 1))
            exact = min(1.0, float(Fraction(2 * tail, 2**n))) if n else 1.0
            assert sign_test(wins, losses) == pytest.approx(exact, rel=1e-10, abs=1e-300)


# The chapter's printed values --------------------------------------------------


def test_chapter_wilson():
    lo, hi = wilson(38, 64)
    assert (round(lo, 3), round(hi, 3)) == (0.471, 0.705)


@pytest.mark.parametrize(
    ("wins", "losses", "printed", "places"),
    [
        (18, 3, 0.0015, 4),
        (12, 2, 0.0129, 4),
        (10, 6, 0.45, 2),
        (8, 6, 0.79, 2),
        (9, 7, 0.80, 2),
        (10, 3, 0.09, 2),
    ],
)
def test_chapter_sign_tests(wins, losses, printed, places):
    assert round(sign_test(wins, losses), places) == printed


def test_holm_is_the_step_down_rule():
    from rag_lab.stats import holm

    rng = np.random.default_rng(7)
    for m in (1, 2, 5, 10, 40):
        p = rng.random(m) ** 3
        order = np.argsort(p, kind="stable")
        stepped = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1.0)
        expected = np.empty(m)
        expected[order] = stepped
        np.testing.assert_allclose(holm(p), expected, atol=1e-12)
