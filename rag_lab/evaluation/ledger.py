"""The claims ledger: every claim measured on a benchmark, as one :class:`Entry` each.

What a claim says, its direction, the chapter's result, its role, population, family,
margin and stand-in are declared once in :mod:`rag_lab.claims` (``chapter.yaml``); what was
measured comes as a record of numbers; the verdict is :func:`rag_lab.claims.judge.judge`'s,
the one rule. The builders here join the three into an entry: the claim's id, the benchmark,
the record, and our result as shown (``here``).

Families: a notebook's **confirmatory** family is its confirmatory claims on one benchmark;
the judge widens their intervals (and adjusts their p) by Bonferroni over them alone
(:func:`paired_entries`). Exploratory claims are shown unadjusted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab.claims import CONFIRMATORY, EXPLORATORY, Direction, claim
from rag_lab.claims.judge import (
    CountRecord,
    FixedRecord,
    IntervalRecord,
    PairedRecord,
    Record,
    ValueRecord,
    judge,
)
from rag_lab.claims.verdicts import Verdict
from rag_lab.metrics import Ranks, hits_at
from rag_lab.stats import (
    cluster_paired,
    cluster_paired_values,
    paired_difference,
    paired_mean_difference,
)

REFERENCE_ENCODER = "all-MiniLM-L6-v2"
"""The lab's encoder, the chapter's (:data:`rag_lab.models.encoder.DEFAULT_ENCODER`)."""
PAIRED_METHOD = "paired_t_pseudo_questions"
"""The interval of a paired difference by question (:func:`rag_lab.stats.paired_difference`):
Student's t over the questions' differences with two pseudo-questions."""


@dataclass(frozen=True)
class Entry:
    """One claim of one notebook on one benchmark, with its evidence and its verdict."""

    notebook: str
    claim: str
    """A stable id, e.g. ``E>A@R20``, declared in the claims file."""
    benchmark: str
    """``d2l`` (the lab's corpus), ``chroma``, or the name of a user's corpus."""
    statement: str
    direction: Direction
    metric: str
    """``R@20``, ``destroyed answers``, ``bluff rate at 0.675``…"""
    verdict: Verdict
    chapter: str = "–"
    """The chapter's result as it reports it (``+18/−3, p = 0.0015``)."""
    chapter_effect: float | None = None
    """Its effect on the metric's scale (net wins over queries, a count, a rate)."""
    here: str = ""
    """Our result as shown."""
    estimate: float | None = None
    ci: tuple[float, float] | None = None
    p: float | None = None
    p_adjusted: float | None = None
    family: str = ""
    margin: float | None = None
    detectable: float | None = None
    reason: str = ""
    """Why: the count rule applied, or why it could not be tested or measured."""
    role: str = ""
    """Whose claim: ``chapter``, ``control``, ``project`` or ``exploratory``."""
    population: str = ""
    stand_in: str | None = None
    method: str = ""
    """The name of the method behind ``ci`` (``paired_t_pseudo_questions``…)."""
    level: float | None = None
    """The level of ``ci`` when it is not 95 % (a confirmatory family's ``1 − α/m``)."""
    significant: bool | None = None
    """For a paired claim: whether its interval excludes 0 (shown beside an equivalence)."""
    ceiling: float | None = None
    """The largest difference the comparison could reach, when that kept the chapter's
    effect out of reach."""
    chapter_power: float | None = None
    """The power a study of the chapter's size had to detect our difference."""
    prediction: tuple[float, float] | None = None
    """Where a replication of the chapter's size should find its estimate, given ours."""
    share: tuple[float, float] | None = None
    """Our interval as a share of our headroom, when a ceiling moved the comparison there."""
    chapter_share: float | None = None
    """The chapter's effect as a share of its headroom, beside :attr:`share`."""
    encoder: str = REFERENCE_ENCODER
    """The sentence encoder the claim was measured with (every entry until notebook 13 used
    the lab's one)."""

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["direction"] = self.direction.value
        out["verdict"] = self.verdict.value
        for name in ("ci", "prediction", "share"):
            value = getattr(self, name)
            out[name] = [_finite(x) for x in value] if value is not None else None
        return {k: _finite(v) for k, v in out.items()}


# --- building entries: a declared claim, a record, our result as shown -----------------------


def entry(
    claim_id: str,
    *,
    notebook: str,
    benchmark: str,
    record: Record,
    here: str = "",
    estimate: float | None = None,
    ci: tuple[float, float] | None = None,
    p: float | None = None,
    p_adjusted: float | None = None,
    method: str = "",
    metric: str | None = None,
) -> Entry:
    """The entry for the declared claim ``claim_id`` on ``benchmark``, judged on ``record``.

    ``metric`` overrides the declared one only where the run names it (a cutoff calibrated
    on the run, the encoder's window)."""
    c = claim(claim_id)
    j = judge(c, record)
    if isinstance(record, FixedRecord):
        reason = record.reason
    elif c.not_as_stated:
        reason = c.not_as_stated
    elif isinstance(record, CountRecord | IntervalRecord):
        reason = c.rule
    else:
        reason = ""
    if j.interval is not None:  # a paired claim: the interval and p that decided it
        ci, p, p_adjusted = j.interval, j.p, j.p_adjusted
    return Entry(
        notebook,
        c.id,
        benchmark,
        c.statement,
        c.direction,
        metric or c.metric,
        j.verdict,
        chapter=c.chapter,
        chapter_effect=c.chapter_effect,
        here=here,
        estimate=estimate,
        ci=ci,
        p=p,
        p_adjusted=p_adjusted,
        family=c.family,
        margin=j.margin,
        detectable=j.detectable,
        reason=reason,
        role=c.role,
        population=c.population,
        stand_in=c.stand_in,
        method=method,
        level=j.level if j.level is not None and abs(j.level - 0.95) > 1e-9 else None,
        significant=j.significant,
        ceiling=j.ceiling,
        chapter_power=j.chapter_power,
        prediction=j.prediction,
        share=j.share,
        chapter_share=j.chapter_share,
    )


@dataclass(frozen=True)
class PairedClaim:
    """A declared paired claim measured on ranks named ``a`` and ``b`` at Recall@``k``; each
    defaults to the claim's declared comparison. ``questions``, when given, is the claim's
    population: only the queries of those questions are compared."""

    claim: str
    a: str | None = None
    b: str | None = None
    k: int | None = None
    questions: frozenset[Hashable] | None = None

    def systems(self) -> tuple[str, str, int]:
        compare = claim(self.claim).compare
        a = self.a if self.a is not None else compare.a
        b = self.b if self.b is not None else compare.b
        k = self.k if self.k is not None else compare.k
        return a, b, k


def paired_entries(
    notebook: str,
    benchmark: str,
    claims: Sequence[PairedClaim | str],
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
) -> list[Entry]:
    """Judge ``claims`` (declared ids, or :class:`PairedClaim` naming the systems) on
    ``ranks`` (first-hit ranks per system, queries clustered by ``clusters``): the
    confirmatory ones as one family, the exploratory ones alone."""
    paired = [c if isinstance(c, PairedClaim) else PairedClaim(c) for c in claims]
    family = sum(claim(c.claim).family == CONFIRMATORY for c in paired)
    out = []
    for c in paired:
        a_name, b_name, k = c.systems()
        a, b, of = hits_at(ranks[a_name], k), hits_at(ranks[b_name], k), list(clusters)
        if c.questions is not None:
            kept = [i for i, q in enumerate(of) if q in c.questions]
            a, b, of = [a[i] for i in kept], [b[i] for i in kept], [of[i] for i in kept]
        d, t = paired_difference(a, b, of), cluster_paired(a, b, of)
        reach = float(sum(b)) / len(b)
        record = PairedRecord(d, t, family, headroom=(-reach, 1 - reach))
        out.append(
            entry(
                c.claim,
                notebook=notebook,
                benchmark=benchmark,
                record=record,
                here=f"+{t.wins}/\N{MINUS SIGN}{t.losses} of {t.wins + t.losses + t.ties} "
                "questions",
                estimate=d.estimate,
                method=PAIRED_METHOD,
            )
        )
    return out


def mrr_entry(
    claim_id: str,
    *,
    notebook: str,
    benchmark: str,
    a: Ranks,
    b: Ranks,
    clusters: Sequence[Hashable],
) -> Entry:
    """A paired claim on MRR: each query's reciprocal rank of its first hit (0 when none),
    ``a`` against ``b``, by the paired rule over questions."""
    ra, rb = (np.array([1.0 / r if r else 0.0 for r in ranks]) for ranks in (a, b))
    return mean_entry(
        claim_id, notebook=notebook, benchmark=benchmark, a=ra, b=rb, clusters=clusters
    )


def mean_entry(
    claim_id: str,
    *,
    notebook: str,
    benchmark: str,
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable],
) -> Entry:
    """A paired claim on a real value per query (a reciprocal rank, a precision), ``a``
    against ``b``, by the paired rule over questions."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    d, t = paired_mean_difference(a, b, clusters), cluster_paired_values(a, b, clusters)
    return entry(
        claim_id,
        notebook=notebook,
        benchmark=benchmark,
        record=PairedRecord(d, t),
        here=f"{a.mean():.3f} vs {b.mean():.3f}, +{t.wins}/\N{MINUS SIGN}{t.losses} of "
        f"{t.wins + t.losses + t.ties} questions",
        estimate=d.estimate,
        method=PAIRED_METHOD,
    )


def count_entry(
    claim_id: str,
    *,
    notebook: str,
    benchmark: str,
    holds: bool,
    here: str,
    estimate: float | None = None,
    metric: str | None = None,
) -> Entry:
    """A claim on an exact count: reproduces when its declared rule ``holds``."""
    return entry(
        claim_id,
        notebook=notebook,
        benchmark=benchmark,
        record=CountRecord(holds),
        here=here,
        estimate=estimate,
        metric=metric,
    )


def value_entry(
    claim_id: str,
    *,
    notebook: str,
    benchmark: str,
    estimate: float,
    interval: tuple[float, float],
    method: str,
    here: str,
) -> Entry:
    """A rate the chapter reports, against ours with its interval."""
    return entry(
        claim_id,
        notebook=notebook,
        benchmark=benchmark,
        record=ValueRecord(estimate, interval, method),
        here=here,
        estimate=estimate,
        ci=interval,
        method=method,
    )


def fixed_entry(
    claim_id: str,
    *,
    notebook: str,
    benchmark: str,
    verdict: Verdict,
    reason: str,
    here: str = "",
    holds: bool = True,
) -> Entry:
    """A claim whose verdict is by construction, not testable here or not measured, with
    its reason; a by-construction claim whose check on the run fails (``holds`` False) is
    contradicted, for then the code does not do what it is built to."""
    return entry(
        claim_id,
        notebook=notebook,
        benchmark=benchmark,
        record=FixedRecord(verdict, reason, holds),
        here=here,
    )


# --- the ledger file ------------------------------------------------------------------------


@dataclass
class Ledger:
    """Entries in order; written as a JSON list, read back the same."""

    entries: list[Entry] = field(default_factory=list)

    def extend(self, entries: Sequence[Entry]) -> Ledger:
        self.entries.extend(entries)
        return self

    def write(self, path: str | Path) -> Path:
        from rag_lab.atomic import write_atomically

        entries = [e.to_json() for e in self.entries]
        text = json.dumps(entries, indent=1, ensure_ascii=False, allow_nan=False)
        return write_atomically(Path(path), lambda tmp: tmp.write_text(text + "\n", "utf-8"))

    @classmethod
    def read(cls, path: str | Path) -> Ledger:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls([_entry(item) for item in raw])


def _entry(item: Mapping[str, Any]) -> Entry:
    fields = dict(item)
    fields["direction"] = Direction(fields["direction"])
    fields["verdict"] = Verdict(fields["verdict"])
    for name in ("ci", "prediction", "share"):  # an unbounded end is written as null
        if fields.get(name) is not None:
            lo, hi = fields[name]
            fields[name] = (-math.inf if lo is None else lo, math.inf if hi is None else hi)
    return Entry(**fields)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


__all__ = [
    "CONFIRMATORY",
    "EXPLORATORY",
    "PAIRED_METHOD",
    "REFERENCE_ENCODER",
    "Direction",
    "Entry",
    "Ledger",
    "PairedClaim",
    "count_entry",
    "entry",
    "fixed_entry",
    "mean_entry",
    "mrr_entry",
    "paired_entries",
    "value_entry",
]
