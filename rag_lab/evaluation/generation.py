"""Queries through retrieve → gate → generate (:func:`run`, one :func:`outcome` per query):
refused or answered, the sources holding the needle, what the ``[n]`` markers name, the
generator's call. Without a generator, the pipeline's citations alone, checked at their
offsets (:func:`quote_audit`, notebook 07); and the arXiv identifiers the generator recalls
without sources (:func:`identifier_probe`, notebook 09). Both notebooks' ledger entries."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from rag_lab import citations
from rag_lab.answers import declines, map_citations
from rag_lab.claims.judge import FixedRecord
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import Entry, count_entry, entry, fixed_entry
from rag_lab.evaluation.render import Table
from rag_lab.models.generator import Generation, Generator
from rag_lab.pipeline import Answer, Refusal, Retriever, answer
from rag_lab.progress import bar
from rag_lab.questions import Negative, Query
from rag_lab.stats import clustered_wilson
from rag_lab.text import longest_common_run, words

COPY_RUN = 20
"""An answer that repeats this many consecutive words of a source is copying it."""


def outcome(result: Answer | Refusal, needle: str | None, generation: Generation | None) -> dict:
    """One query's pass: the result, the answer with its markers resolved, the generator's call,
    the numbers of the sources holding the needle, and a flag per kind of outcome counted."""
    refused = isinstance(result, Refusal)
    sources = () if refused else result.citations
    cited = None if refused else map_citations(result.text or "", sources)
    holding = tuple(c.index for c in sources if needle and needle in c.quote)
    said = cited.cited if cited else ()
    hit = any(c.index in holding for c in said)
    declined = cited is not None and declines(cited.text)
    copied = cited is not None and any(
        len(longest_common_run(words(cited.text), words(c.quote))) >= COPY_RUN for c in sources
    )
    return {
        "result": result,
        "cited": cited,
        "generation": generation,
        "needle_sources": holding,
        "negative": needle is None,
        "refused": refused,
        "passed": not refused,
        "needle_among": bool(holding),
        "needle_absent": not refused and not holding,
        "cites_needle": hit,
        "needle_markers": hit and cited.only_markers,
        "needle_words": hit and not cited.only_markers,
        "needle_not_cited": bool(holding) and not hit,
        "nothing": cited is not None and cited.cites_nothing,
        "invalid": cited is not None and cited.has_invalid,
        "copies": copied,
        "declines": declined,
        "answers": not declined,
        "answers_citing": not declined and bool(said),
        "called": generation is not None,
        "hit_budget": generation is not None and generation.hit_budget,
    }


def run(
    queries: Sequence[Query],
    negatives: Sequence[Negative],
    retriever: Retriever,
    cutoff: float | None,
    generator: Generator | None = None,
) -> pd.DataFrame:
    """One row per query through :func:`rag_lab.pipeline.answer` (:func:`outcome`), answerable
    ones first; ``unit`` is its question (the phrasings succeed or fail together), a negative's
    unit itself. ``generator.calls`` grows by one per answer, generated or cached."""
    items = [(q.id, q.text, q.needle, q.question.id) for q in queries]
    items += [(n.id, n.query, None, n.id) for n in negatives]
    calls = generator.calls if generator is not None else []
    rows = []
    with bar(len(items), "answering", "question") as b:
        for id_, text, needle, unit in items:
            before = len(calls)
            result = answer(text, retriever, cutoff, generate=generator)
            generation = calls[-1] if len(calls) > before else None
            row = {"id": id_, "question": text, "unit": unit}
            rows.append(row | outcome(result, needle, generation))
            b.update(note=f"{sum(not g.cached for g in calls)} generated")
    return pd.DataFrame(rows)


def parts(outcomes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The answerable queries, the negatives, and the negatives the gate let through."""
    negatives = outcomes[outcomes.negative]
    return outcomes[~outcomes.negative], negatives, negatives[negatives.passed]


def rate_table(outcomes: pd.DataFrame, flags: Sequence[str]) -> Table:
    """Per flag of :func:`outcome`: the queries flagged, of how many, and the rate with its
    95 % interval, the questions as the sample (:func:`rag_lab.stats.clustered_wilson`)."""
    frame = pd.DataFrame(
        [[outcomes[f].sum(), len(outcomes), outcomes[f].mean()] for f in flags],
        columns=["queries", "of", "rate"],
        index=pd.Index(flags, name="outcome"),
    )
    frame[["low", "high"]] = [clustered_wilson(outcomes[f], outcomes.unit) for f in flags]
    return Table(frame)


def calls_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The generator's calls, counted from its own record, by kind of query and gate."""
    return outcomes.groupby(["negative", "refused"]).called.agg(queries="size", calls="sum")


# --- the quotes, checked at their offsets (notebook 07) ---------------------------------------


def quote_audit(outcomes: pd.DataFrame, texts: Mapping[str, str]) -> pd.Series:
    """The answerable queries of :func:`run`, and every citation of those answered compared
    with its document sliced at its offsets: the counts."""
    answerable = parts(outcomes)[0]
    cited = [c for r in answerable.result[answerable.passed] for c in r.citations]
    exact = sum(citations.quote_matches(c, texts[c.document_id]) for c in cited)
    counts = {
        "queries": len(answerable),
        "answered": answerable.passed.sum(),
        "refused": answerable.refused.sum(),
        "citations": len(cited),
        "exact quotes": exact,
        "quotes that differ": len(cited) - exact,
    }
    return pd.Series(counts, name="count")


