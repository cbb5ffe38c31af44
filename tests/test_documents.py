"""Documents: the title rule, the format field, and plain text chunked as one section."""

from __future__ import annotations

import pytest

from rag_lab.chunking import chunk_document
from rag_lab.documents import Document, title_of


def test_the_title_is_the_first_level_one_heading_outside_code():
    assert title_of("```\n# a comment\n```\n## Part\n# Tensors\n", "01-x") == "Tensors"
    assert title_of("no heading here", "01-x") == "01-x"


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="format"):
        Document("x", "x", "text", format="html")


def test_plain_text_lines_starting_with_a_hash_are_text_not_headings():
    text = "# not a heading\n\nFirst paragraph.\n\n## still not one\n\nSecond paragraph.\n"
    plain = chunk_document(Document("notes", "notes", text, format="plain"), "E")
    markdown = chunk_document(Document("notes", "notes", text), "E")
    assert [c.section for c in plain] == [""]  # one section, the whole file
    assert plain[0].content == text.strip() and plain[0].text.startswith("[notes]\n# not a")
    assert [c.section for c in markdown] == ["", "still not one"]
    for c in plain:
        assert text[c.start : c.end] == c.content
