"""Notebook 07: a question through the pipeline, and every quote checked at its offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_lab import citations
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import Entry, fixed_entry
from rag_lab.experiments.present import Table
from rag_lab.pipeline import Answer, Refusal, Retriever, answer
from rag_lab.questions import Negative, Query

HEADLINE = ("locators-exact", "refusal-no-call", "prompt-size")


def quote_audit(
    queries: Sequence[Query], retriever: Retriever, cutoff: float, texts: Mapping[str, str]
) -> pd.Series:
    """Every query through the gate, and every citation of the answered ones compared with
    its document sliced at its offsets: the counts."""
    results = [answer(q.text, retriever, cutoff) for q in queries]
    cited = [c for r in results if isinstance(r, Answer) for c in r.citations]
    exact = sum(citations.quote_matches(c, texts[c.document_id]) for c in cited)
    answered = sum(isinstance(r, Answer) for r in results)
    counts = {
        "queries": len(queries),
        "answered": answered,
        "refused": len(queries) - answered,
        "citations": len(cited),
        "exact quotes": exact,
        "quotes that differ": len(cited) - exact,
    }
    return pd.Series(counts, name="count")


def negative_refusals(
    negatives: Sequence[Negative], retriever: Retriever, cutoff: float
) -> list[Refusal]:
    """The negatives refused at ``cutoff``, farthest from the corpus first."""
    outcomes = [answer(n.query, retriever, cutoff) for n in negatives]
    refusals = [r for r in outcomes if isinstance(r, Refusal)]
    return sorted(refusals, key=lambda r: -r.nearest)


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


def entries(audit: pd.Series, refusals: int, negatives: int, prompt_tokens: int) -> list[Entry]:
    """The chapter's citation claims: this notebook's part of the ledger."""
    at = {"notebook": "07", "benchmark": "d2l"}
    return [
        fixed_entry(
            "locators-exact",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=audit["quotes that differ"] == 0,
            reason="each citation's locator is made from the chunk's recorded offsets; "
            "checked: every quote is its document sliced there",
            here=f"{audit['exact quotes']} of {audit['citations']} exact",
        ),
        fixed_entry(
            "refusal-no-call",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=refusals > 0,
            reason="the pipeline returns a refusal before it builds a prompt (notebook 09 "
            "counts a real generator's calls)",
            here=f"{refusals} of {negatives}",
        ),
        fixed_entry(
            "prompt-size",
            **at,
            verdict=Verdict.NOT_TESTABLE,
            reason="another corpus, question, generator and tokenizer: a size, not a claim",
            here=f"{prompt_tokens} tokens",
        ),
    ]
