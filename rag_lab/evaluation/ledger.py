"""The claims ledger: every claim the lab tests, as one record each, judged by one stated rule.

An :class:`Entry` holds the chapter's claim in a short paraphrase, its :class:`Direction`, the
chapter's own result and effect, the metric and k, our estimate of the paired difference by
question with its 95 % interval (:func:`rag_lab.stats.paired_difference`), the question-level
sign test (:func:`rag_lab.stats.cluster_paired`), its family, the raw and Holm-adjusted p,
and the :class:`~rag_lab.evaluation.verdicts.Verdict`. The rule (:func:`judge`):

- a **directional** claim (``better``, ``worse``) *reproduces* when the adjusted
  question-level test is significant in the claimed direction, and is *contradicted* when it
  is significant the other way; it *excludes the chapter's effect* when the test is not
  significant but the interval excludes the chapter's effect; otherwise it is
  *inconclusive*, and :attr:`Entry.detectable` gives the smallest difference this design
  detects with 80 % power at the family's level;
- a **no-difference** claim (``same``) *reproduces* when the whole interval lies within
  ±:data:`MARGIN` (equivalence, decided first: a difference the test sees but the interval
  keeps inside the margin is none that matters); otherwise it is *contradicted* when the test
  is significant, else inconclusive;
- a **count** claim (a property of the corpus or the run, counted exactly: "blind cuts
  destroy answers") reproduces when the stated condition holds, else it is contradicted;
- a **value** claim (a rate the chapter reports) is judged against the chapter's value as a
  no-difference claim is against zero: it reproduces when the interval lies within ±MARGIN
  of it, *excludes the chapter's effect* when the interval excludes it, else inconclusive;
- *by construction*, *not testable here* and *not measured* are verdicts of their own, each
  with its reason, and never count as agreement.

Families: a notebook's **confirmatory** family is its chapter claims on one benchmark; Holm
adjusts over them alone. Controls and other k are **exploratory**: shown, unadjusted.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from rag_lab.evaluation.render import markdown_table
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.metrics import Ranks, hits_at
from rag_lab.stats import ALPHA, Difference, Paired, cluster_paired, holm, paired_difference

MARGIN = 0.10
"""The equivalence margin, in Recall@k (or in a rate): a "no difference" claim reproduces only
when the whole 95 % interval lies within ±0.10. Set below the smallest effect the chapter
reports as a difference (E vs C at R@20, +10 net of 64 queries = +0.156) and above what the
design can resolve at best (32 questions: an interval of about ±0.06 when nothing differs),
so that agreement must be shown, never inferred from a test that found nothing."""
POWER = 0.8


class Direction(enum.Enum):
    """What a claim says of its metric."""

    BETTER = "better"
    """``a`` is higher than ``b``."""
    WORSE = "worse"
    """``a`` is lower than ``b``."""
    SAME = "no difference"
    """``a`` and ``b`` do not differ (within :data:`MARGIN`)."""
    COUNT = "count"
    """A condition on an exact count (a property of the corpus or of the run)."""
    VALUE = "value"
    """A rate the chapter reports; ours is compared with it."""


CONFIRMATORY = "confirmatory"
EXPLORATORY = "exploratory"


@dataclass(frozen=True)
class Entry:
    """One claim of one notebook on one benchmark, with its evidence and its verdict."""

    notebook: str
    claim: str
    """A stable id, e.g. ``E>A@R20``."""
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

    @property
    def interval(self) -> str:
        """The estimate and its interval as shown (``+0.109 [−0.012, +0.230]``), or ``–``."""
        if self.estimate is None or self.ci is None:
            return "–"
        signed = self.direction in (Direction.BETTER, Direction.WORSE, Direction.SAME)
        fmt = "{:+.3f}" if signed else "{:.3f}"
        lo, hi = (fmt.format(x) for x in self.ci)
        return f"{fmt.format(self.estimate)} [{lo}, {hi}]"

    @property
    def verdict_text(self) -> str:
        """The verdict and what qualifies it: the margin of an equivalence, the effect an
        inconclusive design could detect, the reason a claim is fixed or counted."""
        words = self.verdict.label
        if self.verdict is Verdict.INCONCLUSIVE and self.detectable is not None:
            return f"{words} (detects ±{self.detectable:.2f} with 80 % power)"
        if self.margin is not None and self.verdict in (Verdict.REPRODUCES, Verdict.INCONCLUSIVE):
            return f"{words} (margin ±{self.margin:.2f})"
        if not self.verdict.tested:
            return f"{words}: {self.reason}"
        return words

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["direction"] = self.direction.value
        out["verdict"] = self.verdict.value
        out["ci"] = list(self.ci) if self.ci is not None else None
        return {k: _finite(v) for k, v in out.items()}


# --- the rule -------------------------------------------------------------------------------


def judge(
    direction: Direction,
    difference: Difference,
    test: Paired,
    p_adjusted: float,
    chapter_effect: float | None,
    family_size: int = 1,
) -> tuple[Verdict, float | None, float | None]:
    """(verdict, margin, detectable) for a paired claim, by the module's rule.

    ``difference`` and ``test`` are ``a`` against ``b`` by question; ``p_adjusted`` is the
    test's p after Holm over the family (the raw p for an exploratory claim);
    ``chapter_effect`` is the chapter's difference on the same scale.
    """
    significant = p_adjusted < ALPHA and test.wins != test.losses
    sign = 1 if test.wins > test.losses else -1
    if direction is Direction.SAME:
        # Equivalence first (two one-sided tests at the interval's level): a difference the
        # test can see but the whole interval keeps inside the margin is no difference that
        # matters, which is what the claim says; a large design makes every difference
        # significant, so significance first would never let the margin decide.
        if difference.within(MARGIN):
            return Verdict.REPRODUCES, MARGIN, None
        if significant:
            return Verdict.CONTRADICTED, MARGIN, None
        return Verdict.INCONCLUSIVE, MARGIN, None
    if direction not in (Direction.BETTER, Direction.WORSE):
        raise ValueError(f"a paired claim is better, worse or no difference, not {direction}")
    claimed = 1 if direction is Direction.BETTER else -1
    if significant:
        return (Verdict.REPRODUCES if sign == claimed else Verdict.CONTRADICTED), None, None
    if chapter_effect is not None and difference.excludes(chapter_effect):
        return Verdict.EXCLUDES_CHAPTER_EFFECT, None, None
    return Verdict.INCONCLUSIVE, None, difference.detectable(ALPHA / family_size, POWER)


def judge_value(
    chapter_value: float, interval: tuple[float, float], margin: float = MARGIN
) -> tuple[Verdict, float]:
    """(verdict, margin) for a value claim: our interval against the chapter's value."""
    lo, hi = interval
    if chapter_value - margin <= lo and hi <= chapter_value + margin:
        return Verdict.REPRODUCES, margin
    if not lo <= chapter_value <= hi:
        return Verdict.EXCLUDES_CHAPTER_EFFECT, margin
    return Verdict.INCONCLUSIVE, margin


