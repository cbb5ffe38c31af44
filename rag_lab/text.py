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
