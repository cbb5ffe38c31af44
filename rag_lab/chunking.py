"""Six chunking strategies from four ingredients, with offsets that always slice back.

The ingredients:

- **blind** cuts: every :data:`TARGET` characters, looking at nothing;
- **boundaries**: paragraphs packed up to :data:`TARGET` characters within a section,
  never cut inside a paragraph; a paragraph longer than that falls back to sentences;
- a contextual **header** ``[Document title > Section]`` in front of what is embedded;
- an **overlap**: the embedded body starts :data:`OVERLAP` characters back, inside the
  previous chunk, so a sentence cut by a boundary lies whole in the next chunk.

=====  ==========  ======  =======
name   cuts        header  overlap
=====  ==========  ======  =======
A      blind       no      no
B      blind       no      yes
C      boundaries  no      no
D      boundaries  no      yes
E      boundaries  yes     no
F      boundaries  yes     yes
=====  ==========  ======  =======

Every chunk carries two texts. ``text`` is what gets embedded and searched (header and
overlap included); ``content`` is only the chunk's own words, what a citation quotes,
and ``document.text[start:end] == content`` holds for every chunk. Offsets are found
in the document, never accumulated from lengths, so they cannot drift.

Example::

    >>> from rag_lab.documents import Document
    >>> doc = Document("01-x", "X", "# X\\n\\nIntro.\\n\\n## Part\\n\\nBody text.\\n")
    >>> [(c.section, c.content, c.start) for c in chunk_document(doc, "C")]
    [('', 'Intro.', 5), ('Part', 'Body text.', 22)]
    >>> chunk_document(doc, "E")[1].text
    '[X > Part]\\nBody text.'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from rag_lab.documents import Document
from rag_lab.markdown import MarkdownDoc

TARGET = 512
"""Characters per chunk: the budget for boundaries, the stride for blind cuts."""
OVERLAP = 64
"""Characters of the previous chunk carried into the embedded body."""
MAX_FACTOR = 2
"""No chunk of :func:`chunk_bounded` (what ``rag-lab index`` stores) is over this many
times its strategy's size: a chunk of E is at most 1,024 characters."""

# A paragraph: from a non-newline character up to (not including) a blank line.
_PARAGRAPH = re.compile(r"[^\n](?:[^\n]|\n(?!\n))*")
# A sentence: anything up to terminal punctuation, the punctuation, trailing space.
_SENTENCE = re.compile(r"[^.!?]*[.!?]*\s*")
# Where the chunker would see a Markdown heading; plain text has none.
_LINE_START_HASH = re.compile(r"^#", re.MULTILINE)


@dataclass(frozen=True)
class Strategy:
    """One combination of the ingredients."""

    name: str
    cuts: str
    """``"blind"`` or ``"boundaries"``."""
    header: bool
    overlap: bool
    size: int = TARGET
    """Characters per chunk. The six strategies use the chapter's :data:`TARGET`; other
    sizes are the named option of :func:`sized`, measured beside them."""

    @property
    def label(self) -> str:
        parts = [self.cuts] + ["header"] * self.header + ["overlap"] * self.overlap
        size = "" if self.size == TARGET else f" at {self.size:,}"
        return " + ".join(parts) + size


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("A", "blind", header=False, overlap=False),
        Strategy("B", "blind", header=False, overlap=True),
        Strategy("C", "boundaries", header=False, overlap=False),
        Strategy("D", "boundaries", header=False, overlap=True),
        Strategy("E", "boundaries", header=True, overlap=False),
        Strategy("F", "boundaries", header=True, overlap=True),
    )
}


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit of one document."""

    doc_id: str
    index: int
    """Position within its document, from 0."""
    text: str
    """What is embedded and searched: [header +] [overlap +] content."""
    content: str
    """Only this chunk's own words; what a citation quotes."""
    section: str
    """The ``## `` section the chunk starts in; empty before the first one."""
    start: int
    end: int
    """``document.text[start:end] == content``."""

    @property
    def id(self) -> str:
        return f"{self.doc_id}#{self.index}"


def sized(strategy: str | Strategy, size: int) -> Strategy:
    """``strategy`` with chunks of ``size`` characters instead of 512, named ``C256`` etc.

    The overlap stays :data:`OVERLAP` characters. ``sized("C", TARGET)`` is ``C`` itself.

    >>> sized("C", 1024).label
    'boundaries at 1,024'
    """
    s = as_strategy(strategy)
    if size < 1:
        raise ValueError(f"a chunk size must be a positive number of characters, not {size}")
    name = s.name.rstrip("0123456789")
    return dataclasses.replace(s, name=name if size == TARGET else f"{name}{size}", size=size)


def chunk_corpus(docs: Iterable[Document], strategy: str | Strategy) -> list[Chunk]:
    """Chunk every document in order; the list position is the chunk's global id."""
    return [chunk for doc in docs for chunk in chunk_document(doc, strategy)]


