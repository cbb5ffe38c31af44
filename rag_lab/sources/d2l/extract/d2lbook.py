"""Markdown rules: framework text tabs, slide marks, d2lbook roles and directives, figures."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial

from rag_lab.sources.d2l.extract.code_blocks import tab_selected
from rag_lab.sources.d2l.extract.fences import Fence, Segment, Text

_BEGIN_TAB = re.compile(r"^:begin_tab:`([^`]*)`\s*$")
_END_TAB = re.compile(r"^:end_tab:\s*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# Slide marks, each with whether its text also shows in the book (** marks) or only on slides (~~).
_SLIDE_MARKS = (
    (re.compile(r"\[\*\*(.*?)\*\*\]", re.DOTALL), True),
    (re.compile(r"\(\*\*(.*?)\*\*\)", re.DOTALL), True),
    (re.compile(r"\[~~(.*?)~~\]", re.DOTALL), False),
    (re.compile(r"\(~~(.*?)~~\)", re.DOTALL), False),
)
_REFERENCE = re.compile(r":(?:numref|eqref|ref):`+([^`]+)`+")
_DIRECTIVE_LINE = re.compile(
    r"^[ \t]*:(?:label|eqlabel|width|height):`[^`\n]*`[ \t]*(?:\n|$)", re.M
)
_IMAGE_LINE = re.compile(r"^!\[[^\]]*\]\([^)\n]*\)[ \t]*(?:\n|$)", re.M)
_TABLE_CAPTION = re.compile(r"^:(?![\w-]+:`)[ \t]*(\S.*)$", re.M)  # not a role like :label:`x`
_DISCUSSIONS_LINE = re.compile(
    r"^\[Discussions\]\(https://discuss\.d2l\.ai/[^)]*\)[ \t]*(?:\n|$)", re.M
)


def select_text_tabs(segments: list[Segment]) -> list[Segment]:
    """Resolve ``:begin_tab:`X``` ... ``:end_tab:`` blocks for the PyTorch rendering.

    The inner lines stay when X names ``pytorch`` or ``all``; otherwise the
    whole block goes, fences inside it included. The marker lines always go.
    """
    selected: list[Segment] = []
    keep = True  # False while inside a tab block of another framework
    for segment in segments:
        if isinstance(segment, Fence):
            if keep:
                selected.append(segment)
            continue
        lines: list[str] = []
        for line in segment.lines:
            begin = _BEGIN_TAB.match(line)
            if begin:
                keep = tab_selected([tab.strip() for tab in begin.group(1).split(",")])
            elif _END_TAB.match(line):
                keep = True
            elif keep:
                lines.append(line)
        selected.append(Text(tuple(lines)))
    return selected


def strip_html_comments(text: str) -> str:
    """Remove ``<!-- ... -->`` comments, which may span lines."""
    return _HTML_COMMENT.sub("", text)


def remove_slide_marks(text: str) -> str:
    """Unwrap ``[**...**]``/``(**...**)`` and delete ``[~~...~~]``/``(~~...~~)``.

    As in d2lbook's ``remove_slide_marks``, ``[**...**](url)`` is a bold link,
    not a slide mark, and stays as it is.
    """
    for mark, shown in _SLIDE_MARKS:
        text = mark.sub(partial(_unmark, shown=shown), text)
    return text


def _unmark(mark: re.Match[str], shown: bool) -> str:
    """The replacement of one slide mark: its text, nothing, or the mark itself for a link."""
    if mark.group().endswith("]") and mark.string.startswith("(", mark.end()):
        return mark.group()
    return mark.group(1) if shown else ""


def resolve_references(text: str, numbering: Mapping[str, str]) -> str:
    """Replace ``:numref:``, ``:eqref:`` and ``:ref:`` roles by the book's numbered text.

    An unknown label is left as its bare name.
    """
    return _REFERENCE.sub(lambda role: numbering.get(role.group(1), role.group(1)), text)


def drop_directive_lines(text: str) -> str:
    """Drop lines holding only ``:label:``, ``:eqlabel:``, ``:width:`` or ``:height:``."""
    return _DIRECTIVE_LINE.sub("", text)


def drop_images(text: str) -> str:
    """Drop image-only lines ``![caption](path)``, including captions over several lines."""
    return _IMAGE_LINE.sub("", text)


def unmark_table_captions(text: str) -> str:
    """Turn a table caption line ``:Caption text`` into ``Caption text``."""
    return _TABLE_CAPTION.sub(r"\1", text)


def drop_discussion_links(text: str) -> str:
    """Drop the ``[Discussions](https://discuss.d2l.ai/...)`` forum links."""
    return _DISCUSSIONS_LINE.sub("", text)