def refusals(outcomes: pd.DataFrame) -> list[Refusal]:
    """The negatives of :func:`run` the gate refused, farthest from the corpus first."""
    negatives = parts(outcomes)[1]
    return sorted(negatives.result[negatives.refused], key=lambda r: -r.nearest)


def citation_entries(
    audit: pd.Series, refused: int, negatives: int, prompt_tokens: int
) -> list[Entry]:
    """The chapter's citation claims (notebook 07): the quote audit, the negatives refused
    before any prompt, and one prompt's size in the generator's tokens."""
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
            holds=refused > 0,
            reason="the pipeline returns a refusal before it builds a prompt (notebook 09 "
            "counts a real generator's calls)",
            here=f"{refused} of {negatives}",
        ),
        fixed_entry(
            "prompt-size",
            **at,
            verdict=Verdict.NOT_TESTABLE,
            reason="another corpus, question, generator and tokenizer: a size, not a claim",
            here=f"{prompt_tokens} tokens",
        ),
    ]


# --- the identifier probe (notebook 09) ---------------------------------------------------------

ARXIV = {
    "SimCSE, simple contrastive learning of sentence embeddings": "2104.08821",
    "Sentence-BERT (SBERT), sentence embeddings from siamese BERT networks": "1908.10084",
    "contrastive predictive coding and the InfoNCE loss": "1807.03748",
    "SimCLR, a simple framework for contrastive learning of visual representations": "2002.05709",
    "dense passage retrieval (DPR) for open-domain question answering": "2004.04906",
    "MoCo, momentum contrast for unsupervised visual representation learning": "1911.05722",
    "Contriever, unsupervised dense information retrieval with contrastive learning": "2112.09118",
    "E5, text embeddings by weakly-supervised contrastive pre-training": "2212.03533",
}
"""Each paper's arXiv identifier (its first version), to check a recalled one offline."""
PROBE_PROMPT = (
    "What is the arXiv identifier of the paper that introduced {}? Answer with the identifier only."
)
ARXIV_ID = re.compile(r"(?<![\d.])(\d{4})\.(\d{4,5})(?:v\d+)?(?!\d)")
"""A well-formed new-style arXiv identifier, ``YYMM.NNNNN`` with an optional version."""


def plausible_arxiv_id(identifier: str) -> bool:
    """True when ``YYMM.N…`` could exist: month 01–12, from 0704 (when the scheme began),
    four digits after the dot up to 1412 and five from 1501 on.

    >>> [plausible_arxiv_id(i) for i in ("1908.10084", "1909.1234", "1913.00001", "")]
    [True, False, False, False]
    """
    match = ARXIV_ID.fullmatch(identifier)
    if not match:
        return False
    yymm, number = match.groups()
    digits = 4 if yymm <= "1412" else 5
    return 1 <= int(yymm[2:]) <= 12 and yymm >= "0704" and len(number) == digits


def identifier_probe(generate: Callable[[str], str]) -> pd.DataFrame:
    """Ask, without sources, for each paper's arXiv identifier: the answer (its whitespace
    made single spaces), the first well-formed identifier in it ("" if none), whether it is
    plausible and whether it is the paper's."""
    rows = []
    for paper, real in ARXIV.items():
        text = " ".join(generate(PROBE_PROMPT.format(paper)).split())
        found = match.group(0) if (match := ARXIV_ID.search(text)) else ""
        rows.append((paper, text, found, plausible_arxiv_id(found), found.split("v")[0] == real))
    return pd.DataFrame(rows, columns=["paper", "answer", "identifier", "plausible", "correct"])


def entries(outcomes: pd.DataFrame, probe: pd.DataFrame) -> list[Entry]:
    """The chapter's generation claims (notebook 09), on :func:`run` with a generator and on
    :func:`identifier_probe`."""
    at = {"notebook": "09", "benchmark": "d2l"}
    answerable, _, slipped = parts(outcomes)
    refused = outcomes[outcomes.refused]
    calls = int(refused.called.sum())
    hits = answerable.cites_needle
    n, found = len(probe), int((probe.identifier != "").sum())
    right = probe.identifier[probe.correct]
    among = answerable[answerable.needle_among]
    unused, answered = int(among.needle_not_cited.sum()), int(slipped.answers.sum())
    named = f" ({', '.join(right)})" if len(right) else ""
    counts = {
        "needle-in-prompt-unused": (unused > 0, f"{unused} of {len(among)} not cited"),
        "threshold-over-instruction": (answered > 0, f"{answered} of {len(slipped)} answered"),
        "ids-well-formed": (found == n, f"{found} of {n}"),
        "ids-wrong": (right.empty, f"{len(right)} of {n} right{named}"),
    }
    return [
        fixed_entry(
            "no-call-on-refusal",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=calls == 0,
            reason="the pipeline returns a refusal before it builds a prompt; counted on a "
            "real generator",
            here=f"{calls} calls for {len(refused)} refusals",
        ),
        entry(
            "cites-by-number",
            **at,
            record=FixedRecord(Verdict.NOT_TESTABLE, "the chapter gives no rate to compare with"),
            here=f"{hits.sum()} of {len(hits)}",
            estimate=hits.sum() / len(hits),
            ci=clustered_wilson(hits, answerable.unit),
            method="clustered_wilson",
        ),
        *[count_entry(c, **at, holds=ok, here=x) for c, (ok, x) in counts.items()],
        fixed_entry(
            "ids-real",
            **at,
            verdict=Verdict.NOT_TESTABLE,
            reason="whether an identifier exists needs arXiv itself, which this machine cannot "
            "reach",
            here=f"{probe.plausible.sum()} of {n} plausible by arXiv's numbering",
        ),
    ]
