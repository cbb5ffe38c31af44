"""HTML read with the standard library's parser into :class:`~.markup.Block` records.

What a browser shows: the text, its white space collapsed, each block element (``<p>``,
``<li>``, ``<div>``, ``<td>``…) a paragraph of its own; ``<h1>``–``<h6>`` are headings of
that level (``<h2>`` a section the chunker names); ``<pre>`` is code, its white space kept
(inline ``<code>`` stays in its sentence). ``<script>``, ``<style>`` and ``<template>`` are not
shown, nor the ``<title>``: it is the document's title when it has no ``<h1>``.
"""

from __future__ import annotations

from html.parser import HTMLParser

from rag_lab.sources.markup import Block, Markup, markdown

_HIDDEN = frozenset({"script", "style", "template"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset(
    "address article aside blockquote body br caption dd details dialog div dl dt fieldset "
    "figcaption figure footer form header hr li main nav ol p section summary table tbody "
    "td tfoot th thead tr ul".split()
)


def read_html(text: str) -> Markup:
    """``text``, an HTML document, as Markdown blocks.

    >>> got = read_html("<title>T</title><h2>Use</h2><p>Run <code>x</code>.<pre>x --all</pre>")
    >>> got.title, got.text.split("\\n\\n")
    ('T', ['## Use', 'Run x.', '```\\nx --all\\n```\\n'])
    """
    parser = _Reader()
    parser.feed(text)
    parser.close()
    parser.flush()
    h1 = next((b.text for b in parser.blocks if b.kind == "heading" and b.level == 1), None)
    return Markup(markdown(parser.blocks), h1 or " ".join(parser.title.split()) or None)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.title = ""
        self._words: list[str] = []  # the block being read
        self._hidden: list[str] = []  # the open hidden elements
        self._in_title = False
        self._pre = 0  # open <pre> elements
        self._heading = 0  # the level of the open heading, 0 outside

    def flush(self) -> None:
        """End the block being read."""
        text = "".join(self._words)
        self._words = []
        if self._pre:
            self.blocks.append(Block("code", text.removeprefix("\n")))
        elif text.strip():
            kind = "heading" if self._heading else "prose"
            self.blocks.append(Block(kind, " ".join(text.split()), self._heading))

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HIDDEN:
            self._hidden.append(tag)
        elif self._pre:
            self._words += ["\n"] * (tag == "br")
            self._pre += tag == "pre"
        elif tag == "pre":
            self.flush()
            self._pre = 1
        elif tag in _HEADINGS:
            self.flush()
            self._heading = _HEADINGS[tag]
        elif tag in _BLOCKS:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in self._hidden:  # it and what is still open in it
            del self._hidden[len(self._hidden) - 1 - self._hidden[::-1].index(tag) :]
        elif tag == "pre" and self._pre:
            if self._pre == 1:
                self.flush()
            self._pre -= 1
        elif self._pre:
            return
        elif tag in _HEADINGS and self._heading:
            self.flush()
            self._heading = 0
        elif tag in _BLOCKS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._hidden:
            self._words.append(data)