# --- building entries -----------------------------------------------------------------------


@dataclass(frozen=True)
class PairedClaim:
    """A claim that system ``a`` is ``direction`` than ``b`` at Recall@``k``."""

    claim: str
    statement: str
    a: str
    b: str
    k: int
    direction: Direction
    chapter: tuple[int, int, str | None] | None = None
    """The chapter's (wins, losses, p as printed) of ``a`` over ``b`` on its 64 queries."""
    family: str = CONFIRMATORY
    chapter_queries: int = 64


def paired_entries(
    notebook: str,
    benchmark: str,
    claims: Sequence[PairedClaim],
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
) -> list[Entry]:
    """Judge ``claims`` on ``ranks`` (first-hit ranks per system, queries clustered by
    ``clusters``): Holm over the confirmatory ones, the exploratory ones unadjusted."""
    measured = []
    for c in claims:
        a, b = hits_at(ranks[c.a], c.k), hits_at(ranks[c.b], c.k)
        measured.append((c, paired_difference(a, b, clusters), cluster_paired(a, b, clusters)))
    confirmatory = [i for i, (c, _, _) in enumerate(measured) if c.family == CONFIRMATORY]
    adjusted = dict(zip(confirmatory, holm([measured[i][2].p for i in confirmatory]), strict=True))
    entries = []
    for i, (c, d, t) in enumerate(measured):
        p_adj = adjusted.get(i, t.p)
        effect = None
        if c.chapter is not None:
            effect = (c.chapter[0] - c.chapter[1]) / c.chapter_queries
        size = len(confirmatory) if c.family == CONFIRMATORY else 1
        verdict, margin, detectable = judge(c.direction, d, t, p_adj, effect, size)
        entries.append(
            Entry(
                notebook,
                c.claim,
                benchmark,
                c.statement,
                c.direction,
                f"R@{c.k}",
                verdict,
                chapter=_chapter_text(c.chapter),
                chapter_effect=effect,
                here=f"+{t.wins}/\N{MINUS SIGN}{t.losses} of {t.wins + t.losses + t.ties} "
                "questions",
                estimate=d.estimate,
                ci=(d.lo, d.hi),
                p=t.p,
                p_adjusted=p_adj if c.family == CONFIRMATORY else None,
                family=c.family,
                margin=margin,
                detectable=detectable,
            )
        )
    return entries


