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
"""The claims this notebook opens with: every one it has, each true by construction or a
size, each checked on this run."""

LOCATOR_EXAMPLES = (
    citations.CharRange(25873, 26272),
    citations.Page(12),
    citations.TimeRange(132.4, 158.9),
    citations.CellRange("Q3 budget", "B2", "D9"),
)
"""One locator of each kind the server can build, to show their fragments."""


def needle_sources(result: Answer | Refusal, query: Query) -> list[int]:
    """The numbers of the sources whose quote holds the query's needle whole."""
    if isinstance(result, Refusal):
        return []
    return [c.index for c in result.citations if query.needle in c.quote]


@dataclass(frozen=True)
class QuoteAudit:
    """Every citation of every answered query, checked against its document at its offsets."""

    queries: int
    answered: int
    citations: int
    mismatched: list[citations.Citation]

    @property
    def refused(self) -> int:
        return self.queries - self.answered


def quote_audit(
    queries: Sequence[Query],
    retriever: Retriever,
    cutoff: float,
    texts: Mapping[str, str],
) -> QuoteAudit:
    """Run every query through :func:`rag_lab.pipeline.answer` and check each quote."""
    results = [answer(q.text, retriever, cutoff) for q in queries]
    cited = [c for r in results if isinstance(r, Answer) for c in r.citations]
    bad = [c for c in cited if not citations.quote_matches(c, texts[c.document_id])]
    answered = sum(isinstance(r, Answer) for r in results)
    return QuoteAudit(len(queries), answered, len(cited), bad)


def negative_refusals(
    negatives: Sequence[Negative], retriever: Retriever, cutoff: float
) -> tuple[list[Refusal], int]:
    """The negatives refused at ``cutoff``, farthest from the corpus first, and how many were
    asked."""
    outcomes = [answer(n.query, retriever, cutoff) for n in negatives]
    refusals = [r for r in outcomes if isinstance(r, Refusal)]
    return sorted(refusals, key=lambda r: -(r.nearest or 0.0)), len(outcomes)


def entries(audit: QuoteAudit, refusals: int, negatives: int, prompt_tokens: int) -> list[Entry]:
    """The chapter's citation claims: this notebook's part of the ledger."""
    at = {"notebook": "07", "benchmark": "d2l"}
    return [
        fixed_entry(
            "locators-exact",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=not audit.mismatched,
            reason="each citation's locator is made from the chunk's recorded offsets; "
            "checked: every quote is its document sliced there",
            here=f"{audit.citations - len(audit.mismatched)} of {audit.citations} exact",
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
    """The prompt exactly as the generator receives it, wrapped for the page only; its size
    is :func:`prompt_size`'s."""
    return Verbatim(prompt, caption="Wrapped for the page (↪), the text unchanged")


def prompt_size(prompt: str, generator_tokens: int, word_pieces: int) -> Table:
    """The prompt's size in the units that matter: characters and lines (the longest line
    is why the page wraps it), the generator's tokens (what its context window counts),
    MiniLM's word-pieces; the chapter's count beside them."""
    lines = prompt.split("\n")
    here = [len(prompt), len(lines), max(map(len, lines)), generator_tokens, word_pieces]
    frame = pd.DataFrame(
        {
            "here": [f"{n:,}" for n in here],
            "chapter": ["–", "–", "–", str(chapter.PROMPT_TOKENS), "–"],
        },
        index=pd.Index(
            [
                "characters",
                "lines",
                "characters in the longest line",
                "generator tokens (Qwen2.5 + chat template)",
                "MiniLM word-pieces",
            ],
            name="the prompt in",
        ),
    )
    return Table(frame, caption="The example's prompt; no generator runs in this notebook")


def sources_table(result: Answer | Refusal, query: Query) -> Table:
    """One question's passage through the gate: how many sources passed the cutoff, and
    which of them hold the needle whole (:func:`needle_sources`)."""
    passed = 0 if isinstance(result, Refusal) else len(result.citations)
    holding = needle_sources(result, query)
    frame = pd.DataFrame(
        {
            "sources within the cutoff": [passed],
            "sources holding the needle": [", ".join(f"[{i}]" for i in holding) or "none"],
        },
        index=pd.Index([query.id], name="query"),
    )
    return Table(frame, caption="The question's sources: chunks under the cutoff, nearest first")


def audit_table(audit: QuoteAudit) -> Table:
    """:class:`QuoteAudit` as counts: the queries, those the gate answered and refused, the
    citations, and how many quotes equal their document sliced at their offsets."""
    rows = {
        "queries": audit.queries,
        "answered (a source within the cutoff)": audit.answered,
        "refused at the cutoff": audit.refused,
        "citations": audit.citations,
        "quotes equal to the document at their #char range": audit.citations
        - len(audit.mismatched),
        "quotes that differ": len(audit.mismatched),
    }
    frame = pd.DataFrame({"count": list(rows.values())}, index=pd.Index(list(rows), name=""))
    return Table(frame, caption="Every answerable query, every citation checked at its offsets")


def citation_tables(cited: Sequence[citations.Citation]) -> tuple[Table, Table]:
    """The server's table beside ``[n]``, in two: where each source is (document, section,
    locator, cosine distance), and what it quotes (whole in HTML, cut in plain text)."""
    rows = pd.DataFrame(citations.citation_table(cited, width=10**9)).set_index("[n]")
    where = Table(
        rows[["document", "section", "locator", "distance"]],
        caption="What the server keeps for each [n]; distance: cosine distance to the question",
    )
    quotes = pd.DataFrame(
        {"quote": rows["quote"], "characters": [len(q) for q in rows["quote"]]}, index=rows.index
    )
    return where, Table(
        quotes,
        caption="What each [n] quotes: the chunk's content, without its header",
        shorten={"quote": 80},
    )


def refusal_table(refusals: Sequence[Refusal], n: int = 3) -> Table:
    """The first ``n`` refusals (farthest from the corpus first): the query and its nearest
    chunk's cosine distance."""
    shown = refusals[:n]
    frame = pd.DataFrame(
        {
            "negative query": [r.question for r in shown],
            "nearest chunk (cosine distance)": [r.nearest for r in shown],
        }
    )
    cutoff = shown[0].cutoff if shown else "–"
    return Table(
        frame,
        caption=f"The {len(shown)} negatives farthest from the corpus, refused at cutoff {cutoff}",
        shorten={"negative query": 72},
    )
