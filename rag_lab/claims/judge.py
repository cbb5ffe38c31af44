"""The one rule: a declared :class:`~rag_lab.claims.Claim` and a record of numbers give a
:class:`~rag_lab.claims.verdicts.Verdict`. No other code decides a verdict.

By the claim's direction:

- **better / worse** (paired, by question): *reproduces* when the question-level sign test,
  Holm-adjusted over the claim's confirmatory family (raw when exploratory), is significant
  in the claimed direction; *contradicted* when significant the other way; *excludes the
  chapter's effect* when not significant but the difference's interval excludes the
  chapter's effect; otherwise *inconclusive*, with the smallest difference the design
  detects with 80 % power at the family's level;
- **no difference** (paired): *reproduces* when the whole interval lies within ± the
  claim's margin (equivalence, decided first); otherwise *contradicted* when the test is
  significant, else inconclusive;
- **better / worse** on an interval alone (two independent groups of questions, where no
  paired sign test exists): *reproduces* when the interval lies wholly on the claimed side of
  0, *contradicted* when wholly on the other, *excludes the chapter's effect* when it
  excludes the chapter's effect, else inconclusive;
- **value** (a rate the chapter reports): *reproduces* when our interval lies within ± the
  margin of the chapter's value, *excludes the chapter's effect* when it excludes the value,
  else inconclusive;
- **count** (exact, a property of the corpus or the run): *reproduces* when the claim's rule
  holds, else *contradicted*;
- a verdict no number decides (*by construction*, *not testable here*, *not measured*)
  comes with its reason; a *by construction* claim the run checks is *contradicted* when
  the check fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_lab.claims import CONFIRMATORY, Claim, Direction
from rag_lab.claims.verdicts import Verdict
from rag_lab.stats import ALPHA, Difference, Paired

POWER = 0.8


@dataclass(frozen=True)
class PairedRecord:
    """A paired comparison by question: the difference with its interval, the sign test,
    and the p adjusted over the family (``None`` when the claim is exploratory)."""

    difference: Difference
    test: Paired
    p_adjusted: float | None = None
    family_size: int = 1


@dataclass(frozen=True)
class ValueRecord:
    """A rate and its 95 % interval (``method`` names the interval)."""

    estimate: float
    interval: tuple[float, float]
    method: str


@dataclass(frozen=True)
class IntervalRecord:
    """A difference with its 95 % interval and no paired test (``method`` names the
    interval): the verdict is read from the interval itself."""

    estimate: float
    interval: tuple[float, float]
    method: str


@dataclass(frozen=True)
class CountRecord:
    """Whether the claim's declared rule holds on the exact counts."""

    holds: bool


@dataclass(frozen=True)
class FixedRecord:
    """A verdict no number decides, with its reason; ``holds`` is False when the run's check
    of a by-construction claim failed."""

    verdict: Verdict
    reason: str
    holds: bool = True


Record = PairedRecord | IntervalRecord | ValueRecord | CountRecord | FixedRecord


@dataclass(frozen=True)
class Judgement:
    """The verdict and what qualifies it: the margin an equivalence or value was judged at,
    the effect an inconclusive design could detect."""

    verdict: Verdict
    margin: float | None = None
    detectable: float | None = None


def judge(claim: Claim, record: Record) -> Judgement:
    """The verdict on ``claim`` of ``record`` by the module's rule."""
    if isinstance(record, FixedRecord):
        return _fixed(record)
    d = claim.direction
    if isinstance(record, CountRecord):
        _expect(claim, d is Direction.COUNT, "a count")
        return Judgement(Verdict.REPRODUCES if record.holds else Verdict.CONTRADICTED)
    if isinstance(record, ValueRecord):
        _expect(claim, d is Direction.VALUE and claim.chapter_effect is not None, "a value")
        return _value(claim.chapter_effect, record.interval, claim.margin)
    if isinstance(record, IntervalRecord):
        _expect(claim, d in (Direction.BETTER, Direction.WORSE), "a directional")
        return _interval(claim, record)
    _expect(claim, d in (Direction.BETTER, Direction.WORSE, Direction.SAME), "a paired")
    return _paired(claim, record)


def _interval(claim: Claim, r: IntervalRecord) -> Judgement:
    lo, hi = r.interval
    claimed = 1 if claim.direction is Direction.BETTER else -1
    if lo > 0 or hi < 0:
        side = 1 if lo > 0 else -1
        return Judgement(Verdict.REPRODUCES if side == claimed else Verdict.CONTRADICTED)
    effect = claim.chapter_effect
    if effect is not None and not lo <= effect <= hi:
        return Judgement(Verdict.EXCLUDES_CHAPTER_EFFECT)
    return Judgement(Verdict.INCONCLUSIVE)


def _paired(claim: Claim, r: PairedRecord) -> Judgement:
    diff, test = r.difference, r.test
    p = r.p_adjusted if r.p_adjusted is not None else test.p
    significant = p < ALPHA and test.wins != test.losses
    sign = 1 if test.wins > test.losses else -1
    if claim.direction is Direction.SAME:
        # Equivalence first (two one-sided tests at the interval's level): a difference the
        # test can see but the whole interval keeps inside the margin is no difference that
        # matters, which is what the claim says.
        if diff.within(claim.margin):
            return Judgement(Verdict.REPRODUCES, claim.margin)
        verdict = Verdict.CONTRADICTED if significant else Verdict.INCONCLUSIVE
        return Judgement(verdict, claim.margin)
    claimed = 1 if claim.direction is Direction.BETTER else -1
    if significant:
        return Judgement(Verdict.REPRODUCES if sign == claimed else Verdict.CONTRADICTED)
    effect = claim.chapter_effect
    if effect is not None and diff.excludes(effect):
        return Judgement(Verdict.EXCLUDES_CHAPTER_EFFECT)
    size = r.family_size if claim.family == CONFIRMATORY else 1
    return Judgement(Verdict.INCONCLUSIVE, detectable=diff.detectable(ALPHA / size, POWER))


def _value(reference: float, interval: tuple[float, float], margin: float) -> Judgement:
    lo, hi = interval
    if reference - margin <= lo and hi <= reference + margin:
        return Judgement(Verdict.REPRODUCES, margin)
    if not lo <= reference <= hi:
        return Judgement(Verdict.EXCLUDES_CHAPTER_EFFECT, margin)
    return Judgement(Verdict.INCONCLUSIVE, margin)


def _fixed(r: FixedRecord) -> Judgement:
    if r.verdict not in (Verdict.BY_CONSTRUCTION, Verdict.NOT_TESTABLE, Verdict.NOT_MEASURED):
        raise ValueError(f"{r.verdict} is decided by numbers, not fixed")
    if not r.reason:
        raise ValueError("a verdict that numbers do not decide needs its reason")
    if r.verdict is Verdict.BY_CONSTRUCTION and not r.holds:
        return Judgement(Verdict.CONTRADICTED)  # the code does not do what it is built to
    return Judgement(r.verdict)


def _expect(claim: Claim, ok: bool, kind: str) -> None:
    if not ok:
        raise ValueError(f"claim {claim.id!r} ({claim.direction.value}) is not {kind} claim")


__all__ = [
    "CountRecord",
    "FixedRecord",
    "IntervalRecord",
    "Judgement",
    "PairedRecord",
    "Record",
    "ValueRecord",
    "judge",
]