def count_entry(
    *,
    notebook: str,
    benchmark: str,
    claim: str,
    statement: str,
    metric: str,
    holds: bool,
    here: str,
    chapter: str = "–",
    rule: str = "",
    chapter_effect: float | None = None,
    estimate: float | None = None,
) -> Entry:
    """A claim on an exact count: reproduces when ``holds``, else contradicted."""
    return Entry(
        notebook,
        claim,
        benchmark,
        statement,
        Direction.COUNT,
        metric,
        Verdict.REPRODUCES if holds else Verdict.CONTRADICTED,
        chapter=chapter,
        chapter_effect=chapter_effect,
        here=here,
        estimate=estimate,
        reason=rule,
    )


def value_entry(
    *,
    notebook: str,
    benchmark: str,
    claim: str,
    statement: str,
    metric: str,
    chapter_value: float,
    estimate: float,
    interval: tuple[float, float],
    chapter: str,
    here: str,
    margin: float = MARGIN,
) -> Entry:
    """A rate the chapter reports, against ours with its interval (:func:`judge_value`)."""
    verdict, margin = judge_value(chapter_value, interval, margin)
    return Entry(
        notebook,
        claim,
        benchmark,
        statement,
        Direction.VALUE,
        metric,
        verdict,
        chapter=chapter,
        chapter_effect=chapter_value,
        here=here,
        estimate=estimate,
        ci=interval,
        margin=margin,
    )


def fixed_entry(
    *,
    notebook: str,
    benchmark: str,
    claim: str,
    statement: str,
    verdict: Verdict,
    reason: str,
    metric: str = "–",
    chapter: str = "–",
    here: str = "",
    direction: Direction = Direction.COUNT,
) -> Entry:
    """A claim whose verdict is by construction, not testable here or not measured."""
    if verdict not in (Verdict.BY_CONSTRUCTION, Verdict.NOT_TESTABLE, Verdict.NOT_MEASURED):
        raise ValueError(f"{verdict} is decided by numbers, not fixed")
    if not reason:
        raise ValueError("a verdict that numbers do not decide needs its reason")
    return Entry(
        notebook,
        claim,
        benchmark,
        statement,
        direction,
        metric,
        verdict,
        chapter=chapter,
        here=here,
        reason=reason,
    )


# --- showing entries ------------------------------------------------------------------------


def view(entries: Sequence[Entry]) -> pd.DataFrame:
    """Entries for reading, one row a claim: the chapter's result, ours, the estimate and its
    interval by question, the test's p (Holm-adjusted in a confirmatory family), the verdict."""
    return pd.DataFrame(
        {
            "chapter": [e.chapter for e in entries],
            "here": [e.here for e in entries],
            "estimate [95 % CI]": [e.interval for e in entries],
            "p (Holm)": [_p_text(e) for e in entries],
            "verdict": [e.verdict_text for e in entries],
        },
        index=pd.Index([f"{e.claim}: {e.statement}" for e in entries], name="claim"),
    )


def markdown(entries: Sequence[Entry]) -> str:
    """:func:`view` as a Markdown table."""
    return markdown_table(view(entries))


def _p_text(e: Entry) -> str:
    if e.p is None:
        return "–"
    if e.p_adjusted is None:
        return f"{e.p:#.2g} ({e.family})"
    return f"{e.p:#.2g} ({e.p_adjusted:#.2g})"


def construction_entry(*, holds: bool, **fields: Any) -> Entry:
    """A claim true by how the code is built, checked on the run: *by construction* when the
    run shows it (``holds``), else *contradicted*, for then the code does not do what it is
    built to. ``fields`` are :func:`fixed_entry`'s."""
    entry = fixed_entry(verdict=Verdict.BY_CONSTRUCTION, **fields)
    return entry if holds else replace(entry, verdict=Verdict.CONTRADICTED)


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

        text = json.dumps([e.to_json() for e in self.entries], indent=1, ensure_ascii=False)
        return write_atomically(Path(path), lambda tmp: tmp.write_text(text + "\n", "utf-8"))

    @classmethod
    def read(cls, path: str | Path) -> Ledger:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls([_entry(item) for item in raw])


def _entry(item: Mapping[str, Any]) -> Entry:
    fields = dict(item)
    fields["direction"] = Direction(fields["direction"])
    fields["verdict"] = Verdict(fields["verdict"])
    fields["ci"] = tuple(fields["ci"]) if fields["ci"] is not None else None
    return Entry(**fields)


def _chapter_text(ref: tuple[int, int, str | None] | None) -> str:
    if ref is None:
        return "–"
    wins, losses, p = ref
    return f"+{wins}/\N{MINUS SIGN}{losses}" + (f", p = {p}" if p else "")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


__all__ = [
    "CONFIRMATORY",
    "EXPLORATORY",
    "MARGIN",
    "Direction",
    "Entry",
    "Ledger",
    "PairedClaim",
    "count_entry",
    "fixed_entry",
    "judge",
    "judge_value",
    "paired_entries",
    "value_entry",
]
