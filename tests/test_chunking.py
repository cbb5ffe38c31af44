from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.chunking import (
    OVERLAP,
    STRATEGIES,
    TARGET,
    blind_cuts_inside,
    chunk_corpus,
    chunk_document,
    containing,
    offset_errors,
    sized,
)
from rag_lab.documents import Document
from rag_lab.markdown import MarkdownDoc


def doc(text: str, title: str = "T") -> Document:
    return Document("01-t", title, text)


# --- hand-computed examples -------------------------------------------------------


def test_blind_cuts_every_512_characters_and_strips():
    text = "x" * 509 + "  \n" + "  " + "y" * 598  # 1112 characters
    chunks = chunk_document(doc(text), "A")
    assert [(c.start, c.end) for c in chunks] == [(0, 509), (514, 1024), (1024, 1112)]
    assert chunks[0].content == "x" * 509  # the slice's trailing "  \n" is stripped
    assert [c.text for c in chunks] == [c.content for c in chunks]


def test_overlap_body_starts_64_characters_into_the_previous_chunk():
    text = "".join(chr(ord("a") + i % 26) for i in range(1100))
    a, b = chunk_document(doc(text), "A"), chunk_document(doc(text), "B")
    assert [(c.start, c.end, c.content) for c in b] == [(c.start, c.end, c.content) for c in a]
    assert b[0].text == text[0:512]
    assert b[1].text == text[512 - OVERLAP : 1024]
    assert b[2].text == text[1024 - OVERLAP : 1100]


def test_overlap_never_reaches_past_a_short_previous_chunk():
    text = "# T\n\nShort.\n\n## S\n\n" + "z" * 100
    c0, c1 = chunk_document(doc(text), "D")
    assert c0.content == "Short." and c1.text == text[c0.start : c1.end]


def test_paragraphs_are_packed_up_to_512_and_never_split():
    p = ["a" * 200, "b" * 200, "c" * 200]
    text = "# T\n\n" + "\n\n".join(p) + "\n"
    chunks = chunk_document(doc(text), "C")
    # 200 + 2 + 200 = 402 fits; adding the third would make 604 > 512.
    assert [c.content for c in chunks] == [p[0] + "\n\n" + p[1], p[2]]
    assert chunks[0].start == 5 and chunks[1].start == 5 + 404


def test_a_paragraph_over_512_falls_back_to_sentences():
    sentence = "w" * 99 + ". "  # 101 characters with its trailing space
    paragraph = (sentence * 7).rstrip()  # 706 characters, one paragraph
    chunks = chunk_document(doc("# T\n\n" + paragraph), "C")
    # Five sentences end at 505 ≤ 512; the sixth would end at 606.
    assert [len(c.content) for c in chunks] == [504, 201]
    assert all(c.content.endswith(".") for c in chunks)


def test_one_sentence_longer_than_the_budget_stays_whole():
    text = "# T\n\n" + "v" * 700 + "."
    (chunk,) = chunk_document(doc(text), "C")
    assert len(chunk.content) == 701


def test_sections_headers_and_the_preamble():
    text = "# Linear Algebra\n\nIntro text.\n\n## Norms\n\nA norm.\n\n### Deeper\n\nMore.\n"
    chunks = chunk_document(doc(text, title="Linear Algebra"), "E")
    assert [(c.section, c.content) for c in chunks] == [
        ("", "Intro text."),
        ("Norms", "A norm.\n\n### Deeper\n\nMore."),
    ]
    assert chunks[0].text == "[Linear Algebra]\nIntro text."
    assert chunks[1].text == "[Linear Algebra > Norms]\nA norm.\n\n### Deeper\n\nMore."
    for c in chunks:
        assert "# Linear Algebra" not in c.content and "## Norms" not in c.content


def test_header_and_overlap_together():
    text = "# T\n\n" + "p" * 300 + "\n\n## S\n\n" + "q" * 300
    c0, c1 = chunk_document(doc(text), "F")
    assert c1.text == "[T > S]\n" + text[c0.end - OVERLAP : c1.end]
    assert c1.content == "q" * 300


def test_a_hash_line_inside_code_is_not_a_section():
    text = "# T\n\n## Real\n\n```python\n## not a heading\nx = 1\n```\n"
    (chunk,) = chunk_document(doc(text), "E")
    assert chunk.section == "Real" and "## not a heading" in chunk.content


def test_a_needle_across_a_blind_cut_is_destroyed_and_overlap_recovers_it():
    needle = "The answer is forty-two."
    text = "f" * 500 + " " + needle + " " + "g" * 300
    assert blind_cuts_inside(501, 501 + len(needle)) == [512]
    assert containing(chunk_document(doc(text), "A"), needle) == []
    assert containing(chunk_document(doc(text), "B"), needle) == [1]


