"""Notebook 07: a question through the pipeline, and every quote checked at its offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_lab import citations
from rag_lab.evaluation import chapter, ledger
from rag_lab.evaluation.ledger import Entry, construction_entry, fixed_entry
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.pipeline import Answer, Refusal, Retriever, answer
from rag_lab.questions import Negative, Query

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

    def __str__(self) -> str:
        good = self.citations - len(self.mismatched)
        return (
            f"{self.citations} citations over {self.answered} answered queries: {good} quotes "
            f"match the document at their offsets, {len(self.mismatched)} do not"
        )


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
    """The negatives refused at ``cutoff``, nearest-to-passing first, and how many were asked."""
    outcomes = [answer(n.query, retriever, cutoff) for n in negatives]
    refusals = [r for r in outcomes if isinstance(r, Refusal)]
    return sorted(refusals, key=lambda r: -(r.nearest or 0.0)), len(outcomes)


def entries(audit: QuoteAudit, refusals: int, negatives: int, prompt_tokens: int) -> list[Entry]:
    """The chapter's citation claims: this notebook's part of the ledger."""
    at = {"notebook": "07", "benchmark": "d2l"}
    return [
        construction_entry(
            **at,
            holds=not audit.mismatched,
            claim="locators-exact",
            statement="the server builds every locator from exact offsets",
            reason="each citation's locator is made from the chunk's recorded offsets; "
            "checked: every quote is its document sliced there",
            metric="quotes equal to the document at their #char range",
            chapter="every quote exact",
            here=f"{audit.citations - len(audit.mismatched)} of {audit.citations} exact",
        ),
        construction_entry(
            **at,
            holds=refusals > 0,
            claim="refusal-no-call",
            statement="a refusal never reaches the model",
            reason="the pipeline returns a refusal before it builds a prompt (notebook 09 "
            "counts a real generator's calls)",
            metric="negatives refused before any call",
            here=f"{refusals} of {negatives}",
        ),
        fixed_entry(
            **at,
            claim="prompt-size",
            statement="the first question's prompt size",
            verdict=Verdict.NOT_TESTABLE,
            reason="another corpus, question, generator and tokenizer: a size, not a claim",
            metric="prompt tokens",
            chapter=f"{chapter.PROMPT_TOKENS} tokens",
            here=f"{prompt_tokens} tokens",
        ),
    ]


def reading(audit: QuoteAudit, refusals: int, negatives: int, prompt_tokens: int) -> str:
    """The chapter's citation claims, judged on this run's counts."""
    exact = not audit.mismatched
    claims = ledger.markdown(entries(audit, refusals, negatives, prompt_tokens))
    text = "\n".join(
        [
            f"- **Locators from offsets.** {audit.citations} citations over {audit.answered} "
            f"answered queries; {audit.citations - len(audit.mismatched)} quotes are exactly the "
            "document sliced at their `#char` range. The claim that the server can build every "
            "locator from exact offsets "
            + ("**reproduces**." if exact else f"**fails** for {len(audit.mismatched)} quotes."),
            f"- **No model call without a source.** {refusals} of {negatives} negatives and "
            f"{audit.refused} of {audit.queries} answerable queries stop at the gate: the "
            "pipeline returns a refusal before any generator could be called (notebook 09 counts "
            "the calls of a real one).",
            f"- **Prompt size.** The example becomes a {prompt_tokens:,}-token prompt for the "
            f"generator (Qwen2.5's tokenizer and chat template); the chapter's first question "
            f"became a {chapter.PROMPT_TOKENS}-token prompt for its generator. Other questions, "
            "sources and tokenizers: the same order of magnitude, "
            + (
                "a smaller prompt here."
                if prompt_tokens < chapter.PROMPT_TOKENS
                else "a larger prompt here."
            ),
        ]
    )
    return text + "\n\n" + claims
