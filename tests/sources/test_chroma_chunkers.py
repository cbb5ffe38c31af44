"""Chroma's token chunkers: cl100k_base as tiktoken encodes it, windows and offsets exact."""

from __future__ import annotations

import itertools

import pytest

from rag_lab.documents import Document
from rag_lab.sources.chroma import chunkers as ch


def test_cl100k_encodes_as_tiktoken_does():
    # Token ids published with tiktoken (OpenAI's cookbook, "How to count tokens").
    assert ch.encoding().encode_ordinary("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert ch.encoding().encode_ordinary("hello world") == [15339, 1917]


def test_fixed_windows_step_by_size_minus_overlap():
    text = " ".join(f"w{i}" for i in range(400))
    tokens = ch.encoding().encode_ordinary(text)
    spans = ch.fixed_spans(text, 100, 40)
    starts = list(range(0, len(tokens), 60))
    assert len(spans) == next(i + 1 for i, s in enumerate(starts) if s + 100 >= len(tokens))
    for i, (s, e) in enumerate(spans):
        window = tokens[60 * i : 60 * i + 100]
        assert text[s:e] == ch.encoding().decode(window)
    assert spans[-1][1] == len(text)


def test_a_character_split_across_tokens_is_kept_whole():
    text = "日本語のテキスト" * 40  # CJK: cl100k splits some characters over two tokens
    for s, e in ch.fixed_spans(text, 7, 0):
        assert 0 <= s < e <= len(text)
    spans = ch.fixed_spans(text, 7, 0)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(b[0] <= a[1] for a, b in itertools.pairwise(spans))  # nothing skipped


def test_recursive_chunks_fit_and_overlap_by_whole_pieces():
    text = "\n\n".join(
        " ".join(f"Sentence {p}.{s} has words." for s in range(12)) for p in range(20)
    )
    spans = ch.recursive_spans(text, 60, 20)
    for s, e in spans:
        assert ch.token_count(text[s:e]) <= 60 + 2  # counts of pieces, joined: within a token
        assert text[s:e] == text[s:e].strip()
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans))  # overlap happens


def test_chunks_slice_back_to_their_text():
    doc = Document("d", "d", "One. Two three.\n\nFour five six.\n" * 50, format="plain")
    for kind, size, overlap in (("fixed", 20, 5), ("recursive", 20, 5)):
        chunks = ch.TokenChunker(kind, size, overlap).chunk(doc)
        assert chunks and all(doc.text[c.start : c.end] == c.content == c.text for c in chunks)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="'fixed' or 'recursive'"):
        ch.TokenChunker("semantic", 200, 0)
    with pytest.raises(ValueError, match="0 ≤ overlap < size"):
        ch.TokenChunker("fixed", 200, 200)
