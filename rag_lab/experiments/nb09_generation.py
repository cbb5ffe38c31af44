"""Notebook 09: every query through retrieve → gate → generate, and what the answers cite.

The measurements are counts over the question set with Wilson intervals. Counts that the
gate alone decides (refusals, which sources reach the model, how often the generator is
called) are exact and repeatable; counts about the generated text hold for one model, one
prompt and one thread count, and are shown but never compared across machines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rag_lab.answers import CitedAnswer, declines, map_citations, render
from rag_lab.claims.judge import FixedRecord
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import plots
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
"""The claims this notebook opens with: the gate's, the citing rate, and what a model does
when asked for identifiers it cannot look up."""


@dataclass(frozen=True)
class Outcome:
    """One query through the full pipeline at one cutoff."""

    id: str
    question: str
    negative: bool
    result: Answer | Refusal
    needle_sources: tuple[int, ...]
    """Numbers of the sources whose quote holds the query's needle (empty for negatives)."""
    cited: CitedAnswer | None
    """The generated text with its markers resolved; None when the gate refused."""
    generation: Generation | None
    unit: str = ""
    """The independent unit it belongs to: its question for an answerable query (both
    phrasings of a question succeed or fail together), itself for a negative."""

    @property
    def refused(self) -> bool:
        return isinstance(self.result, Refusal)

    @property
    def cites_needle(self) -> bool:
        """At least one cited source holds the needle."""
        return self.cited is not None and any(
            c.index in self.needle_sources for c in self.cited.cited
        )

    @property
    def declined(self) -> bool:
        return self.cited is not None and declines(self.cited.text)

    @property
    def copies_source(self) -> bool:
        """The answer repeats :data:`COPY_RUN` or more consecutive words of a source."""
        if self.cited is None:
            return False
        said = words(self.cited.text)
        return any(
            len(longest_common_run(said, words(c.quote))) >= COPY_RUN for c in self.cited.sources
        )


Row = Callable[[Outcome], bool]
"""Whether an outcome is of a kind; the tables below name each kind for display only."""


def refused(o: Outcome) -> bool:
    return o.refused


def needle_among_sources(o: Outcome) -> bool:
    return bool(o.needle_sources)


def needle_not_among_sources(o: Outcome) -> bool:
    return not o.refused and not o.needle_sources


def cites_needle(o: Outcome) -> bool:
    return o.cites_needle


def only_markers(o: Outcome) -> bool:
    """Cites the needle's source, and says nothing but markers such as ``[1]``."""
    return o.cites_needle and o.cited.only_markers


def words_and_markers(o: Outcome) -> bool:
    return o.cites_needle and not o.cited.only_markers


def needle_not_cited(o: Outcome) -> bool:
    return bool(o.needle_sources) and not o.cites_needle


def cites_nothing(o: Outcome) -> bool:
    return o.cited is not None and o.cited.cites_nothing


def cites_invalid(o: Outcome) -> bool:
    return o.cited is not None and o.cited.has_invalid


def cites_other(o: Outcome) -> bool:
    """Cites at least one valid source, none of which holds the needle."""
    return o.cited is not None and bool(o.cited.cited) and not o.cites_needle


def copies_source(o: Outcome) -> bool:
    return o.copies_source


def declined(o: Outcome) -> bool:
    return o.declined


def called(o: Outcome) -> bool:
    """The generator ran (or its answer came from the cache) for this query."""
    return o.generation is not None


def hit_budget(o: Outcome) -> bool:
    return o.generation is not None and o.generation.hit_budget


def slipped_through(o: Outcome) -> bool:
    return not o.refused


def answers_anyway(o: Outcome) -> bool:
    return not o.declined


def answers_citing(o: Outcome) -> bool:
    return not o.declined and bool(o.cited.cited)


GATE_ROWS: dict[str, Row] = {
    "refused by the gate": refused,
    "answered, needle among the sources": needle_among_sources,
    "answered, needle not among the sources": needle_not_among_sources,
}
"""Answerable queries: decided by retrieval and the cutoff alone, before any model runs."""

ANSWER_ROWS: dict[str, Row] = {
    "cites a source holding the needle": cites_needle,
    "  … with nothing but markers": only_markers,
    "  … with words beside the markers": words_and_markers,
    "needle among the sources, not cited": needle_not_cited,
    "cites nothing": cites_nothing,
    "cites an invalid number": cites_invalid,
    "copies a source (≥ 20 consecutive words)": copies_source,
    "says the sources do not answer": declined,
    "stopped by the token budget": hit_budget,
}
"""Answerable queries: what the generated answers cite."""

