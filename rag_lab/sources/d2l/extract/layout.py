"""Line layout of a rendered document: hard-wrapped prose joined, whitespace normalised."""

from __future__ import annotations

import re

# A line starting like this opens a block of its own and is never joined to the line above.
_BLOCK_START = re.compile(r"(#|[*+-] |\d+\. |\||>|\$\$|```|<)")
# A line starting like this cannot be continued by the line below.
_NOT_PROSE = re.compile(r"(#|\||<)")


def unwrap(text: str) -> str:
    """Join hard-wrapped prose lines into one line per paragraph or list item.

    A non-blank line is appended, after one space, to the line above when that
    line is prose or a list item (not a heading, table row or HTML) and the
    line itself does not start a block (heading, list item, table row, quote,
    ``$$``, fence or HTML). Fenced code and ``$$ ... $$`` display math are
    copied unchanged, and neither is ever continued.
    """
    lines: list[str] = []
    continuable = False  # whether the last line in ``lines`` may take the next one
    in_fence = in_math = False
    for line in text.split("\n"):
        stripped = line.strip()
        if in_fence or in_math:
            lines.append(line)
            if in_fence:
                in_fence = not stripped.startswith("```")
            else:
                in_math = not stripped.endswith("$$")
            continue
        if stripped.startswith("```"):
            in_fence, continuable = True, False
            lines.append(line)
        elif stripped.startswith("$$"):
            in_math = stripped == "$$" or not stripped.endswith("$$")
            continuable = False
            lines.append(line)
        elif stripped and continuable and not _BLOCK_START.match(stripped):
            lines[-1] = lines[-1].rstrip() + " " + stripped
        else:
            continuable = bool(stripped) and not _NOT_PROSE.match(stripped)
            lines.append(line)
    return "\n".join(lines)


def normalise_whitespace(text: str) -> str:
    """Strip trailing spaces, keep at most one blank line in a row, start at the ``# `` title.

    The result ends with exactly one newline.
    """
    lines = [line.rstrip() for line in text.split("\n")]
    text = "\n".join(lines[_title_index(lines) :])
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def _title_index(lines: list[str]) -> int:
    """The index of the first ``# `` heading outside fences (a code comment is no title), or 0."""
    in_fence = False
    for index, line in enumerate(lines):
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("# "):
            return index
    return 0
