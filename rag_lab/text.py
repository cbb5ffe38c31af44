"""Word-level helpers shared by the validators and the failure analysis."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9_]+")


def flat(text: str) -> str:
    """Whitespace normalised: every run of whitespace (newline, form feed, …) one space.

    >>> flat("a\\n  b\\x0c c ")
    'a b c'
    """
    return " ".join(text.split())


def words(text: str) -> list[str]:
    """Lower-cased runs of letters, digits and underscores (identifiers stay whole)."""
    return _WORD.findall(text.lower())


def longest_common_run(a: list[str], b: list[str]) -> list[str]:
    """The longest run of consecutive words that ``a`` and ``b`` share (dynamic programming).

    >>> longest_common_run("the quick brown fox".split(), "a quick brown dog".split())
    ['quick', 'brown']
    """
    best, best_end = 0, 0
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                if cur[j] > best:
                    best, best_end = cur[j], i
        prev = cur
    return a[best_end - best : best_end]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the right number: ``counted(1, "bluff") == "1 bluff"``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def shorten(text: str, width: int) -> str:
    """Whitespace collapsed, then cut to ``width`` characters with ``…`` when longer.

    >>> shorten("a  tensor\\n is an array", 12)
    'a tensor is…'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Invisible characters that reorder what a terminal shows (the "Trojan source" trick)."""


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters written as escapes.

    C0 and C1 controls and DEL become ``\\xNN`` (``\\n``, ``\\t``, ``\\r`` by name;
    ``newlines`` keeps line breaks), so an escape sequence in a file name or a document
    cannot clear the screen or forge a line; a byte that is not UTF-8, which
    :func:`os.fsdecode` keeps as a lone surrogate, becomes the ``\\xNN`` of that byte;
    bidirectional overrides become ``\\uNNNN``. Everything else is kept as it is.

    >>> printable("\\x1b[2Jcaf\\udce9.md")
    '\\\\x1b[2Jcaf\\\\xe9.md'
    """
    if text.isprintable() and not _BIDI.intersection(text):  # the common case, at C speed
        return text
    return "".join(_escaped(c, newlines) for c in text)


def _escaped(c: str, newlines: bool) -> str:
    o = ord(c)
    if c == "\n" and newlines:
        return c
    if c in _NAMED:
        return _NAMED[c]
    if o < 0x20 or 0x7F <= o < 0xA0:
        return f"\\x{o:02x}"
    if 0xDC80 <= o <= 0xDCFF:  # os.fsdecode's surrogate escape of the byte o - 0xDC00
        return f"\\x{o - 0xDC00:02x}"
    if 0xD800 <= o <= 0xDFFF or c in _BIDI:
        return f"\\u{o:04x}"
    return c


_ACTED_ON = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
"""What a terminal acts on rather than shows (line breaks and tabs aside), and lone surrogates."""
_NOT_XML = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff]"
)
"""What XML 1.0 forbids (C0 controls but tab, line feed and carriage return; surrogates;
U+FFFE and U+FFFF), and what :data:`_ACTED_ON` escapes for the terminal that shows it."""


def terminal_safe(text: str) -> str:
    """``text`` with what a terminal would act on written as escapes; line breaks and tabs kept.

    The filter every line the command prints passes through
    (:func:`rag_lab.app.terminal.escaped_streams`): a C0 control as :func:`printable` writes
    it (``\\x1b``, ``\\r``); DEL, a C1 control, a bidirectional override or a lone
    surrogate as ``\\uNNNN``, which is also a valid escape inside a JSON string (``ask
    --json`` writes the text of documents unescaped). Text without them is returned as is.

    >>> terminal_safe("\\x1b]0;owned\\x07 \\x9b2J\\n")
    '\\\\x1b]0;owned\\\\x07 \\\\u009b2J\\n'
    """
    return _ACTED_ON.sub(_escape, text)


def xml_safe(text: str) -> str:
    """``text`` fit for XML 1.0 and for the terminal that shows it: what XML forbids, DEL,
    C1 controls and bidirectional overrides written as :func:`terminal_safe` writes them
    (tab, line feed and carriage return kept: XML allows them).

    >>> xml_safe("a\\x00b\\x1b[2J\\ufffe")
    'a\\\\x00b\\\\x1b[2J\\\\ufffe'
    """
    return _NOT_XML.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    return _escaped(c, False) if ord(c) < 0x20 else f"\\u{ord(c):04x}"
