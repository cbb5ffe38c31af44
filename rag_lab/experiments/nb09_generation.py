"""Notebook 09: every query through retrieve → gate → generate, and what the answers cite."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from rag_lab.answers import CitedAnswer, declines, map_citations, render
from rag_lab.claims.judge import FixedRecord
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import Entry, count_entry, entry, fixed_entry
from rag_lab.experiments.present import Table
from rag_lab.models.generator import Generation, Generator
from rag_lab.pipeline import Answer, Refusal, Retriever, answer
from rag_lab.progress import bar
from rag_lab.questions import Negative, Query
from rag_lab.stats import clustered_wilson
from rag_lab.text import longest_common_run, words

COPY_RUN = 20
"""An answer that repeats this many consecutive words of a source is copying it."""

HEADLINE = ("no-call-on-refusal", "cites-by-number", "ids-well-formed", "ids-wrong")


@dataclass(frozen=True)
class Outcome:
    """One query through the full pipeline at one cutoff."""

    id: str
    question: str
    negative: bool
    result: Answer | Refusal
    needle_sources: tuple[int, ...]
    """Numbers of the sources whose quote holds the query's needle."""
    cited: CitedAnswer | None
    generation: Generation | None
    unit: str
    """The question, whose phrasings succeed or fail together; a negative is its own unit."""

    @property
    def refused(self) -> bool:
        return isinstance(self.result, Refusal)

    @property
    def cites_needle(self) -> bool:
        return self.cited is not None and any(
            c.index in self.needle_sources for c in self.cited.cited
        )

    @property
    def declined(self) -> bool:
        return self.cited is not None and declines(self.cited.text)

    @property
    def copies_source(self) -> bool:
        if self.cited is None:
            return False
        said = words(self.cited.text)
        return any(
            len(longest_common_run(said, words(c.quote))) >= COPY_RUN for c in self.cited.sources
        )


IS: dict[str, Callable[[Outcome], bool]] = {
    "refused": lambda o: o.refused,
    "passed": lambda o: not o.refused,
    "needle_among": lambda o: bool(o.needle_sources),
    "needle_absent": lambda o: not o.refused and not o.needle_sources,
    "cites_needle": lambda o: o.cites_needle,
    "needle_markers": lambda o: o.cites_needle and o.cited.only_markers,
    "needle_words": lambda o: o.cites_needle and not o.cited.only_markers,
    "needle_not_cited": lambda o: bool(o.needle_sources) and not o.cites_needle,
    "nothing": lambda o: o.cited is not None and o.cited.cites_nothing,
    "invalid": lambda o: o.cited is not None and o.cited.has_invalid,
    "copies": lambda o: o.copies_source,
    "declines": lambda o: o.declined,
    "answers": lambda o: not o.declined,
    "answers_citing": lambda o: not o.declined and bool(o.cited.cited),
    "hit_budget": lambda o: o.generation is not None and o.generation.hit_budget,
}
"""Every kind of outcome counted, by name; each table maps the names it counts to labels."""

GATE_ROWS = {
    "refused": "refused by the gate",
    "needle_among": "answered, needle among the sources",
    "needle_absent": "answered, needle not among the sources",
}
ANSWER_ROWS = {
    "cites_needle": "cites a source holding the needle",
    "needle_markers": "  … with nothing but markers",
    "needle_words": "  … with words beside the markers",
    "needle_not_cited": "needle among the sources, not cited",
    "nothing": "cites nothing",
    "invalid": "cites an invalid number",
    "copies": f"copies a source (≥ {COPY_RUN} consecutive words)",
    "declines": "says the sources do not answer",
    "hit_budget": "stopped by the token budget",
}
NEGATIVE_GATE_ROWS = {"refused": "refused by the gate", "passed": "slipped through the gate"}
NEGATIVE_ANSWER_ROWS = {
    "declines": "says the sources do not answer",
    "answers": "answers anyway",
    "answers_citing": "answers anyway, citing a source",
}


def run(
    queries: Sequence[Query],
    negatives: Sequence[Negative],
    retriever: Retriever,
    cutoff: float | None,
    generator: Generator,
) -> list[Outcome]:
    """Every answerable query, then every negative, through :func:`rag_lab.pipeline.answer`.
    ``generator.calls`` grows by one per answer, generated or cached: that pairs each
    outcome with its :class:`Generation`."""
    items = [(q.id, q.text, q.needle, q.question.id) for q in queries]
    items += [(n.id, n.query, None, n.id) for n in negatives]
    outcomes = []
    with bar(len(items), "answering", "question") as b:
        for id_, text, needle, unit in items:
            before = len(generator.calls)
            result = answer(text, retriever, cutoff, generate=generator)
            generation = generator.calls[-1] if len(generator.calls) > before else None
            holding, cited = (), None
            if isinstance(result, Answer):
                holding = tuple(c.index for c in result.citations if needle and needle in c.quote)
                cited = map_citations(result.text or "", result.citations)
            outcomes.append(
                Outcome(id_, text, needle is None, result, holding, cited, generation, unit)
            )
            b.update(note=f"{sum(not g.cached for g in generator.calls)} generated")
    return outcomes


