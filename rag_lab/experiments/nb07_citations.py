"""Notebook 07: a question through the pipeline, and every quote checked at its offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab import citations
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter
from rag_lab.evaluation.ledger import Entry, fixed_entry
from rag_lab.experiments.present import Table, Verbatim
from rag_lab.pipeline import Answer, Refusal, Retriever, answer
from rag_lab.questions import Negative, Query

HEADLINE = ("locators-exact", "refusal-no-call", "prompt-size")
LOCATOR_EXAMPLES = (
    citations.CharRange(25873, 26272),
    citations.Page(12),
    citations.TimeRange(132.4, 158.9),
    citations.CellRange("Q3 budget", "B2", "D9"),
)
"""One locator of each kind the server can build, to show their fragments."""


@dataclass(frozen=True)
class QuoteAudit:
    """Every citation of every answered query, checked against its document at its offsets."""

    queries: int
    answered: int
    citations: int
    mismatched: list[citations.Citation]


def quote_audit(
    queries: Sequence[Query], retriever: Retriever, cutoff: float, texts: Mapping[str, str]
) -> QuoteAudit:
    results = [answer(q.text, retriever, cutoff) for q in queries]
    cited = [c for r in results if isinstance(r, Answer) for c in r.citations]
    bad = [c for c in cited if not citations.quote_matches(c, texts[c.document_id])]
    answered = sum(isinstance(r, Answer) for r in results)
    return QuoteAudit(len(queries), answered, len(cited), bad)


def negative_refusals(
    negatives: Sequence[Negative], retriever: Retriever, cutoff: float
) -> tuple[list[Refusal], int]:
    """The negatives refused at ``cutoff``, farthest from the corpus first, and how many
    were asked."""
    outcomes = [answer(n.query, retriever, cutoff) for n in negatives]
    refusals = [r for r in outcomes if isinstance(r, Refusal)]
    return sorted(refusals, key=lambda r: -(r.nearest or 0.0)), len(outcomes)


def entries(audit: QuoteAudit, refusals: int, negatives: int, prompt_tokens: int) -> list[Entry]:
    """The chapter's citation claims: this notebook's part of the ledger."""
    at = {"notebook": "07", "benchmark": "d2l"}
    exact = audit.citations - len(audit.mismatched)
    return [
        fixed_entry(
            "locators-exact",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=not audit.mismatched,
            reason="each citation's locator is made from the chunk's recorded offsets; "
            "checked: every quote is its document sliced there",
            here=f"{exact} of {audit.citations} exact",
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


# --- how the notebook shows them ------------------------------------------------------------


def prompt_view(prompt: str) -> Verbatim:
    """The prompt exactly as the generator receives it, wrapped for the page only."""
    return Verbatim(prompt, caption="Wrapped for the page (↪), the text unchanged")


def prompt_size(prompt: str, generator_tokens: int, word_pieces: int) -> Table:
    """The prompt's size in the units that matter, the chapter's token count beside ours."""
    lines = prompt.split("\n")
    tokens = "generator tokens (Qwen2.5 + chat template)"
    here = {
        "characters": len(prompt),
        "lines": len(lines),
        "characters in the longest line": max(map(len, lines)),
        tokens: generator_tokens,
        "MiniLM word-pieces": word_pieces,
    }
    frame = pd.DataFrame({"here": [f"{n:,}" for n in here.values()], "chapter": "–"}, index=here)
    frame.loc[tokens, "chapter"] = str(chapter.PROMPT_TOKENS)
    caption = "The example's prompt; no generator runs in this notebook"
    return Table(frame.rename_axis("the prompt in"), caption=caption)


def sources_table(result: Answer | Refusal, query: Query) -> Table:
    """One question's sources (chunks within the cutoff), and which hold its needle whole."""
    cited = [] if isinstance(result, Refusal) else result.citations
    holding = ", ".join(f"[{c.index}]" for c in cited if query.needle in c.quote)
    frame = pd.DataFrame(
        [[len(cited), holding or "none"]],
        columns=["sources within the cutoff", "sources holding the needle"],
        index=pd.Index([query.id], name="query"),
    )
    caption = "The question's sources: chunks under the cutoff, nearest first"
    return Table(frame, caption=caption)


def audit_table(audit: QuoteAudit) -> Table:
    rows = {
        "queries": audit.queries,
        "answered (a source within the cutoff)": audit.answered,
        "refused at the cutoff": audit.queries - audit.answered,
        "citations": audit.citations,
        "quotes equal to the document at their #char range": audit.citations
        - len(audit.mismatched),
        "quotes that differ": len(audit.mismatched),
    }
    frame = pd.Series(rows, name="count").rename_axis("").to_frame()
    return Table(frame, caption="Every answerable query, every citation checked at its offsets")


def citation_tables(cited: Sequence[citations.Citation]) -> tuple[Table, Table]:
    """The server's table beside ``[n]``, in two: where each source is, and what it quotes."""
    rows = pd.DataFrame(citations.citation_table(cited, width=10**9)).set_index("[n]")
    where = Table(
        rows[["document", "section", "locator", "distance"]],
        caption="What the server keeps for each [n]; distance: cosine distance to the question",
    )
    quotes = rows[["quote"]].assign(characters=rows["quote"].str.len())
    caption = "What each [n] quotes: the chunk's content, without its header"
    return where, Table(quotes, caption=caption, shorten={"quote": 80})


def refusal_table(refusals: Sequence[Refusal], n: int = 3) -> Table:
    """The first ``n`` refusals: the query and its nearest chunk's cosine distance."""
    shown = refusals[:n]
    frame = pd.DataFrame(
        [[r.question, r.nearest] for r in shown],
        columns=["negative query", "nearest chunk (cosine distance)"],
    )
    cutoff = shown[0].cutoff if shown else "–"
    caption = f"The {len(shown)} negatives farthest from the corpus, refused at cutoff {cutoff}"
    return Table(frame, caption=caption, shorten={"negative query": 72})
