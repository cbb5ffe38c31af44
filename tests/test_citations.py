from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.chunking import STRATEGIES, chunk_document
from rag_lab.citations import (
    CharRange,
    Hit,
    Page,
    TimeRange,
    build_context,
    parse_fragment,
    quote_matches,
)
from rag_lab.documents import Document

DOC = Document(
    "03-la",
    "Linear Algebra",
    "# Linear Algebra\n\nIntro sentence.\n\n## Norms\n\nA norm measures size. It is a function.\n",
)


def hits(strategy: str = "F") -> list[Hit]:
    return [Hit(c, DOC.title, 0.1 * (i + 1)) for i, c in enumerate(chunk_document(DOC, strategy))]


def test_build_context_numbers_sources_and_quotes_content_not_text():
    prompt, cites = build_context("What is a norm?", hits("F"))
    assert [c.index for c in cites] == [1, 2]
    assert cites[1].quote == "A norm measures size. It is a function."
    assert cites[1].fragment == "#char=45,84" and DOC.text[45:84] == cites[1].quote
    assert cites[1].locator_label == "Norms" and cites[0].locator_label == "(introduction)"
    assert cites[1].document_name == "Linear Algebra" and cites[1].href == "03-la#char=45,84"
    # The embedded text carries the header and overlap; neither reaches the quote or prompt.
    assert hits("F")[1].chunk.text.startswith("[Linear Algebra > Norms]\n")
    assert "[Linear Algebra > Norms]" not in prompt
    assert "[1] Linear Algebra — (introduction)\nIntro sentence." in prompt
    assert "[2] Linear Algebra — Norms\nA norm measures size." in prompt
    assert prompt.rstrip().endswith("QUESTION\nWhat is a norm?")
    assert "only the numbered sources" in prompt and "say that they do not" in prompt
    assert "#char" not in prompt  # the model never sees a locator


def test_the_three_locator_kinds_render_standard_fragments():
    assert CharRange(25873, 26272).fragment == "#char=25873,26272"
    assert Page(12).fragment == "#page=12"
    assert TimeRange(132.4, 158.9).fragment == "#t=132.4,158.9"
    assert TimeRange(0, 60).fragment == "#t=0,60"
    for loc in (CharRange(1, 2), Page(3), TimeRange(1.5, 2.25)):
        assert parse_fragment(loc.fragment) == loc


@pytest.mark.parametrize(
    ("make", "args"),
    [(CharRange, (5, 2)), (CharRange, (-1, 2)), (Page, (0,)), (TimeRange, (3.0, 1.0))],
)
def test_impossible_locators_are_refused(make, args):
    with pytest.raises(ValueError):
        make(*args)


def test_unknown_fragments_are_refused():
    with pytest.raises(ValueError, match="unknown fragment"):
        parse_fragment("#line=3")
    with pytest.raises(ValueError, match="malformed"):
        parse_fragment("#char=3")


_text = st.lists(
    st.one_of(
        st.text(alphabet="abc .\n", min_size=1, max_size=300),
        st.just("## Section\n"),
        st.just("\n\n"),
    ),
    min_size=1,
    max_size=20,
).map(lambda parts: "# T\n\n" + "".join(parts))


@settings(max_examples=100, deadline=None)
@given(_text, st.sampled_from(sorted(STRATEGIES)))
def test_every_citation_quote_is_the_document_at_its_fragment(text, strategy):
    doc = Document("d", "T", text)
    chunks = chunk_document(doc, strategy)
    _, cites = build_context("q", [Hit(c, "T", 0.5) for c in chunks])
    for c in cites:
        assert quote_matches(c, text)