@dataclass(frozen=True)
class Split:
    answerable: list[Outcome]
    negatives: list[Outcome]

    @property
    def slipped(self) -> list[Outcome]:
        """The negatives the gate let through."""
        return [o for o in self.negatives if not o.refused]

    @classmethod
    def of(cls, outcomes: Sequence[Outcome]) -> Split:
        return cls([o for o in outcomes if not o.negative], [o for o in outcomes if o.negative])


def units(outcomes: Sequence[Outcome]) -> int:
    return len({o.unit for o in outcomes})


def rate_table(outcomes: Sequence[Outcome], rows: Mapping[str, str], caption: str) -> Table:
    """Per kind of :data:`IS` named in ``rows``: ``k/n`` and the rate with its 95 % interval,
    the questions as the sample (:func:`rag_lab.stats.clustered_wilson`)."""
    n, clusters = len(outcomes), [o.unit for o in outcomes]
    table = {}
    for kind, label in rows.items():
        hits = [IS[kind](o) for o in outcomes]
        lo, hi = clustered_wilson(hits, clusters)
        table[label] = (f"{sum(hits)}/{n}", f"{sum(hits) / n:.2f} [{lo:.2f}, {hi:.2f}]")
    frame = pd.DataFrame.from_dict(table, orient="index", columns=["queries", "rate [95 % CI]"])
    return Table(frame.rename_axis("outcome"), caption=caption)


def calls_table(split: Split) -> Table:
    """The generator's calls, from its own record, by what the gate did with the query."""
    everything = split.answerable + split.negatives
    groups = {
        "answerable queries that passed the gate": [o for o in split.answerable if not o.refused],
        "negatives that passed the gate": split.slipped,
        "refusals (both kinds)": [o for o in everything if o.refused],
    }
    frame = pd.DataFrame.from_dict(
        {name: (len(g), sum(o.generation is not None for o in g)) for name, g in groups.items()},
        orient="index",
        columns=["queries", "generator calls"],
    )
    caption = "How often the generator ran, counted by the generator"
    return Table(frame.rename_axis("queries that were"), caption=caption)


def examples(outcomes: Sequence[Outcome], kind: str, n: int = 3) -> str:
    """Markdown for the first ``n`` outcomes (question-file order) of ``kind`` (see :data:`IS`)."""
    blocks = []
    for o in [o for o in outcomes if IS[kind](o)][:n]:
        if o.needle_sources:
            where = "needle in source(s) " + ", ".join(f"[{i}]" for i in o.needle_sources)
        elif o.negative:
            where = "a negative: the corpus does not answer it"
        else:
            where = "needle not among the sources"
        cited = o.cited
        if cited and len(re.findall(r"^\s*```", cited.text, re.MULTILINE)) % 2:
            # cut by the token budget inside a code block, which would swallow the sources
            cited = replace(cited, text=cited.text.rstrip() + "\n```")
        shown = render(cited) if cited else str(o.result)
        quoted = "\n".join(f"> {line}" if line else ">" for line in shown.splitlines())
        blocks.append(f"**{o.id}** — {o.question} *({where})*\n\n{quoted}")
    return "\n\n---\n\n".join(blocks) or "*None occurred.*"


# --- the identifier probe -----------------------------------------------------------------

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
"""Papers and their arXiv identifiers (each paper's first version), so that an identifier the
model recalls, asked with no source given, can be checked offline."""
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
    return (
        1 <= int(yymm[2:]) <= 12 and yymm >= "0704" and len(number) == (4 if yymm <= "1412" else 5)
    )


def identifier_probe(generate: Callable[[str], str]) -> pd.DataFrame:
    """Ask, without sources, for each paper's arXiv identifier: per paper the answer, the first
    well-formed identifier in it ("" if none), whether arXiv's numbering allows it
    (:func:`plausible_arxiv_id`) and whether it is the paper's own, in any version."""
    rows = []
    for paper, real in ARXIV.items():
        text = generate(PROBE_PROMPT.format(paper))
        match = ARXIV_ID.search(text)
        found = match.group(0) if match else ""
        rows.append((paper, text, found, plausible_arxiv_id(found), found.split("v")[0] == real))
    return pd.DataFrame(rows, columns=["paper", "answer", "identifier", "plausible", "correct"])


