from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.chunking import STRATEGIES, chunk_document
from rag_lab.citations import (
    CellRange,
    CharRange,
    Hit,
    Page,
    PageChars,
    Paged,
    TimeRange,
    build_context,
    column_number,
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


def test_the_four_locator_kinds_render_their_fragments():
    assert CharRange(25873, 26272).fragment == "#char=25873,26272"
    assert Page(12).fragment == "#page=12"
    assert TimeRange(132.4, 158.9).fragment == "#t=132.4,158.9"
    assert TimeRange(0, 60).fragment == "#t=0,60"
    assert CellRange("Q3 budget", "B2", "D9").fragment == "#sheet=Q3%20budget&range=B2:D9"
    assert CellRange("Sheet1", "A1", "A1").fragment == "#sheet=Sheet1&range=A1:A1"
    assert PageChars(3, 120, 480).fragment == "#page=3&char=120,480"
    for loc in (
        CharRange(1, 2),
        Page(3),
        PageChars(3, 120, 480),
        TimeRange(1.5, 2.25),
        CellRange("Ventes & coûts/2024", "AA10", "XFD1048576"),
    ):
        assert parse_fragment(loc.fragment) == loc


def test_a1_columns_count_in_base_26_without_zero():
    assert [column_number(c) for c in ("A", "Z", "AA", "AZ", "BA", "XFD")] == [
        1, 26, 27, 52, 53, 16_384,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "args"),
    [
        (CharRange, (5, 2)),
        (CharRange, (-1, 2)),
        (Page, (0,)),
        (TimeRange, (3.0, 1.0)),
        (CellRange, ("S", "B2", "A9")),  # right to left
        (CellRange, ("S", "A9", "B2")),  # bottom to top
        (CellRange, ("S", "A0", "B2")),  # rows start at 1
        (CellRange, ("S", "XFE1", "XFE2")),  # past the last column
        (CellRange, ("S", "a1", "b2")),  # A1 notation is upper case
        (CellRange, ("", "A1", "B2")),
    ],
)
def test_impossible_locators_are_refused(make, args):
    with pytest.raises(ValueError):
        make(*args)


def test_unknown_fragments_are_refused():
    with pytest.raises(ValueError, match="unknown fragment"):
        parse_fragment("#line=3")
    with pytest.raises(ValueError, match="malformed"):
        parse_fragment("#char=3")
    with pytest.raises(ValueError, match="malformed"):
        parse_fragment("#sheet=S&cells=A1:B2")
    with pytest.raises(ValueError, match="malformed"):
        parse_fragment("#page=3&range=1,2")
    with pytest.raises(ValueError, match="malformed"):
        parse_fragment("#page=0&char=1,2")  # pages count from 1


# A PDF of three pages, joined as rag_lab.sources.pdf.document joins them.
PDF = Document(
    "guides/manual", "Manual", "One two.\f\n\nThree.\f\n\nFour five six.", format="plain"
)
PAGED = Paged("guides/manual.pdf", (0, 11, 20), ((3, "OCR mean word confidence 61, under 80"),))


def _pdf_citation(start: int, end: int):
    chunk = chunk_document(PDF, "E")[0]
    chunk = type(chunk)(PDF.id, 0, "", PDF.text[start:end], "", start, end)
    _, (cite,) = build_context("q", [Hit(chunk, PDF.title, 0.2, PAGED)])
    return cite


def test_a_pdf_chunk_names_the_file_the_page_it_starts_on_and_its_characters():
    cite = _pdf_citation(11, 17)
    assert cite.quote == "Three."
    assert cite.href == "guides/manual.pdf#page=2&char=11,17"
    assert cite.locator_label == "p. 2" and cite.warning is None
    assert quote_matches(cite, PDF.text)
    across = _pdf_citation(4, 17)  # "two." on page 1 to "Three." on page 2
    assert across.href == "guides/manual.pdf#page=1&char=4,17"
    assert across.locator_label == "pp. 1–2"


def test_a_pdf_chunk_on_a_doubtful_page_carries_the_warning():
    cite = _pdf_citation(20, 34)
    assert cite.quote == "Four five six." and cite.locator_label == "p. 3"
    assert cite.warning == "p. 3: OCR mean word confidence 61, under 80"
    assert _pdf_citation(11, 23).warning == cite.warning  # pp. 2–3 include it
    assert _pdf_citation(0, 8).warning is None


def test_the_page_of_an_offset_counts_a_page_break_to_the_page_before():
    assert [PAGED.page_of(i) for i in (0, 8, 10, 11, 19, 20, 40)] == [1, 1, 1, 2, 2, 3, 3]


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


@pytest.mark.parametrize(
    ("doc_id", "href"),
    [
        ("guide#char=0,9999.md", "guide%23char=0,9999.md#char="),  # cannot pass for a locator
        ("notes?x=1&y=<script>.md", "notes%3Fx=1&y=%3Cscript%3E.md#char="),
        ("my notes (v2).md", "my%20notes%20%28v2%29.md#char="),
        ("Глава.md", "Глава.md#char="),  # letters stay as they are
    ],
)
def test_a_file_name_cannot_break_its_locator(doc_id, href):
    doc = Document(doc_id, "T", "# T\n\nA norm measures size.\n")
    (cite,) = build_context("q", [Hit(chunk_document(doc, "E")[0], doc.title, 0.1)])[1]
    assert cite.href.startswith(href)
    assert isinstance(parse_fragment("#" + cite.href.rpartition("#")[2]), CharRange)
    assert cite.href.count("#") == 1


def test_a_markdown_link_in_a_title_never_reaches_the_prompt():
    doc = Document("d", "See [the guide](http://evil.test/x)", "# T\n\nA norm measures size.\n")
    prompt, _ = build_context("q", [Hit(chunk_document(doc, "E")[0], doc.title, 0.1)])
    assert "http://evil.test" not in prompt and "[1] See the guide — " in prompt