NEGATIVE_GATE_ROWS: dict[str, Row] = {
    "refused by the gate": refused,
    "slipped through the gate": slipped_through,
}

NEGATIVE_ANSWER_ROWS: dict[str, Row] = {
    "says the sources do not answer": declined,
    "answers anyway": answers_anyway,
    "answers anyway, citing a source": answers_citing,
}
"""Negatives that slipped through: does the model decline on its own?"""

ANSWER_KINDS: dict[str, tuple[str, Row]] = {
    "declines": ("says the sources do not answer", declined),
    "invalid": ("cites a number naming no source", cites_invalid),
    "needle_words": ("cites the needle's source, with words", words_and_markers),
    "needle_markers": ("cites the needle's source, markers only", only_markers),
    "other_source": ("cites other sources only", cites_other),
    "nothing": ("cites nothing", cites_nothing),
}
"""What an answer to an answerable query does, each answer in the first kind it fits (in
this order), so the kinds' shares add up to one; keyed as :data:`plots.ANSWER_COLORS`."""

NEGATIVE_KINDS: dict[str, tuple[str, Row]] = {
    "declines": ("says the sources do not answer", declined),
    "invalid": ("cites a number naming no source", cites_invalid),
    "other_source": ("answers, citing a source", cites_other),
    "nothing": ("answers, citing nothing", cites_nothing),
}
"""The same for a negative that slipped through the gate: no source holds its answer."""


def run(
    queries: Sequence[Query],
    negatives: Sequence[Negative],
    retriever: Retriever,
    cutoff: float | None,
    generator: Generator,
) -> list[Outcome]:
    """Every answerable query, then every negative, through :func:`rag_lab.pipeline.answer`.

    ``generator`` is called only for queries that pass the gate; its ``calls`` grow by one
    per answer, generated or served from the answer cache (``Generation.cached``), which is
    how each :class:`Outcome` gets its :class:`Generation`.
    """
    items = [(q.id, q.text, q.needle, q.question.id) for q in queries]
    items += [(n.id, n.query, None, n.id) for n in negatives]
    outcomes = []
    with bar(len(items), "answering", "question") as b:
        for id_, text, needle, unit in items:
            before = len(generator.calls)
            result = answer(text, retriever, cutoff, generate=generator)
            generation = generator.calls[-1] if len(generator.calls) > before else None
            outcomes.append(_outcome(id_, text, needle, result, generation, unit))
            b.update(note=f"{sum(not g.cached for g in generator.calls)} generated")
    return outcomes


def _outcome(id_, text, needle, result, generation, unit) -> Outcome:
    if isinstance(result, Refusal):
        return Outcome(id_, text, needle is None, result, (), None, None, unit)
    holding = tuple(c.index for c in result.citations if needle and needle in c.quote)
    cited = map_citations(result.text or "", result.citations)
    return Outcome(id_, text, needle is None, result, holding, cited, generation, unit)


@dataclass(frozen=True)
class Split:
    """Outcomes by kind: answerable queries, negatives, and the negatives the gate let by."""

    answerable: list[Outcome]
    negatives: list[Outcome]

    @property
    def slipped(self) -> list[Outcome]:
        return [o for o in self.negatives if not o.refused]

    @classmethod
    def of(cls, outcomes: Sequence[Outcome]) -> Split:
        return cls([o for o in outcomes if not o.negative], [o for o in outcomes if o.negative])


def rate_table(outcomes: Sequence[Outcome], rows: Mapping[str, Row], caption: str) -> Table:
    """One row per named count: ``k/n`` and the rate with its 95 % interval in one cell,
    the questions as the sample (:func:`rag_lab.stats.clustered_wilson`; a negative is its
    own question)."""
    n = len(outcomes)
    table = []
    for name, row in rows.items():
        k = sum(row(o) for o in outcomes)
        lo, hi = _interval(outcomes, row)
        table.append(
            {"outcome": name, "queries": f"{k}/{n}", "rate [95 % CI]": _rate(k, n, lo, hi)}
        )
    return Table(pd.DataFrame(table).set_index("outcome"), caption=caption)


