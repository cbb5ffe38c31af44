"""Code-block rules: keep the PyTorch version of each d2l code cell, as d2lbook renders it."""

from __future__ import annotations

import re

from rag_lab.sources.d2l.extract.fences import Fence

FRAMEWORK = "pytorch"
"""The tab kept from every multi-framework block."""

_DROPPED_FENCES = frozenset({"toc", "eval_rst"})
_TAB_MARKER = re.compile(r"^\s*(?:%%tab|#\s*@tab)\s+([\w, ]+?)\s*$")
_SETUP = "%load_ext d2lbook.tab"
_SELECTED = "tab.selected"
_SAVE_MARK = re.compile(r"\s*#@save\s*$")


def clean_code_block(fence: Fence) -> Fence | None:
    """The block as the corpus keeps it, or None when it is dropped.

    ``toc`` and ``eval_rst`` blocks are dropped; Python input cells keep only
    the PyTorch tab and are re-fenced as ```` ```python ````; any other fence
    (``bash``, ``text``) is kept unchanged.
    """
    if fence.info in _DROPPED_FENCES:
        return None
    if not fence.info.startswith("{.python .input"):
        return fence
    lines = list(fence.body)
    if not tab_selected(_cell_tabs(lines)) or any(_SETUP in line for line in lines):
        return None
    lines = [line for line in lines if not _TAB_MARKER.match(line)]
    lines = resolve_tab_branches(lines)
    lines = [_SAVE_MARK.sub("", line) for line in lines if not line.startswith("%")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return Fence("```python", tuple(lines)) if lines else None


def tab_selected(tabs: list[str]) -> bool:
    """Whether a cell or text block marked for ``tabs`` belongs to the PyTorch rendering."""
    return FRAMEWORK in tabs or "all" in tabs


def resolve_tab_branches(lines: list[str]) -> list[str]:
    """Replace ``if tab.selected(...):`` branches by the body that PyTorch runs.

    A branch naming ``'pytorch'`` keeps its body, dedented by one level (4
    spaces); any other branch is dropped. A branch ends at the first non-blank
    line indented no deeper than its ``if``. This is d2lbook's
    ``_clean_if_branches``, so ``else`` after such an ``if`` is not special.
    """
    kept: list[str] = []
    branch: bool | None = None  # None: outside any branch; else: whether it is kept
    indent = 0
    for line in lines:
        depth = len(line) - len(line.lstrip())
        if "if" in line and _SELECTED in line:
            branch = f"'{FRAMEWORK}'" in line or f'"{FRAMEWORK}"' in line
            indent = depth
            continue
        if branch is not None and line.strip() and depth <= indent:
            branch = None
        if branch is None:
            kept.append(line)
        elif branch:
            kept.append(line[4:])
    return kept


def _cell_tabs(lines: list[str]) -> list[str]:
    """The tabs named by the cell's ``%%tab``/``#@tab`` marker; unmarked cells are PyTorch's.

    d2l's ``config.ini`` lists ``tabs = pytorch, ...``, and d2lbook gives an
    unmarked cell to the first (default) tab.
    """
    for line in lines:
        marker = _TAB_MARKER.match(line)
        if marker:
            return [tab.strip() for tab in marker.group(1).split(",")]
    return [FRAMEWORK]
