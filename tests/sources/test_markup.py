"""The readers of reST and HTML, and the Markdown structure they are read into."""

from __future__ import annotations

import pytest

from rag_lab.chunking import chunk_document, sections
from rag_lab.documents import Document
from rag_lab.markdown import MarkdownDoc
from rag_lab.sources.html import read_html
from rag_lab.sources.markup import Block, markdown

RST = """\
User guide
==========

Intro with ``code``.

Install
-------

Run this::

   pip install thing
   # not a heading

.. note:: The install needle sits in a note.

Use
---

* first item

Details
~~~~~~~

Deeper text.
"""

HTML = """<!doctype html><html><head><title>Page title</title>
<style>p { color: red }</style><script>var hidden = "<p>script text</p>";</script></head>
<body><h1>User guide</h1><p>Intro with <code>inline()</code> &amp; more.
<h2>Install</h2><pre><code>pip install thing
# not a heading</code></pre>
<h2>Use</h2><ul><li>first item<li>second item</ul><h3>Details</h3><p>Deeper text.</p>
</body></html>"""


def test_rst_titles_become_the_document_title_and_its_sections():
    pytest.importorskip("docutils")
    from rag_lab.sources.rst import read_rst

    got = read_rst(RST)
    md = MarkdownDoc(got.text)
    assert got.title == "User guide"
    assert [(h.level, h.title) for h in md.headings] == [
        (1, "User guide"),
        (2, "Install"),
        (2, "Use"),
        (3, "Details"),
    ]
    assert [s.name for s in sections(got.text)] == ["", "Install", "Use"]
    [(start, end)] = md.code_blocks
    assert got.text[start:end] == "```\npip install thing\n# not a heading\n```"
    at = got.text.index("The install needle")
    assert md.overlaps(at, at + 18) == dict.fromkeys(
        ["heading", "code", "table", "display math"], False
    )
    assert got.warnings == ()


def test_rst_errors_of_docutils_are_warnings_with_their_line():
    pytest.importorskip("docutils")
    from rag_lab.sources.rst import read_rst

    got = read_rst("Title\n=====\n\nText.\n\n.. toctree::\n\n   a\n")
    assert got.warnings == ('docutils: line 6: Unknown directive type "toctree".',)
    assert got.text == "# Title\n\nText.\n"


def test_html_headings_are_sections_pre_is_code_script_and_style_dropped():
    got = read_html(HTML)
    md = MarkdownDoc(got.text)
    assert got.title == "User guide"
    assert [(h.level, h.title) for h in md.headings] == [
        (1, "User guide"),
        (2, "Install"),
        (2, "Use"),
        (3, "Details"),
    ]
    assert [s.name for s in sections(got.text)] == ["", "Install", "Use"]
    [(start, end)] = md.code_blocks
    assert got.text[start:end] == "```\npip install thing\n# not a heading\n```"
    assert "Intro with inline() & more." in got.text.split("\n\n")
    assert "script text" not in got.text and "color" not in got.text
    assert read_html("<title>Only a\n title</title><p>x").title == "Only a title"


def test_prose_that_looks_like_markdown_is_escaped_and_code_fenced_apart():
    text = markdown([Block("prose", "# one\n```two"), Block("code", "```\nx")])
    assert text == "\\# one\n\\```two\n\n~~~\n```\nx\n~~~\n"
    assert MarkdownDoc(text).headings == []
    assert MarkdownDoc(text).code_blocks == [(text.index("~~~"), len(text) - 1)]


def test_a_myst_note_fence_is_prose_and_a_code_directive_is_code():
    text = "# T\n\n```{note}\nThe needle is prose.\n```\n\n```{code-block} python\nx = 1\n```\n"
    md = MarkdownDoc(text)
    at = text.index("The needle")
    assert md.overlaps(at, at + 10)["code"] is False
    assert md.code_blocks == [(text.index("```{code-block}"), len(text) - 1)]
    nested = "````{warning}\nSee:\n```python\n# c\n```\n````\n## After\n"
    assert [h.title for h in MarkdownDoc(nested).headings] == ["After"]
    assert MarkdownDoc(nested).code_blocks == [(nested.index("```p"), nested.index("\n````"))]


def test_a_fence_opened_on_a_list_item_closes_where_it_closes():
    text = (
        "# T\n\n## Steps\n\n- Install:\n- ```bash\n  pip install x\n  ```\n\n"
        "## Use\n\nThe needle of Use.\n\n1. ~~~\n   # code\n   ~~~\n\n## End\n\nLast.\n"
    )
    md = MarkdownDoc(text)
    assert [h.title for h in md.headings] == ["T", "Steps", "Use", "End"]
    assert len(md.code_blocks) == 2
    chunks = chunk_document(Document("t", "T", text), "E")
    [use] = [c for c in chunks if "The needle of Use." in c.content]
    assert use.section == "Use"
    assert chunks[-1].section == "End"
