"""reStructuredText read with docutils into :class:`~.markup.Block` records (:func:`read_rst`).

The document's title (docutils promotes a lone top-level section's) is the level-1 heading;
a section is a heading one level deeper than the section it is in, so top-level sections are
the ``## `` sections the chunker names. Literal, doctest and math blocks (``::``,
``.. code-block::``) are code; every other text element (paragraphs, admonitions, list
items, table cells) is prose; comments, targets and substitution definitions are not text.
docutils' own errors (an unknown directive, whose content it drops; an unknown role, kept as
written) are the reader's warnings, with their line. Included files and raw output are
disabled: a document reads only itself.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from rag_lab.sources.markup import Block, Markup, markdown

_SETTINGS = {
    "_disable_config": True,  # no docutils.conf from the user's machine
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "halt_level": 5,  # never raise: a file's errors are its warnings
    "report_level": 5,  # nothing printed; the messages are read from the tree
}
_ERROR = 3
"""docutils' level of the messages reported: ERROR and SEVERE (4)."""


def read_rst(text: str) -> Markup:
    """``text``, a reStructuredText document, as Markdown blocks.

    >>> got = read_rst("Guide\\n=====\\n\\nIntro.\\n\\nInstall\\n-------\\n\\n::\\n\\n   make\\n")
    >>> got.title, got.text.split("\\n\\n")
    ('Guide', ['# Guide', 'Intro.', '## Install', '```\\nmake\\n```\\n'])
    """
    try:
        from docutils import nodes
        from docutils.core import publish_doctree
    except ImportError as err:  # a base dependency, imported when a .rst file is read
        raise ImportError("reading .rst needs docutils, a base dependency of rag_lab") from err
    settings = {**_SETTINGS, "warning_stream": io.StringIO()}
    tree = publish_doctree(text, settings_overrides=settings)
    said = tuple(
        f"docutils: line {m.get('line', '?')}: {' '.join(m[0].astext().split())}"
        for m in tree.findall(nodes.system_message)
        if m["level"] >= _ERROR
    )
    title = tree.next_node(nodes.title) if tree.children else None
    promoted = title is not None and title.parent is tree
    return Markup(markdown(_blocks(tree, 1)), title.astext() if promoted else None, said)


def _blocks(node, depth: int) -> Iterator[Block]:
    """The blocks under ``node``; ``depth``: the heading level of its title."""
    from docutils import nodes

    for child in node.children:
        if isinstance(child, (nodes.system_message, nodes.Invisible, nodes.raw)):
            continue
        if isinstance(child, nodes.title) and isinstance(node, (nodes.document, nodes.section)):
            yield Block("heading", child.astext(), depth)
        elif isinstance(child, nodes.section):
            yield from _blocks(child, min(depth + 1, 6))
        elif isinstance(child, (nodes.literal_block, nodes.doctest_block, nodes.math_block)):
            yield Block("code", child.astext())
        elif isinstance(child, nodes.TextElement):
            yield Block("prose", child.astext())
        elif isinstance(child, nodes.Element):
            yield from _blocks(child, depth)
