"""Notebook 09: the answers of :func:`rag_lab.evaluation.generation.run`, as a reader sees them."""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd

from rag_lab.answers import render

HEADLINE = ("no-call-on-refusal", "cites-by-number", "ids-well-formed", "ids-wrong")


def examples(outcomes: pd.DataFrame, flag: str, n: int = 3) -> str:
    """Markdown: the first ``n`` outcomes flagged ``flag``, as a reader sees each answer."""
    blocks = []
    for o in outcomes[outcomes[flag]].head(n).itertuples():
        cited = o.cited
        if cited and len(re.findall(r"^\s*```", cited.text, re.MULTILINE)) % 2:
            # cut by the token budget inside a code block, which would swallow the sources
            cited = replace(cited, text=cited.text.rstrip() + "\n```")
        shown = render(cited) if cited else str(o.result)
        quoted = "\n".join(f"> {line}" if line else ">" for line in shown.splitlines())
        blocks.append(f"**{o.id}** — {o.question}\n\n{quoted}")
    return "\n\n---\n\n".join(blocks) or "*None occurred.*"
