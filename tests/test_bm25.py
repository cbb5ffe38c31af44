"""BM25: a toy corpus worked by hand, parameters, and a naive loop as the oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_lab.bm25 import BM25, LoopBM25, tokenize, tokenize_unicode

# N = 3, token counts 3, 6, 3, so avgdl = 12 / 3 = 4.
TOY = ["The cat sat.", "The dog sat on the mat.", "cat, cat, dog"]

# n_t = 2 for "cat", "the", "dog", "sat": idf = log(1 + (3 - 2 + 0.5) / (2 + 0.5)) = log(1.6)
# n_t = 1 for "mat", "on":               idf = log(1 + (3 - 1 + 0.5) / (1 + 0.5)) = log(8 / 3)
IDF_COMMON = math.log(1.6)
IDF_RARE = math.log(8 / 3)
# With k1 = 1.2, b = 0.75 the length term k1 * (1 - b + b * |d| / avgdl) is
#   |d| = 3: 1.2 * (0.25 + 0.75 * 3 / 4) = 0.975
#   |d| = 6: 1.2 * (0.25 + 0.75 * 6 / 4) = 1.65
SHORT, LONG = 0.975, 1.65


def test_tokenize():
    assert tokenize("GPT-4o's 2nd run, 3.5x!") == ["gpt", "4o", "s", "2nd", "run", "3", "5x"]
    assert tokenize("Café naïve") == ["caf", "na", "ve"]  # ASCII only, by design
    assert tokenize(" \n--") == []


def test_single_term_by_hand():
    # d0: f = 1 in a short text; d1: no "cat"; d2: f = 2 in a short text.
    expected = [
        IDF_COMMON * 1 * 2.2 / (1 + SHORT),
        0.0,
        IDF_COMMON * 2 * 2.2 / (2 + SHORT),
    ]
    np.testing.assert_allclose(BM25(TOY).scores("cat"), expected, rtol=1e-15)


def test_two_terms_by_hand_and_ranking():
    scores = BM25(TOY).scores("Cat, MAT!")
    expected = [
        IDF_COMMON * 2.2 / (1 + SHORT),  # cat in d0 = 0.5235
        IDF_RARE * 2.2 / (1 + LONG),  # mat in d1 = 0.8143
        IDF_COMMON * 4.4 / (2 + SHORT),  # cat twice in d2 = 0.6951
    ]
    np.testing.assert_allclose(scores, expected, rtol=1e-15)
    assert BM25(TOY).rank("Cat, MAT!").tolist() == [1, 2, 0]


def test_term_frequency_in_a_long_text():
    # "the" appears twice in d1 (long) and once in d0 (short).
    expected = [IDF_COMMON * 2.2 / (1 + SHORT), IDF_COMMON * 2 * 2.2 / (2 + LONG), 0.0]
    np.testing.assert_allclose(BM25(TOY).scores("the"), expected, rtol=1e-15)


def test_repeated_query_term_counts_each_time():
    model = BM25(TOY)
    np.testing.assert_allclose(model.scores("cat cat"), 2 * model.scores("cat"), rtol=1e-15)


def test_unknown_terms_add_nothing():
    model = BM25(TOY)
    np.testing.assert_array_equal(model.scores("cat zebra"), model.scores("cat"))
    np.testing.assert_array_equal(model.scores("zebra"), np.zeros(3))
    np.testing.assert_array_equal(model.scores(""), np.zeros(3))


def test_all_zero_scores_rank_in_text_order():
    assert BM25(TOY).rank("zebra").tolist() == [0, 1, 2]


def test_scores_are_float64_one_per_text():
    scores = BM25(TOY).scores("cat")
    assert scores.dtype == np.float64
    assert scores.shape == (3,)


def test_k1_zero_is_binary_idf():
    np.testing.assert_allclose(BM25(TOY, k1=0).scores("cat"), [IDF_COMMON, 0, IDF_COMMON])


def test_b_zero_ignores_length():
    # Length term is k1 = 1.2 for every text; "the" f = 1 in d0, f = 2 in d1.
    expected = [IDF_COMMON * 2.2 / (1 + 1.2), IDF_COMMON * 2 * 2.2 / (2 + 1.2), 0.0]
    np.testing.assert_allclose(BM25(TOY, b=0).scores("the"), expected, rtol=1e-15)


def test_empty_text_scores_zero():
    scores = BM25(["cat", "", "dog"]).scores("cat dog")
    assert scores[1] == 0.0
    assert (scores[[0, 2]] > 0).all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="at least one text"):
        BM25([])
    with pytest.raises(ValueError, match="k1"):
        BM25(TOY, b=1.5)
    with pytest.raises(ValueError, match="k1"):
        BM25(TOY, k1=-1)


words = st.sampled_from(["cat", "dog", "Sat", "mat", "on", "the", "a1", "zz"])
texts = st.lists(words, max_size=12).map(" ".join)


@given(
    st.lists(texts, min_size=1, max_size=15),
    st.lists(st.sampled_from(["cat", "dog", "mat", "the", "zz", "unseen"]), max_size=6),
    st.floats(0, 3),
    st.floats(0, 1),
)
def test_sparse_scores_equal_the_per_document_loop(corpus, query_words, k1, b):
    query = " ".join(query_words)
    np.testing.assert_allclose(
        BM25(corpus, k1=k1, b=b).scores(query),
        LoopBM25(corpus, k1=k1, b=b).scores(query),
        rtol=1e-12,
        atol=1e-12,
    )


def test_the_unicode_tokenizer_keeps_non_ascii_words_whole():
    assert tokenize("Café Straße") == ["caf", "stra", "e"]  # the chapter's, on purpose
    assert tokenize_unicode("Café Straße x_1") == ["café", "strasse", "x", "1"]
    texts = ["the café opens at nine", "a cafeteria menu", "caf"]
    ascii_scores = BM25(texts).scores("café")
    unicode_scores = BM25(texts, tokenizer="unicode").scores("café")
    # ASCII reads "café" as "caf", so it cannot tell the café from the word "caf".
    assert ascii_scores[0] > 0 and ascii_scores[2] > 0
    assert unicode_scores[0] > 0 and unicode_scores[1] == unicode_scores[2] == 0
    with pytest.raises(ValueError, match="tokenizer"):
        BM25(texts, tokenizer="latin")
