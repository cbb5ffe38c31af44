"""Notebook 09: every query through retrieve → gate → generate, and what the answers cite."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

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


def outcome(result: Answer | Refusal, needle: str | None, generation: Generation | None) -> dict:
    """One query's pass: the result, the answer with its markers resolved, the generator's call,
    the numbers of the sources holding the needle, and a flag per kind of outcome counted."""
    refused = isinstance(result, Refusal)
    sources = () if refused else result.citations
    cited = None if refused else map_citations(result.text or "", sources)
    holding = tuple(c.index for c in sources if needle and needle in c.quote)
    said = cited.cited if cited else ()
    needle_cited = any(c.index in holding for c in said)
    declined = cited is not None and declines(cited.text)
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
        "cites_needle": needle_cited,
        "needle_markers": needle_cited and cited.only_markers,
        "needle_words": needle_cited and not cited.only_markers,
        "needle_not_cited": bool(holding) and not needle_cited,
        "nothing": cited is not None and cited.cites_nothing,
        "invalid": cited is not None and cited.has_invalid,
        "copies": cited is not None and copies(cited),
        "declines": declined,
        "answers": not declined,
        "answers_citing": not declined and bool(said),
        "called": generation is not None,
        "hit_budget": generation is not None and generation.hit_budget,
    }


def copies(cited: CitedAnswer) -> bool:
    said = words(cited.text)
    return any(len(longest_common_run(said, words(c.quote))) >= COPY_RUN for c in cited.sources)


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
) -> pd.DataFrame:
    """One row per query through :func:`rag_lab.pipeline.answer` (:func:`outcome`), answerable
    ones first; ``unit`` is its question (the phrasings succeed or fail together), a negative's
    unit itself. ``generator.calls`` grows by one per answer, generated or cached."""
    items = [(q.id, q.text, q.needle, q.question.id) for q in queries]
    items += [(n.id, n.query, None, n.id) for n in negatives]
    rows = []
    with bar(len(items), "answering", "question") as b:
        for id_, text, needle, unit in items:
            before = len(generator.calls)
            result = answer(text, retriever, cutoff, generate=generator)
            generation = generator.calls[-1] if len(generator.calls) > before else None
            row = {"id": id_, "question": text, "unit": unit}
            rows.append(row | outcome(result, needle, generation))
            b.update(note=f"{sum(not g.cached for g in generator.calls)} generated")
    return pd.DataFrame(rows)


def parts(outcomes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The answerable queries, the negatives, and the negatives the gate let through."""
    negatives = outcomes[outcomes.negative]
    return outcomes[~outcomes.negative], negatives, negatives[negatives.passed]


def units(outcomes: pd.DataFrame) -> int:
    return outcomes.unit.nunique()


def rate_table(outcomes: pd.DataFrame, rows: Mapping[str, str], caption: str) -> Table:
    """Per flag in ``rows``: ``k/n`` and the rate with its 95 % interval by question."""
    n, table = len(outcomes), {}
    for kind, label in rows.items():
        k = outcomes[kind].sum()
        lo, hi = clustered_wilson(outcomes[kind], outcomes.unit)
        table[label] = (f"{k}/{n}", f"{k / n:.2f} [{lo:.2f}, {hi:.2f}]")
    frame = pd.DataFrame.from_dict(table, orient="index", columns=["queries", "rate [95 % CI]"])
    return Table(frame.rename_axis("outcome"), caption=caption)


def calls_table(outcomes: pd.DataFrame) -> Table:
    """The generator's calls, from its own record, by what the gate did with the query."""
    groups = {
        "answerable queries that passed the gate": outcomes.passed & ~outcomes.negative,
        "negatives that passed the gate": outcomes.passed & outcomes.negative,
        "refusals (both kinds)": outcomes.refused,
    }
    frame = pd.DataFrame.from_dict(
        {name: (g.sum(), outcomes.called[g].sum()) for name, g in groups.items()},
        orient="index",
        columns=["queries", "generator calls"],
    ).rename_axis("queries that were")
    return Table(frame, "How often the generator ran, counted by the generator")


def examples(outcomes: pd.DataFrame, kind: str, n: int = 3) -> str:
    """Markdown for the first ``n`` outcomes (question-file order) flagged ``kind``."""
    blocks = []
    for o in outcomes[outcomes[kind]].head(n).itertuples():
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
    """Ask, without sources, for each paper's arXiv identifier: the answer, the first well-formed
    identifier in it ("" if none), whether it is plausible and whether it is the paper's."""
    rows = []
    for paper, real in ARXIV.items():
        text = generate(PROBE_PROMPT.format(paper))
        found = match.group(0) if (match := ARXIV_ID.search(text)) else ""
        rows.append((paper, text, found, plausible_arxiv_id(found), found.split("v")[0] == real))
    return pd.DataFrame(rows, columns=["paper", "answer", "identifier", "plausible", "correct"])


def probe_table(probe: pd.DataFrame) -> Table:
    """The probe's answers, one per paper; the findings count them."""
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
    cap = f"{len(probe)} papers asked for, no sources given; identifier: the first well-formed one"
    return Table(answers, cap, {"paper asked for": 30, "answer": 30})


def run_table(outcomes: pd.DataFrame, elapsed: float) -> Table:
    """What the run cost: wall time, the generator's calls and the answer cache's share of
    them, the model's time, the prompts' sizes and the answers cut by the token budget."""
    calls = outcomes.generation.dropna().tolist()
    seconds = sum(g.seconds for g in calls)
    tokens = [g.prompt_tokens for g in calls]
    rows = {
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


def entries(outcomes: pd.DataFrame, probe: pd.DataFrame) -> list[Entry]:
    """The chapter's generation claims: this notebook's part of the ledger."""
    at = {"notebook": "09", "benchmark": "d2l"}
    refusals, answerable = outcomes[outcomes.refused], outcomes[~outcomes.negative]
    calls = int(refusals.called.sum())
    hits = answerable.cites_needle.tolist()
    n, found = len(probe), int((probe.identifier != "").sum())
    right = probe.identifier[probe.correct]
    among, slipped = answerable[answerable.needle_among], parts(outcomes)[2]
    unused, answered = int(among.needle_not_cited.sum()), int(slipped.answers.sum())
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
            ci=clustered_wilson(hits, answerable.unit),
            method="clustered_wilson",
        ),
        count_entry(
            "needle-in-prompt-unused",
            **at,
            holds=unused > 0,
            here=f"{unused} of {len(among)} not cited",
        ),
        count_entry(
            "threshold-over-instruction",
            **at,
            holds=answered > 0,
            here=f"{answered} of {len(slipped)} answered",
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
