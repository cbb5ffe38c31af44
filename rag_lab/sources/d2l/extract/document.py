"""One d2l source file rendered as a corpus document, the cleaning rules applied in order."""

from __future__ import annotations

from collections.abc import Mapping

from rag_lab.sources.d2l.extract import d2lbook
from rag_lab.sources.d2l.extract.bib import Reference, render_citations
from rag_lab.sources.d2l.extract.code_blocks import clean_code_block
from rag_lab.sources.d2l.extract.fences import Fence, Text, split_fences
from rag_lab.sources.d2l.extract.layout import normalise_whitespace, unwrap


def render_document(
    source: str, numbering: Mapping[str, str], bibliography: Mapping[str, Reference]
) -> str:
    """The plain-Markdown document for one d2l source file.

    ``numbering`` maps labels to the book's reference text (see
    :func:`rag_lab.sources.d2l.extract.numbering.book_numbering`) and ``bibliography``
    maps citation keys to references (see
    :func:`rag_lab.sources.d2l.extract.bib.parse_bibliography`).
    """
    parts: list[str] = []
    for segment in d2lbook.select_text_tabs(split_fences(source)):
        if isinstance(segment, Fence):
            code = clean_code_block(segment)
            if code is not None:
                parts.extend(code.lines())
        else:
            parts.append(_render_text(segment, numbering, bibliography))
    return normalise_whitespace(unwrap("\n".join(parts)))


def _render_text(
    text: Text, numbering: Mapping[str, str], bibliography: Mapping[str, Reference]
) -> str:
    """Apply the Markdown rules, after the tab selection, to the lines between two fences."""
    rendered = "\n".join(text.lines)
    rendered = d2lbook.strip_html_comments(rendered)
    rendered = d2lbook.remove_slide_marks(rendered)
    rendered = d2lbook.resolve_references(rendered, numbering)
    rendered = render_citations(rendered, bibliography)
    rendered = d2lbook.drop_directive_lines(rendered)
    rendered = d2lbook.drop_images(rendered)
    rendered = d2lbook.unmark_table_captions(rendered)
    return d2lbook.drop_discussion_links(rendered)