def chunk_all(docs: Sequence[Document]) -> dict[str, list[Chunk]]:
    """All six strategies over the same documents, keyed ``"A"``–``"F"``."""
    return {name: chunk_corpus(docs, name) for name in STRATEGIES}


def chunk_document(doc: Document, strategy: str | Strategy) -> list[Chunk]:
    """Chunk one document with one of the six strategies (a name ``"A"``–``"F"`` or a Strategy).

    A ``"plain"`` document is one section whatever its lines look like: the chunker reads
    Markdown headings, and a plain-text line may start with ``#``. So its text is chunked
    with those characters masked (same length, so offsets, paragraphs and sentences are
    unchanged) and every chunk is cut again from the real text.
    """
    s = as_strategy(strategy)
    if doc.format == "plain":
        masked = dataclasses.replace(
            doc, text=_LINE_START_HASH.sub("x", doc.text), format="markdown"
        )
        return [_unmasked(c, doc.text, s) for c in chunk_document(masked, s)]
    parts = sections(doc.text)
    spans = list(
        _blind(doc.text, s.size) if s.cuts == "blind" else _packed(doc.text, parts, s.size)
    )
    return _assembled(doc, parts, spans, s)


@dataclass(frozen=True)
class Bounded:
    """What :func:`chunk_bounded` made of a document."""

    chunks: list[Chunk]
    cut: int = 0
    """How many of the strategy's chunks were over the bound, and cut into pieces."""


def chunk_bounded(doc: Document, strategy: str | Strategy, factor: int = MAX_FACTOR) -> Bounded:
    """:func:`chunk_document`, with no chunk over ``factor`` times the strategy's size.

    The six strategies keep a paragraph, or a sentence, whole however long it is; a text
    with no paragraph or sentence break (a log, a table flattened to one line, a minified
    file) then is one chunk of 100,000 characters, of which the encoder reads the first
    256 word-pieces. Here such a chunk is cut into pieces of at most the strategy's size,
    each at the last whitespace before it when there is one in its second half (else
    at the size), and :attr:`Bounded.cut` says how many were. A document with no chunk
    over the bound gets :func:`chunk_document`'s chunks, the same objects: the chapter's
    strategies and its numbers are the same on any text that has breaks.

    >>> from rag_lab.documents import Document
    >>> doc = Document("x", "X", "word " * 300, format="plain")
    >>> got = chunk_bounded(doc, "C")
    >>> len(chunk_document(doc, "C")), got.cut, [len(c.content) for c in got.chunks]
    (1, 1, [509, 509, 479])
    """
    s = as_strategy(strategy)
    chunks = chunk_document(doc, s)
    limit = factor * s.size
    if all(c.end - c.start <= limit for c in chunks):
        return Bounded(chunks)
    spans, cut = [], 0
    for c in chunks:
        if c.end - c.start <= limit:
            spans.append((c.start, c.end))
        else:
            spans += _pieces(doc.text, c.start, c.end, s.size)
            cut += 1
    plain = doc.format == "plain"
    parts = [Section(0, 0, len(doc.text), "")] if plain else sections(doc.text)
    return Bounded(_assembled(doc, parts, spans, s), cut)