def probe_tables(probe: pd.DataFrame) -> tuple[Table, Table]:
    """The probe counted, then its answers one per paper."""
    found = probe.identifier[probe.identifier != ""]
    counts = {
        "papers asked for": len(probe),
        "answers with a well-formed identifier": len(found),
        "distinct identifiers among them": found.nunique(),
        "plausible by arXiv's numbering": probe.plausible.sum(),
        "the paper's own identifier": probe.correct.sum(),
    }
    yes = {True: "yes", False: "no"}
    answers = pd.DataFrame(
        {
            "paper asked for": probe.paper.str.split(",").str[0],
            "answer": probe.answer.str.split().str.join(" "),
            "identifier": probe.identifier.replace("", "–"),
            "plausible": probe.plausible.map(yes),
            "the paper's": probe.correct.map(yes),
        }
    )
    return Table(
        pd.DataFrame.from_dict(counts, orient="index", columns=["count"]).rename_axis(""),
        caption="The identifier probe, counted",
    ), Table(
        answers,
        caption=f"{len(probe)} papers asked for, no sources given; identifier: the first "
        "well-formed one",
        shorten={"paper asked for": 30, "answer": 30},
    )


# --- what the run cost and the ledger ---------------------------------------------------------


def run_table(outcomes: Sequence[Outcome], elapsed: float) -> Table:
    """What the run cost: wall time, the generator's calls and the answer cache's share of
    them, the model's time, the prompts' sizes and the answers cut by the token budget."""
    calls = [o.generation for o in outcomes if o.generation is not None]
    seconds = sum(g.seconds for g in calls)
    tokens = [g.prompt_tokens for g in calls]
    rows = {
        "queries": f"{len(outcomes)}",
        "wall time (s)": f"{elapsed:.0f}",
        "generator calls": f"{len(calls)}",
        "served from the answer cache": f"{sum(g.cached for g in calls)}",
        "model time when generated (s)": f"{seconds:.0f}",
        "… per answer (s)": f"{seconds / len(calls):.1f}" if calls else "–",
        "prompt tokens, fewest to most": f"{min(tokens)}–{max(tokens)}" if calls else "–",
        "answers stopped by the token budget": f"{sum(g.hit_budget for g in calls)}",
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["this run"]).rename_axis("")
    return Table(frame, caption="What the run cost; the model and machine: Environment")


def entries(split: Split, probe: pd.DataFrame) -> list[Entry]:
    """The chapter's generation claims: this notebook's part of the ledger."""
    at = {"notebook": "09", "benchmark": "d2l"}
    refusals = [o for o in split.answerable + split.negatives if o.refused]
    calls = sum(o.generation is not None for o in refusals)
    hits = [o.cites_needle for o in split.answerable]
    n, found = len(probe), int((probe.identifier != "").sum())
    right = probe.identifier[probe.correct]
    return [
        fixed_entry(
            "no-call-on-refusal",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=calls == 0,
            reason="the pipeline returns a refusal before it builds a prompt; counted on a "
            "real generator",
            here=f"{calls} calls for {len(refusals)} refusals",
        ),
        entry(
            "cites-by-number",
            **at,
            record=FixedRecord(Verdict.NOT_TESTABLE, "the chapter gives no rate to compare with"),
            here=f"{sum(hits)} of {len(hits)}",
            estimate=sum(hits) / len(hits),
            ci=clustered_wilson(hits, [o.unit for o in split.answerable]),
            method="clustered_wilson",
        ),
        count_entry("ids-well-formed", **at, holds=found == n, here=f"{found} of {n}"),
        count_entry(
            "ids-wrong",
            **at,
            holds=right.empty,
            here=f"{len(right)} of {n} right" + (f" ({', '.join(right)})" if len(right) else ""),
        ),
        fixed_entry(
            "ids-real",
            **at,
            verdict=Verdict.NOT_TESTABLE,
            reason="whether an identifier exists needs arXiv itself, which this machine cannot "
            "reach",
            here=f"{probe.plausible.sum()} of {n} plausible by arXiv's numbering",
        ),
    ]


def long_view(trials) -> Table:
    """Answers citing the needle's source, by number of sources and the needle's place."""
    from rag_lab.evaluation import long_context

    questions = len({t.query.question.id for t in trials})
    return Table(
        long_context.table(trials),
        caption=f"{questions} sampled questions (seed {long_context.SEED}), course phrasing, "
        "one prompt per cell: answers citing the needle's source / prompts [95 % Wilson "
        "interval, the questions as the sample]. Distractors: the hybrid's best chunks "
        "without the needle, in rank order.",
    )
