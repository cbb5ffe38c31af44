"""Notebook 07: a question through the pipeline, and every quote checked at its offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab import citations
from rag_lab.evaluation import chapter
from rag_lab.evaluation.ledger import Entry, construction_entry, fixed_entry
from rag_lab.evaluation.verdicts import Verdict
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
    """The negatives refused at ``cutoff``, farthest from the corpus first, and how many were
    asked."""
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
    """What the findings rest on, one bullet per claim: the counts behind each, worded by
    the ledger's verdict (:func:`entries`), never by a rule of its own."""
    verdict = {e.claim: e.verdict.label for e in entries(audit, refusals, negatives, prompt_tokens)}
    good = audit.citations - len(audit.mismatched)
    ratio = prompt_tokens / chapter.PROMPT_TOKENS
    return "\n".join(
        [
            f"- **Locators from offsets** ({verdict['locators-exact']}). {audit.citations} "
            f"citations over the {audit.answered} of {audit.queries} queries that passed the "
            f"cutoff; {good} quotes are exactly the document sliced at their `#char` range and "
            f"{len(audit.mismatched)} are not. The locator is made from the chunk's recorded "
            "offsets, so a mismatch would mean the offsets themselves are wrong.",
            f"- **No model call without a source** ({verdict['refusal-no-call']}). {refusals} "
            f"of {negatives} negatives and {audit.refused} of {audit.queries} answerable "
            "queries stop at the gate: the pipeline returns the refusal before it builds a "
            f"prompt. The other {negatives - refusals} negatives do reach a prompt; what a model "
            "writes for them is notebook 09's.",
            f"- **Prompt size** ({verdict['prompt-size']}). The example's prompt is "
            f"{prompt_tokens:,} tokens for this generator, {ratio:.2f} times the chapter's "
            f"{chapter.PROMPT_TOKENS} for its first question: another corpus, question, "
            "generator and tokenizer, so a size to know, not a claim to test.",
        ]
    )


# --- how the notebook shows them ------------------------------------------------------------


def prompt_view(prompt: str) -> Verbatim:
    """The prompt exactly as the generator receives it, wrapped for the page only."""
    lines = prompt.split("\n")
    return Verbatim(
        prompt,
        caption=f"{len(prompt):,} characters, {len(lines)} lines, the longest "
        f"{max(map(len, lines))}; wrapped for the page (↪), the text unchanged",
    )


def prompt_size(prompt: str, generator_tokens: int, word_pieces: int) -> Table:
    """The prompt's size in the units that matter: characters, the generator's tokens (what
    its context window counts), MiniLM's word-pieces; the chapter's count beside them."""
    frame = pd.DataFrame(
        {
            "here": [f"{len(prompt):,}", f"{generator_tokens:,}", f"{word_pieces:,}"],
            "chapter": ["–", str(chapter.PROMPT_TOKENS), "–"],
        },
        index=pd.Index(
            ["characters", "generator tokens (Qwen2.5 + chat template)", "MiniLM word-pieces"],
            name="the prompt in",
        ),
    )
    return Table(frame, caption="The example's prompt; no generator runs in this notebook")


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
