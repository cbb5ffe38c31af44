"""The book's numbering of sections, figures, tables and equations, read from its sources.

The rendered book prints ``:numref:`` and ``:eqref:`` targets with numbers:
``Section 2.3``, ``Section 3.2.4``, ``Fig. 3.1.2``, ``Table 15.5.1`` or
``(3.1.5)``. Chapters are numbered by the ``:numbered:`` toc of the root
``index.md``, sections by each chapter's toc; within a section file, ``##``
and deeper headings extend the section number, while captioned images,
``:eqlabel:`` equations and ``tab_`` tables are counted per file.
"""

from __future__ import annotations

import re
from pathlib import Path

from rag_lab.sources.d2l.extract.fences import Fence, Text, split_fences

_HEADING = re.compile(r"^(#+)\s+\S")
_LABEL = re.compile(r"^\s*:label:`([^`]+)`\s*$")
_EQLABEL = re.compile(r":eqlabel:`([^`]+)`")
_CAPTIONED_IMAGE = re.compile(r"^!\[[^\]]")
_IMAGE_ATTRIBUTE = re.compile(r"^\s*:(width|height):`[^`]*`\s*$")


def book_numbering(root: Path) -> dict[str, str]:
    """Map every label of the book under ``root`` to its rendered reference text."""
    references: dict[str, str] = {}
    for path, number in _numbered_files(root):
        references.update(_file_references(path.read_text(encoding="utf-8"), number))
    return references


def _numbered_files(root: Path) -> list[tuple[Path, tuple[int, ...]]]:
    """The files of the numbered toc, chapter index pages first, with their numbers."""
    numbered: list[tuple[Path, tuple[int, ...]]] = []
    chapters = _toc_entries(root / "index.md", numbered_only=True)
    for chapter_number, chapter in enumerate(chapters, start=1):
        numbered.append((chapter, (chapter_number,)))
        for section_number, section in enumerate(_toc_entries(chapter), start=1):
            numbered.append((section, (chapter_number, section_number)))
    return numbered


def _toc_entries(index: Path, numbered_only: bool = False) -> list[Path]:
    """The documents listed by the ```` ```toc ```` blocks of ``index``.

    An entry names a document without its suffix (a stray ``.md`` is accepted,
    as Sphinx does); with ``numbered_only`` only blocks marked ``:numbered:``
    count, which leaves out the root page's preface and references.
    """
    entries: list[Path] = []
    for segment in split_fences(index.read_text(encoding="utf-8")):
        if not isinstance(segment, Fence) or segment.info != "toc":
            continue
        options = [line.strip() for line in segment.body if line.strip().startswith(":")]
        if numbered_only and ":numbered:" not in options:
            continue
        for line in segment.body:
            name = line.strip()
            if name and not name.startswith(":"):
                entries.append(index.parent / (name.removesuffix(".md") + ".md"))
    return entries


def _file_references(source: str, number: tuple[int, ...]) -> dict[str, str]:
    """The labels defined in one file numbered ``number`` and their reference text.

    A ``:label:`` names the heading or captioned image above it, with only
    blank lines or image size attributes between them; a ``tab_`` label names
    a table.
    """
    references: dict[str, str] = {}
    prefix = ".".join(map(str, number))
    headings: list[int] = []
    figures = equations = tables = 0
    target: str | None = None  # what a :label: on the next line would name
    in_caption = False  # inside an image caption that spans several lines
    for segment in split_fences(source):
        if not isinstance(segment, Text):
            target = None
            continue
        for line in segment.lines:
            if in_caption:
                in_caption = "](" not in line
                continue
            label = _LABEL.match(line)
            if label and label.group(1).startswith("tab_"):
                tables += 1
                references[label.group(1)] = f"Table {prefix}.{tables}"
            elif label and target is not None:
                references[label.group(1)] = target
            elif heading := _HEADING.match(line):
                depth = len(heading.group(1)) - 1
                headings = headings[:depth] + [0] * max(0, depth - len(headings))
                if depth:
                    headings[-1] += 1
                target = "Section " + ".".join(map(str, (*number, *headings)))
                continue
            elif _CAPTIONED_IMAGE.match(line):
                figures += 1
                target = f"Fig. {prefix}.{figures}"
                in_caption = "](" not in line
                continue
            for equation in _EQLABEL.finditer(line):
                equations += 1
                references[equation.group(1)] = f"({prefix}.{equations})"
            if line.strip() and not _IMAGE_ATTRIBUTE.match(line):
                target = None
    return references