def test_blind_cuts_inside():
    assert blind_cuts_inside(500, 1100) == [512, 1024]
    assert blind_cuts_inside(512, 600) == []


def test_unknown_strategy_is_rejected_with_the_choices():
    with pytest.raises(ValueError, match="choose one of A, B, C, D, E, F"):
        chunk_document(doc("x"), "G")


@pytest.mark.corpus
def test_the_real_corpus_slices_back_for_every_strategy(docs):
    for name in STRATEGIES:
        chunks = chunk_corpus(docs, name)
        assert offset_errors(chunks, docs) == [], name


# --- properties on generated documents -----------------------------------------------

_word = st.text(alphabet="abcdefghij.!? ", min_size=1, max_size=12)
_paragraph = st.lists(_word, min_size=1, max_size=120).map(lambda ws: " ".join(ws).strip() or "x")
_block = st.one_of(
    _paragraph,
    _paragraph.map(lambda p: "## " + p[:30].replace("\n", " ").strip()),
    _paragraph.map(lambda p: "```\n" + p + "\n```"),
    _paragraph.map(lambda p: p.replace(" ", "\n", 3)),  # hard-wrapped lines
)
_document = st.lists(_block, min_size=1, max_size=25).map(
    lambda bs: "# Title\n\n" + "\n\n".join(bs) + "\n"
)


def _check_invariants(text: str, name: str) -> None:
    d = doc(text, title="Title")
    chunks = chunk_document(d, name)
    s = STRATEGIES[name]
    assert offset_errors(chunks, [d]) == []
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for prev, c in itertools.pairwise(chunks):
        assert prev.end <= c.start, "chunks overlap or go backwards"
    structural = [h for h in MarkdownDoc(text).headings if h.level <= 2]
    covered = [False] * len(text)
    for c in chunks:
        covered[c.start : c.end] = [True] * (c.end - c.start)
        if s.cuts == "boundaries":
            for h in structural:
                assert not (h.start < c.end and c.start < h.end), "a heading line in content"
    for h in structural:
        for i in range(h.start, h.end + 1):
            if i < len(covered) and s.cuts == "boundaries":
                covered[i] = True
    assert all(covered[i] or text[i].isspace() for i in range(len(text))), "text not covered"
    if s.cuts == "boundaries":
        for m in re.finditer(r"[^\n](?:[^\n]|\n(?!\n))*", text):
            para = m.group().strip()
            if len(para) <= TARGET and not para.startswith(("# ", "## ")) and "```" not in para:
                assert any(para in c.content for c in chunks), "a short paragraph was split"
    for prev, c in zip([None, *chunks], chunks, strict=False):
        body = c.text.split("\n", 1)[1] if s.header else c.text
        if s.overlap and prev is not None:
            assert body == text[max(prev.start, prev.end - OVERLAP) : c.end]
        else:
            assert body == c.content


@settings(max_examples=150, deadline=None)
@given(_document, st.sampled_from(sorted(STRATEGIES)))
def test_chunk_invariants_hold_on_generated_documents(text, name):
    _check_invariants(text, name)


# --- other chunk sizes: a named option beside the six -------------------------------


def test_sized_at_512_is_the_strategy_itself():
    for name, s in STRATEGIES.items():
        assert sized(name, TARGET) == s


def test_sized_names_labels_and_refuses_a_bad_size():
    assert sized("D", 256).name == "D256" and sized("D", 256).label == "boundaries + overlap at 256"
    assert sized(sized("C", 256), 1024).name == "C1024"
    with pytest.raises(ValueError, match="positive number of characters"):
        sized("C", 0)


def test_blind_cuts_follow_the_size():
    text = "x" * 600
    assert [(c.start, c.end) for c in chunk_document(doc(text), sized("A", 256))] == [
        (0, 256),
        (256, 512),
        (512, 600),
    ]


@settings(max_examples=60, deadline=None)
@given(_document, st.sampled_from(["A", "B", "C", "D", "E", "F"]), st.sampled_from([64, 256, 1024]))
def test_sized_chunks_slice_back_and_fit_unless_one_sentence_is_longer(text, name, size):
    s = sized(name, size)
    d = doc(text)
    chunks = chunk_document(d, s)
    assert offset_errors(chunks, [d]) == []
    for c in chunks:
        if c.end - c.start > size:  # only a lone paragraph-less sentence may exceed the budget
            assert s.cuts == "boundaries" and len(list(re.finditer(r"[.!?]\s", c.content))) == 0
