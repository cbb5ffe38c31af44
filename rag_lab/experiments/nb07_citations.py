"""Notebook 07: a question through the pipeline, and every quote checked at its offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_lab import citations
from rag_lab.evaluation import chapter
from rag_lab.evaluation.verdicts import Claim, Verdict, claims_markdown
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


def reading(audit: QuoteAudit, refusals: int, negatives: int, prompt_tokens: int) -> str:
    """The chapter's citation claims, judged on this run's counts."""
    exact = not audit.mismatched
    same_order = 0.1 < prompt_tokens / chapter.PROMPT_TOKENS < 10
    claims = claims_markdown(
        [
            Claim(
                "the server builds every locator from exact offsets",
                "every quote exact",
                f"{audit.citations - len(audit.mismatched)} of {audit.citations} exact",
                Verdict.REPRODUCES if exact else Verdict.NOT_REPRODUCED,
            ),
            Claim(
                "a refusal never reaches the model",
                "–",
                f"{refusals} of {negatives} negatives refused before any call",
                Verdict.NOT_MEASURED,
                wording="by construction (the pipeline returns first); calls counted in 09",
            ),
            Claim(
                "the first question's prompt size",
                f"{chapter.PROMPT_TOKENS} tokens",
                f"{prompt_tokens} tokens",
                Verdict.FIGURE,
                wording=f"measured: {'same' if same_order else 'another'} order",
            ),
        ]
    )
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