def calls_table(split: Split) -> Table:
    """The generator's calls, from its own record of them: for the answerable queries that
    passed the gate, the negatives that passed, and the refusals (which must have none)."""
    everything = split.answerable + split.negatives
    groups = {
        "answerable queries that passed the gate": [o for o in split.answerable if not o.refused],
        "negatives that passed the gate": split.slipped,
        "refusals (both kinds)": [o for o in everything if o.refused],
    }
    frame = pd.DataFrame(
        {
            "queries": [len(g) for g in groups.values()],
            "generator calls": [sum(called(o) for o in g) for g in groups.values()],
        },
        index=pd.Index(list(groups), name="queries that were"),
    )
    return Table(frame, caption="How often the generator ran, counted by the generator")


def units(outcomes: Sequence[Outcome]) -> int:
    """The independent units among ``outcomes``: questions, a negative counting as one."""
    return len({o.unit or o.id for o in outcomes})


def _rate(k: int, n: int, lo: float, hi: float) -> str:
    return f"{k / n:.2f} {_ci(lo, hi)}" if n else "–"


def _interval(outcomes: Sequence[Outcome], row: Row) -> tuple[float, float]:
    return clustered_wilson([row(o) for o in outcomes], [o.unit or o.id for o in outcomes])


@dataclass(frozen=True)
class Share:
    """How many of the outcomes are of one kind, with its 95 % interval by question."""

    kind: str
    label: str
    k: int
    n: int
    lo: float
    hi: float

    @property
    def rate(self) -> float:
        return self.k / self.n if self.n else float("nan")


def kind_of(o: Outcome, kinds: Mapping[str, tuple[str, Row]]) -> str | None:
    """The first of ``kinds`` that ``o`` fits, or None."""
    return next((key for key, (_, row) in kinds.items() if row(o)), None)


def shares(outcomes: Sequence[Outcome], kinds: Mapping[str, tuple[str, Row]]) -> list[Share]:
    """Each kind's share of ``outcomes``, each outcome counted once (:func:`kind_of`), with
    Wilson's interval taking the questions as the sample (:func:`clustered_wilson`)."""
    first = [kind_of(o, kinds) for o in outcomes]
    out = []
    for key, (label, _) in kinds.items():
        hits = [f == key for f in first]
        lo, hi = clustered_wilson(hits, [o.unit or o.id for o in outcomes]) if outcomes else (0, 0)
        out.append(Share(key, label, sum(hits), len(outcomes), lo, hi))
    return out


