"""Notebook 07: one question's prompt and the table only the server keeps; the quote audit and
the claims are :mod:`rag_lab.evaluation.generation`'s."""

from __future__ import annotations

import pandas as pd

from rag_lab import citations
from rag_lab.experiments.present import Table
from rag_lab.pipeline import Answer

HEADLINE = ("locators-exact", "refusal-no-call", "prompt-size")


def prompt_size(prompt: str, generator_tokens: int, word_pieces: int) -> pd.Series:
    """The prompt's size in characters, lines and the two tokenizers' tokens."""
    lines = prompt.split("\n")
    return pd.Series(
        {
            "characters": len(prompt),
            "lines": len(lines),
            "characters in the longest line": max(map(len, lines)),
            "generator tokens (Qwen2.5 chat template)": generator_tokens,
            "MiniLM word-pieces": word_pieces,
        },
        name="the prompt",
    )


def server_table(result: Answer, needle: str = "") -> Table:
    """The table only the server keeps, one row per ``[n]`` the model may write; with a
    ``needle``, whether each source's quote holds it whole."""
    frame = pd.DataFrame(citations.citation_table(result.citations)).set_index("[n]")
    if needle:
        frame["needle"] = [needle in c.quote for c in result.citations]
    return Table(frame.drop(columns="quote"), caption="distance: cosine, to the question")
