"""Chroma's token chunkers against LangChain's own splitters, on Chroma's five corpora.

Chroma's chunkers are adapted from LangChain's; ``langchain-text-splitters`` is the
independent implementation here. Its recursive splitter, given cl100k_base token counts
as its length and Chroma's separators, and its token-window splitter, given cl100k_base's
encode and decode, must return exactly the chunk texts that our offsets slice.
"""

from __future__ import annotations

import pytest

from rag_lab.sources import chroma
from rag_lab.sources.chroma import chunkers as ch

pytestmark = [pytest.mark.comparison, pytest.mark.corpus]

SETTINGS = [(250, 0), (250, 125), (200, 0)]
"""The sizes and overlaps (tokens) of the rows of Chroma's table the lab reproduces."""


@pytest.fixture(scope="module")
def docs():
    return chroma.load()[0]


@pytest.mark.parametrize(("size", "overlap"), SETTINGS)
def test_recursive_matches_langchain(docs, size, overlap):
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        length_function=ch.token_count,
        separators=list(ch.SEPARATORS),
        keep_separator=True,
    )
    for doc in docs:
        ours = [doc.text[s:e] for s, e in ch.recursive_spans(doc.text, size, overlap)]
        assert ours == splitter.split_text(doc.text), doc.id


@pytest.mark.parametrize(("size", "overlap"), SETTINGS)
def test_fixed_matches_langchain(docs, size, overlap):
    from langchain_text_splitters.base import Tokenizer, split_text_on_tokens

    enc = ch.encoding()
    tokenizer = Tokenizer(overlap, size, enc.decode, enc.encode_ordinary)
    for doc in docs:
        ours = [doc.text[s:e] for s, e in ch.fixed_spans(doc.text, size, overlap)]
        assert ours == split_text_on_tokens(text=doc.text, tokenizer=tokenizer), doc.id