def outcome_figure(split: Split):
    """What the answers do, per answer kind: the answerable queries that reached the model
    and the negatives that slipped through, each answer in the first kind it fits. A bar
    is a kind's share of its panel's queries, the whisker its 95 % interval by question."""
    import matplotlib.pyplot as plt

    reached = [o for o in split.answerable if not o.refused]
    panels = [
        (
            reached,
            ANSWER_KINDS,
            f"Answerable queries that reached the model: n = {len(reached)} queries, "
            f"{units(reached)} questions",
        ),
        (
            split.slipped,
            NEGATIVE_KINDS,
            f"Negatives that slipped through the gate: n = {len(split.slipped)} queries, "
            "each its own unit",
        ),
    ]
    with plots.style():
        fig, axes = plt.subplots(
            2, 1, figsize=(7.5, 4.6), sharex=True, height_ratios=[len(ANSWER_KINDS), 4]
        )
        for ax, (outcomes, kinds, title) in zip(axes, panels, strict=True):
            found = shares(outcomes, kinds)
            y = np.arange(len(found))[::-1]
            for yi, sh in zip(y, found, strict=True):
                color = plots.ANSWER_COLORS[sh.kind]
                ax.barh(yi, sh.rate if sh.n else 0, color=color, height=0.62)
                if sh.n:
                    ax.plot([sh.lo, sh.hi], [yi, yi], color=plots.NEUTRAL["ink"], lw=1.1)
                    ax.text(
                        max(sh.hi, sh.rate) + 0.015,
                        yi,
                        f"{sh.k}/{sh.n}",
                        va="center",
                        fontsize=7.5,
                    )
            ax.set_yticks(y, [sh.label for sh in found])
            ax.set_title(title, fontsize=9, loc="left")
            ax.grid(axis="y", visible=False)
        axes[-1].set_xlim(0, 1.08)
        axes[-1].set_xlabel(
            "share of the panel's queries (bar) and its 95 % interval, the questions as the "
            "sample (line)"
        )
        model = next((o.generation.model for o in reached + split.slipped if o.generation), "")
        fig.suptitle(
            f"What the answers of {model} do: each answer counted once, in the first kind "
            "it fits (top to bottom)",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def examples(outcomes: Sequence[Outcome], row: Row, n: int = 3) -> str:
    """Markdown for the first ``n`` outcomes (question-file order) that ``row`` selects."""
    picked = [o for o in outcomes if row(o)][:n]
    if not picked:
        return "*None occurred.*"
    blocks = []
    for o in picked:
        where = (
            f"needle in source(s) {', '.join(f'[{i}]' for i in o.needle_sources)}"
            if o.needle_sources
            else "needle not among the sources"
            if not o.negative
            else "a negative: the corpus does not answer it"
        )
        shown = render(closed_fences(o.cited)) if o.cited else str(o.result)
        quoted = "\n".join(f"> {line}" if line else ">" for line in shown.splitlines())
        blocks.append(f"**{o.id}** — {o.question} *({where})*\n\n{quoted}")
    return "\n\n---\n\n".join(blocks)


FENCE = re.compile(r"^\s*```", re.MULTILINE)
"""A line that opens or closes a Markdown code block."""


def closed_fences(cited: CitedAnswer) -> CitedAnswer:
    """``cited`` with a code block it leaves open closed, for display only: an answer
    stopped by the token budget inside a code block would otherwise swallow the sources
    listed after it. The text is otherwise unchanged."""
    if len(FENCE.findall(cited.text)) % 2 == 0:
        return cited
    return replace(cited, text=cited.text.rstrip() + "\n```")


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
"""Papers on contrastive embeddings and their arXiv identifiers (facts: each paper's first
version on arxiv.org), so that a recalled identifier can be checked offline."""
PROBE_PAPERS = tuple(ARXIV)
"""No source is given with these, so the model can only recall."""
PROBE_PROMPT = (
    "What is the arXiv identifier of the paper that introduced {}? Answer with the identifier only."
)
ARXIV_ID = re.compile(r"(?<![\d.])(\d{4})\.(\d{4,5})(?:v\d+)?(?!\d)")
"""A well-formed new-style arXiv identifier, ``YYMM.NNNNN`` with an optional version."""


@dataclass(frozen=True)
class ProbeAnswer:
    """What the model gave when asked for one paper's arXiv identifier."""

    paper: str
    text: str
    identifier: str | None
    """The first well-formed identifier in the text (:data:`ARXIV_ID`), if any."""

    @property
    def plausible(self) -> bool:
        """Well-formed and consistent with arXiv's scheme (:func:`plausible_arxiv_id`)."""
        return self.identifier is not None and plausible_arxiv_id(self.identifier)

    @property
    def correct(self) -> bool:
        """The identifier is the paper's own (:data:`ARXIV`), any version."""
        return self.identifier is not None and self.identifier.split("v")[0] == ARXIV.get(
            self.paper
        )


def plausible_arxiv_id(identifier: str) -> bool:
    """True when ``YYMM.N…`` could exist: month 01–12, from 0704 (when the scheme began),
    four digits after the dot up to 1412 and five from 1501 on.

    >>> [plausible_arxiv_id(i) for i in ("1908.10084", "1909.1234", "1913.00001")]
    [True, False, False]
    """
    match = ARXIV_ID.fullmatch(identifier)
    if not match:
        return False
    yymm, number = match.group(1), match.group(2)
    month = int(yymm[2:])
    return 1 <= month <= 12 and yymm >= "0704" and len(number) == (4 if yymm <= "1412" else 5)


def identifier_probe(generate: Callable[[str], str]) -> list[ProbeAnswer]:
    """Ask, without sources, for the arXiv identifier of each of :data:`PROBE_PAPERS`."""
    out = []
    for paper in PROBE_PAPERS:
        text = generate(PROBE_PROMPT.format(paper))
        match = ARXIV_ID.search(text)
        out.append(ProbeAnswer(paper, text, match.group(0) if match else None))
    return out


def probe_table(answers: Sequence[ProbeAnswer]) -> Table:
    """One row per paper asked about: the answer (whole in HTML, cut in plain text), the
    identifier in it, whether arXiv's numbering allows it and whether it is the paper's."""
    frame = pd.DataFrame(
        [
            {
                "paper asked for": a.paper.split(",")[0],
                "answer": " ".join(a.text.split()),
                "identifier": a.identifier or "–",
                "plausible": "yes" if a.plausible else "no",
                "the paper's": "yes" if a.correct else "no",
            }
            for a in answers
        ]
    )
    return Table(
        frame,
        caption=f"{len(answers)} papers asked for, no sources given; identifier: the first "
        "well-formed one",
        shorten={"paper asked for": 30, "answer": 30},
    )


def probe_counts(answers: Sequence[ProbeAnswer]) -> Table:
    """The probe in counts: the papers asked for, the answers holding a well-formed
    identifier, how many distinct ones they are, how many fit arXiv's numbering, and how
    many are the paper's own."""
    ids = [a.identifier for a in answers if a.identifier]
    rows = {
        "papers asked for": len(answers),
        "answers with a well-formed identifier": len(ids),
        "distinct identifiers among them": len(set(ids)),
        "plausible by arXiv's numbering": sum(a.plausible for a in answers),
        "the paper's own identifier": sum(a.correct for a in answers),
    }
    frame = pd.DataFrame({"count": list(rows.values())}, index=pd.Index(list(rows), name=""))
    return Table(frame, caption="The identifier probe, counted")


# --- what the run cost and the ledger ---------------------------------------------------------


def run_table(outcomes: Sequence[Outcome], elapsed: float) -> Table:
    """What the run cost: the queries and the wall time, the generator's calls and how many
    came from the answer cache, the model's time when the answers were generated, the
    prompts' sizes and the answers stopped by the new-token budget."""
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
    frame = pd.DataFrame({"this run": list(rows.values())}, index=pd.Index(list(rows), name=""))
    return Table(frame, caption="What the run cost; the model and machine: Environment")


def entries(split: Split, probe: Sequence[ProbeAnswer]) -> list[Entry]:
    """The chapter's generation claims: this notebook's part of the ledger."""
    at = {"notebook": "09", "benchmark": "d2l"}
    outcomes = split.answerable + split.negatives
    refusals = [o for o in outcomes if o.refused]
    called_on_refusal = sum(o.generation is not None for o in refusals)
    ids = [a for a in probe if a.identifier]
    right = [a for a in probe if a.correct]
    n = len(probe)
    return [
        fixed_entry(
            "no-call-on-refusal",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=called_on_refusal == 0,
            reason="the pipeline returns a refusal before it builds a prompt; counted on a "
            "real generator",
            here=f"{called_on_refusal} calls for {len(refusals)} refusals",
        ),
        _cites_by_number(split.answerable, at),
        count_entry(
            "ids-well-formed",
            **at,
            holds=len(ids) == n,
            here=f"{len(ids)} of {n}",
        ),
        count_entry(
            "ids-wrong",
            **at,
            holds=not right,
            here=f"{len(right)} of {n} right"
            + (f" ({', '.join(a.identifier for a in right)})" if right else ""),
        ),
        fixed_entry(
            "ids-real",
            **at,
            verdict=Verdict.NOT_TESTABLE,
            reason="whether an identifier exists needs arXiv itself, which this machine cannot "
            "reach",
            here=f"{sum(a.plausible for a in probe)} of {n} plausible by arXiv's numbering",
        ),
    ]


def _cites_by_number(answerable: Sequence[Outcome], at: Mapping[str, str]) -> Entry:
    """The citing rate: not testable (the chapter gives none), but measured, its Wilson
    interval taking the questions as the sample."""
    k, n = sum(cites_needle(o) for o in answerable), len(answerable)
    return entry(
        "cites-by-number",
        **at,
        record=FixedRecord(Verdict.NOT_TESTABLE, "the chapter gives no rate to compare with"),
        here=f"{k} of {n}",
        estimate=k / n if n else None,
        ci=_interval(answerable, cites_needle) if n else None,
        method="clustered_wilson",
    )


def _ci(lo: float, hi: float) -> str:
    return f"[{lo:.2f}, {hi:.2f}]"


def long_view(trials) -> Table:
    """Answers citing the needle's source, by number of sources and the needle's place."""
    from rag_lab.evaluation import long_context

    frame = long_context.table(trials)
    questions = len({t.query.question.id for t in trials})
    return Table(
        frame,
        caption=f"{questions} sampled questions (seed {long_context.SEED}), course phrasing, "
        "one prompt per cell: answers citing the needle's source / prompts [95 % Wilson "
        "interval, the questions as the sample]. Distractors: the hybrid's best chunks "
        "without the needle, in rank order.",
    )