def _pieces(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """``text[start:end]`` in stripped pieces of at most ``size``, cut at whitespace if it can."""
    out: list[tuple[int, int]] = []
    at = start
    while at < end:
        stop = min(at + size, end)
        if stop < end:
            space = max(text.rfind(" ", at, stop + 1), text.rfind("\n", at, stop + 1))
            if space > at + size // 2:
                stop = space
        out += _stripped(text, at, stop)
        at = stop
    return out


def _assembled(
    doc: Document, parts: list[Section], spans: Sequence[tuple[int, int]], s: Strategy
) -> list[Chunk]:
    """The chunks of ``doc`` over ``spans``: section, header and overlap as ``s`` says."""
    chunks = []
    prev: tuple[int, int] | None = None
    for index, (start, end) in enumerate(spans):
        section = _section_at(parts, start)
        body_start = max(prev[0], prev[1] - OVERLAP) if s.overlap and prev else start
        body = doc.text[body_start:end]
        text = f"{_header(doc.title, section)}\n{body}" if s.header else body
        content = doc.text[start:end]
        chunks.append(Chunk(doc.id, index, text, content, section, start, end))
        prev = (start, end)
    return chunks


def _unmasked(chunk: Chunk, text: str, s: Strategy) -> Chunk:
    header = chunk.text.partition("\n")[0] + "\n" if s.header else ""
    body_start = chunk.end - (len(chunk.text) - len(header))
    return dataclasses.replace(
        chunk, text=header + text[body_start : chunk.end], content=text[chunk.start : chunk.end]
    )


def containing(
    chunks: Sequence[Chunk], needle: str, fold: Callable[[str], str] | None = None
) -> list[int]:
    """Positions of the chunks whose embedded ``text`` holds ``needle`` whole: the hits.

    The lab's one definition of relevance. ``fold`` normalises both sides first (e.g.
    :func:`rag_lab.text.flat` for text extracted from PDFs, whose lines are rewrapped).
    """
    if fold is None:
        return [i for i, c in enumerate(chunks) if needle in c.text]
    folded = fold(needle)
    return [i for i, c in enumerate(chunks) if folded in fold(c.text)]


def offset_errors(chunks: Iterable[Chunk], docs: Iterable[Document]) -> list[str]:
    """Every chunk whose offsets do not slice back to its content, one line each."""
    texts = {d.id: d.text for d in docs}
    errors = []
    for c in chunks:
        if c.doc_id not in texts:
            errors.append(f"{c.id}: unknown document")
        elif texts[c.doc_id][c.start : c.end] != c.content:
            errors.append(f"{c.id}: text[{c.start}:{c.end}] differs from content")
        elif not c.content or c.content != c.content.strip():
            errors.append(f"{c.id}: content is empty or not stripped")
    return errors


def blind_cuts_inside(start: int, end: int) -> list[int]:
    """The blind-cut positions strictly inside ``[start, end)``: where A splits a span."""
    first = (start // TARGET + 1) * TARGET
    return list(range(first, end, TARGET))


# --- the cuts -----------------------------------------------------------------


def _blind(text: str, size: int = TARGET) -> Iterator[tuple[int, int]]:
    for at in range(0, len(text), size):
        yield from _stripped(text, at, min(at + size, len(text)))


def _packed(text: str, parts: list[Section], size: int = TARGET) -> Iterator[tuple[int, int]]:
    for sec in parts:
        yield from _pack_section(text, sec.body_start, sec.body_end, size)


def _pack_section(text: str, lo: int, hi: int, size: int) -> Iterator[tuple[int, int]]:
    """Paragraphs packed greedily; a paragraph over ``size`` is packed by its sentences alone."""
    group: list[tuple[int, int]] = []
    for m in _PARAGRAPH.finditer(text, lo, hi):
        if m.end() - m.start() > size:
            yield from _greedy(text, group, size)
            group = []
            sentences = _SENTENCE.finditer(text, m.start(), m.end())
            yield from _greedy(text, [s.span() for s in sentences if s.end() > s.start()], size)
        else:
            group.append(m.span())
    yield from _greedy(text, group, size)


def _greedy(text: str, units: list[tuple[int, int]], size: int) -> Iterator[tuple[int, int]]:
    """Merge consecutive units while the merged span fits ``size``; a lone unit may exceed it."""
    current: tuple[int, int] | None = None
    for start, end in units:
        if current and end - current[0] > size:
            yield from _stripped(text, *current)
            current = None
        current = (current[0] if current else start, end)
    if current:
        yield from _stripped(text, *current)


def _stripped(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The span without surrounding whitespace; nothing if it is blank."""
    raw = text[start:end]
    lead = len(raw) - len(raw.lstrip())
    size = len(raw.strip())
    if size:
        yield start + lead, start + lead + size


# --- sections ------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    heading_start: int
    """Start of the heading line (equal to ``body_start`` for headless text)."""
    body_start: int
    body_end: int
    name: str


def sections(text: str) -> list[Section]:
    """The preamble and each ``## `` section, in order.

    The preamble is the text between the ``# `` title line and the first ``## ``
    heading; its name is empty. Heading lines of level 1 and 2 belong to no body;
    deeper headings (``###``) stay inside their section's body, as in the chapter.
    """
    heads: list[tuple[int, int, str]] = []  # (heading line start, body start, name)
    title_seen = False
    for h in MarkdownDoc(text).headings:
        if h.level > 2:
            continue
        # The first level-1 heading is the document title: its section has no name.
        heads.append(
            (h.start, min(h.end + 1, len(text)), h.title if title_seen or h.level == 2 else "")
        )
        title_seen |= h.level == 1
    if not heads or heads[0][0] > 0:
        heads.insert(0, (0, 0, ""))
    ends = [start for start, _, _ in heads[1:]] + [len(text)]
    return [Section(hs, bs, end, name) for (hs, bs, name), end in zip(heads, ends, strict=True)]


def _section_at(parts: list[Section], offset: int) -> str:
    """Name of the section whose heading line starts at or before ``offset``."""
    name = ""
    for sec in parts:
        if sec.heading_start > offset:
            break
        name = sec.name
    return name


def section_of(text: str, offset: int) -> str:
    """Name of the ``## `` section that holds ``offset`` in ``text`` (empty in the preamble)."""
    return _section_at(sections(text), offset)


def _header(title: str, section: str) -> str:
    return f"[{title} > {section}]" if section else f"[{title}]"


def as_strategy(strategy: str | Strategy) -> Strategy:
    """``strategy`` itself, or the one of the six named ``"A"``–``"F"``; ValueError otherwise."""
    if isinstance(strategy, Strategy):
        return strategy
    try:
        return STRATEGIES[strategy]
    except KeyError:
        raise ValueError(
            f"Unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}"
        ) from None
