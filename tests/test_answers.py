from __future__ import annotations

import pytest

from rag_lab.answers import declines, map_citations, parse_markers, render
from rag_lab.citations import Citation


def _citation(index: int, doc: str, start: int, end: int) -> Citation:
    return Citation(
        index=index,
        document_id=doc,
        document_name=doc.title(),
        locator_label=f"Section {index}",
        fragment=f"#char={start},{end}",
        quote=f"quote {index}",
        distance=0.5 + index / 100,
    )


SOURCES = [_citation(1, "alpha", 0, 10), _citation(2, "beta", 20, 35), _citation(3, "gamma", 7, 9)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The mean [1].", [1]),
        ("Both [1, 2] and [2;3].", [1, 2, 2, 3]),
        ("Adjacent [2][1] keep their order.", [2, 1]),
        ("A range [1-3] and an en dash [2–3].", [1, 2, 3, 2, 3]),
        ("Spaces inside [ 2 ] are fine.", [2]),
        ("Twice [1] and again [1].", [1, 1]),
        ("No markers, (1), Source 2, [Source 3], [a].", []),
        ("Index `x[0]` is code; the claim is [2].", [2]),
        ("```python\nA[1] = B[2]\n```\nSo [3].", [3]),
        ("Truncated fence [1]\n```python\ny = x[4]", [1]),
        ("A reversed range [3-1] names its two ends.", [3, 1]),
        ("A huge range [1-999] is not expanded.", [1, 999]),
    ],
)
def test_parse_markers(text, expected):
    assert parse_markers(text) == expected


def test_valid_markers_map_to_the_servers_citations_in_order_of_first_mention():
    cited = map_citations("Mean [2], and also [1][2].", SOURCES)
    assert cited.markers == (2, 1, 2)
    assert [c.document_id for c in cited.cited] == ["beta", "alpha"]
    assert cited.invalid == () and not cited.cites_nothing and not cited.has_invalid


def test_numbers_that_name_no_source_are_flagged_once_each():
    cited = map_citations("Sum [4], mean [0], also [4] and [3].", SOURCES)
    assert cited.invalid == (4, 0)
    assert [c.index for c in cited.cited] == [3]
    assert cited.has_invalid


def test_an_answer_without_markers_cites_nothing():
    cited = map_citations("The mean, according to Source 1.", SOURCES)
    assert cited.cites_nothing and cited.cited == () and cited.invalid == ()
    assert not cited.only_markers


@pytest.mark.parametrize(
    ("text", "expected"),
    [("[1]", True), (" [1] [2].\n", True), ("[1] The mean.", False), ("", False)],
)
def test_only_markers_is_a_citation_without_a_claim(text, expected):
    assert map_citations(text, SOURCES).only_markers is expected


def test_render_links_valid_markers_and_flags_invalid_ones():
    cited = map_citations("Mean [2] but [5].", SOURCES)
    assert render(cited) == (
        "Mean [[2]](beta#char=20,35) but [5] *(no such source)*.\n"
        "\n"
        "**Sources**\n"
        "\n"
        "2. [Beta — Section 2](beta#char=20,35) · distance 0.520\n"
        "\n"
        "**Invalid markers**: [5] name no source (the model was shown 3)."
    )


def test_render_expands_lists_and_leaves_code_alone():
    text = "See [1, 3] and `a[1]`."
    assert render(map_citations(text, SOURCES)).splitlines()[0] == (
        "See [[1]](alpha#char=0,10) [[3]](gamma#char=7,9) and `a[1]`."
    )


def test_render_says_when_nothing_is_cited():
    assert render(map_citations("Just prose.", SOURCES)) == (
        "Just prose.\n\n**No source cited**: nothing in this answer can be traced to a source."
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The sources do not contain the answer.", True),
        ("The provided sources don’t contain information on this.", True),
        ("There is NO INFORMATION about passports here.", True),
        ("I cannot answer this from the sources.", True),
        ("Boil the egg for six minutes [1].", False),
        ("The sources contain the answer [1].", False),
    ],
)
def test_declines(text, expected):
    assert declines(text) is expected


def test_a_title_cannot_end_its_source_link_or_open_a_tag():
    from dataclasses import replace

    cite = replace(_citation(1, "a", 0, 5), document_name="x](http://evil.test) <script>")
    shown = render(map_citations("Yes [1].", [cite]))
    (line,) = [s for s in shown.splitlines() if s.startswith("1. [")]
    assert line.startswith("1. [x\\](http://evil.test) &lt;script> — ")
    assert "<script>" not in shown
