"""The one rule: a declared :class:`~rag_lab.claims.Claim` and a record of numbers give a
:class:`~rag_lab.claims.verdicts.Verdict`. No other code decides a verdict.

A paired claim (a against b, by question) is decided by one interval, the one its test
inverts: the paired difference's t interval over questions
(:meth:`rag_lab.stats.Difference.at`) at ``1 − α/m`` in a confirmatory family of ``m``
claims (Bonferroni: the interval excludes 0 exactly when the adjusted p is below α), at
``1 − α`` for an exploratory one. That interval is what the entry shows. By direction:

- **better / worse**: *reproduces* when the interval lies wholly on the claimed side of 0;
  *contradicted* when wholly on the other; *excludes the chapter's effect* when it excludes
  the chapter's effect and that effect is one the comparison could reach (a − b cannot
  exceed ``1 − b`` nor fall below ``−b``). Where a ceiling makes the chapter's effect
  unreachable the ceiling, not the data, would decide: if the file declares the chapter's
  baseline, both effects are read as shares of their headroom (``effect / (1 − b)``, or
  ``/ b`` for a loss) and the chapter's share outside ours *excludes* it; otherwise the
  verdict is inconclusive;
  otherwise *inconclusive*, with the smallest difference the design detects with 80 %
  power at the interval's level;
- **no difference**: *reproduces* when the whole interval lies within ± the claim's margin
  (equivalence at a margin declared before the results, independent of the chapter's
  effects), and the entry says whether the difference is also significant; *contradicted*
  when the interval excludes 0 and leaves the margin; otherwise *inconclusive*;
- a paired comparison in which every question's difference is 0 has *no variation*: it
  cannot speak, and it is no reproduction;
- **better / worse** on an interval alone (two independent groups of questions, where no
  paired test exists): *reproduces* when the interval lies wholly on the claimed side of
  0, *contradicted* when wholly on the other, *excludes the chapter's effect* when it
  excludes the chapter's effect, else inconclusive;
- **at least** (a ratio above the chapter's bound, on its interval): *reproduces* when the
  interval lies above the bound, *contradicted* when below it, else inconclusive;
- **value** (a rate the chapter reports): *reproduces* when our interval lies within ± the
  margin of the chapter's value, *excludes the chapter's effect* when it excludes the value,
  else inconclusive;
- **count** (exact, a property of the corpus or the run): *reproduces* when the claim's rule
  holds, else *contradicted*;
- a claim whose stand-in changes the task (``not_testable_as_stated``) is *not testable
  here*, whatever its numbers; a verdict no number decides (*by construction*, *not testable
  here*, *not measured*) comes with its reason; a *by construction* claim the run checks is
  *contradicted* when the check fails.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from rag_lab.claims import CONFIRMATORY, Claim, Direction, chapter_questions
from rag_lab.claims.verdicts import Verdict
from rag_lab.stats import ALPHA, Difference, Paired

POWER = 0.8


@dataclass(frozen=True)
class PairedRecord:
    """A paired comparison by question: the difference (its interval at 95 %), the
    question-level wins and losses, the size of the claim's confirmatory family, and the
    range ``a − b`` can take given b's recall (``(−b, 1 − b)``)."""

    difference: Difference
    test: Paired
    family_size: int = 1
    headroom: tuple[float, float] = (-1.0, 1.0)


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
    the effect an inconclusive design could detect; for a paired claim the interval that
    decided it, its level, the test's p and its family-adjusted p, whether the difference is
    significant, and the reachable limit when a ceiling kept the chapter's effect out of
    reach."""

    verdict: Verdict
    margin: float | None = None
    detectable: float | None = None
    interval: tuple[float, float] | None = None
    level: float | None = None
    p: float | None = None
    p_adjusted: float | None = None
    significant: bool | None = None
    ceiling: float | None = None
    chapter_power: float | None = None
    """For a chapter claim with an effect: the power a study of the chapter's size (its
    questions) had to detect the difference we measure, at α, two-sided."""
    prediction: tuple[float, float] | None = None
    """The 95 % interval in which a replication of the chapter's size should find its
    estimate, given ours; the chapter's effect outside it is evidence against it."""
    share: tuple[float, float] | None = None
    """When a ceiling kept the chapter's effect out of reach and the file declares the
    chapter's baseline: our interval as a share of our headroom (``interval / (1 − b)``)."""
    chapter_share: float | None = None
    """The chapter's effect as a share of its own headroom (``effect / (1 − its b)``)."""


def judge(claim: Claim, record: Record) -> Judgement:
    """The verdict on ``claim`` of ``record`` by the module's rule."""
    if isinstance(record, FixedRecord):
        return _fixed(record)
    if claim.not_as_stated:
        return Judgement(Verdict.NOT_TESTABLE, claim.margin)
    d = claim.direction
    if isinstance(record, CountRecord):
        _expect(claim, d is Direction.COUNT, "a count")
        return Judgement(Verdict.REPRODUCES if record.holds else Verdict.CONTRADICTED)
    if isinstance(record, ValueRecord):
        _expect(claim, d is Direction.VALUE and claim.chapter_effect is not None, "a value")
        return _value(claim.chapter_effect, record.interval, claim.margin)
    if isinstance(record, IntervalRecord) and d is Direction.AT_LEAST:
        _expect(claim, claim.chapter_effect is not None, "a bounded")
        return _at_least(claim.chapter_effect, record.interval)
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
    return Judgement(Verdict.INCONCLUSIVE, detectable=_detectable(r.interval))


def _paired(claim: Claim, r: PairedRecord) -> Judgement:
    confirmatory = claim.family == CONFIRMATORY
    m = r.family_size if confirmatory else 1
    d = r.difference.at(1 - ALPHA / m)
    shown = {
        "interval": (d.lo, d.hi),
        "level": d.level,
        "p": r.difference.p,
        "p_adjusted": min(1.0, r.difference.p * m) if confirmatory else None,
    }
    if claim.role == "chapter" and claim.chapter_effect is not None:
        shown |= _replication(r.difference)
    if r.test.wins == 0 and r.test.losses == 0:
        return Judgement(Verdict.NO_VARIATION, claim.margin, **shown)
    side = 1 if d.lo > 0 else -1 if d.hi < 0 else 0
    detectable = d.detectable(ALPHA / m, POWER)
    if claim.direction is Direction.SAME:
        if d.within(claim.margin):
            return Judgement(Verdict.REPRODUCES, claim.margin, significant=side != 0, **shown)
        verdict = Verdict.CONTRADICTED if side else Verdict.INCONCLUSIVE
        return Judgement(verdict, claim.margin, detectable if not side else None, **shown)
    claimed = 1 if claim.direction is Direction.BETTER else -1
    if side:
        verdict = Verdict.REPRODUCES if side == claimed else Verdict.CONTRADICTED
        return Judgement(verdict, significant=True, **shown)
    effect = claim.chapter_effect
    if effect is None or not d.excludes(effect):
        return Judgement(Verdict.INCONCLUSIVE, None, detectable, significant=False, **shown)
    lo, hi = r.headroom
    if lo <= effect <= hi:
        return Judgement(Verdict.EXCLUDES_CHAPTER_EFFECT, significant=False, **shown)
    reach = hi if effect > hi else lo
    if claim.chapter_baseline is None:
        return Judgement(
            Verdict.INCONCLUSIVE, None, detectable, significant=False, ceiling=reach, **shown
        )
    # Out of reach on the raw scale: both effects as shares of what b leaves (to gain, or
    # to lose), where no baseline caps either.
    room = abs(reach)
    chapter = effect / (1 - claim.chapter_baseline if effect > 0 else claim.chapter_baseline)
    share = (d.lo / room, d.hi / room)
    verdict = (
        Verdict.INCONCLUSIVE if share[0] <= chapter <= share[1] else Verdict.EXCLUDES_CHAPTER_EFFECT
    )
    return Judgement(
        verdict,
        None,
        detectable if verdict is Verdict.INCONCLUSIVE else None,
        significant=False,
        ceiling=reach,
        share=share,
        chapter_share=chapter,
        **shown,
    )


def _replication(d: Difference) -> dict[str, object]:
    """Replication statistics against a study of the chapter's size: its standard error is
    ours scaled by the square root of the ratio of questions; the prediction interval for its
    estimate is ours widened by both errors (Spence & Stanley 2016), and its power is the
    non-central t's at our difference (Simonsohn 2015 reads the same quantity as the
    original's "telescope")."""
    from scipy import stats

    se = d.se * (d.clusters / chapter_questions()) ** 0.5
    df = chapter_questions() + 1  # as our design: the questions and two pseudo-questions
    half = float(stats.t.ppf(0.975, d.df)) * (d.se**2 + se**2) ** 0.5
    crit, nc = float(stats.t.ppf(1 - ALPHA / 2, df)), d.centre / se
    power = float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))
    return {"chapter_power": power, "prediction": (d.centre - half, d.centre + half)}


def _at_least(bound: float, interval: tuple[float, float]) -> Judgement:
    lo, hi = interval
    if lo > bound or hi < bound:
        return Judgement(Verdict.REPRODUCES if lo > bound else Verdict.CONTRADICTED)
    return Judgement(Verdict.INCONCLUSIVE, detectable=_detectable(interval))


def _value(reference: float, interval: tuple[float, float], margin: float) -> Judgement:
    lo, hi = interval
    if reference - margin <= lo and hi <= reference + margin:
        return Judgement(Verdict.REPRODUCES, margin)
    if not lo <= reference <= hi:
        return Judgement(Verdict.EXCLUDES_CHAPTER_EFFECT, margin)
    return Judgement(Verdict.INCONCLUSIVE, margin, _detectable(interval))


def _detectable(interval: tuple[float, float]) -> float:
    """For an interval without a paired design: the smallest difference it would detect with
    :data:`POWER` at α, reading its half-width as ``z(1 − α/2)`` standard errors (normal)."""
    from scipy.stats import norm

    z = float(norm.ppf(1 - ALPHA / 2))
    return (interval[1] - interval[0]) / 2 / z * (z + float(norm.ppf(POWER)))


def _fixed(r: FixedRecord) -> Judgement:
    if r.verdict not in (Verdict.BY_CONSTRUCTION, Verdict.NOT_TESTABLE, Verdict.NOT_MEASURED):
        raise ValueError(f"{r.verdict} is decided by numbers, not fixed")
    if not r.reason:
        raise ValueError("a verdict that numbers do not decide needs its reason")
    if r.verdict is Verdict.BY_CONSTRUCTION and not r.holds:
        return Judgement(Verdict.CONTRADICTED)  # the code does not do what it is built to
    return Judgement(r.verdict)


# --- one claim under several encoders -------------------------------------------------------


class Generality(enum.Enum):
    """Whether a claim's verdict on one benchmark belongs to the recipe or to one encoder."""

    GENERALISES = "generalises"
    MODEL_SPECIFIC = "model-specific"
    NEITHER = "neither"


DECIDED = (Verdict.REPRODUCES, Verdict.CONTRADICTED, Verdict.EXCLUDES_CHAPTER_EFFECT)
"""The verdicts that settle a claim one way or the other: only one of these, shared by every
encoder, generalises (an *inconclusive* under each says nothing about any of them)."""


@dataclass(frozen=True)
class Generalisation:
    """The rule's outcome: the verdict every encoder shares (generalises), or the one encoder
    under which the claim reproduces (model-specific)."""

    kind: Generality
    verdict: Verdict | None = None
    encoder: str | None = None


def generalisation(verdicts: Mapping[str, Verdict]) -> Generalisation:
    """One claim on one benchmark, its verdict under each encoder (name -> verdict, two or
    more), by the same rule under each:

    - **generalises** when every encoder gives the same verdict and it is one of
      :data:`DECIDED` (reproduces under each, contradicted under each, or excludes the
      chapter's effect under each);
    - **model-specific** when it reproduces under exactly one encoder (named) and every
      other's verdict was reached by a test (:attr:`Verdict.tested`) without reproducing:
      the claim holds for that model, not for the recipe; the other's verdict says whether
      it was refuted there or only not shown;
    - **neither** otherwise: the same undecided verdict under each (inconclusive), different
      verdicts none of which reproduces alone, or a verdict no test reached (not testable,
      not measured, no variation, by construction) under some encoder.
    """
    if len(verdicts) < 2:
        raise ValueError(f"a claim needs two encoders or more to generalise, not {len(verdicts)}")
    shared = set(verdicts.values())
    if len(shared) == 1 and (verdict := shared.pop()) in DECIDED:
        return Generalisation(Generality.GENERALISES, verdict=verdict)
    holds = [name for name, v in verdicts.items() if v.agrees]
    if len(holds) == 1 and all(v.tested for v in verdicts.values()):
        return Generalisation(Generality.MODEL_SPECIFIC, encoder=holds[0])
    return Generalisation(Generality.NEITHER)


def _expect(claim: Claim, ok: bool, kind: str) -> None:
    if not ok:
        raise ValueError(f"claim {claim.id!r} ({claim.direction.value}) is not {kind} claim")


__all__ = [
    "DECIDED",
    "CountRecord",
    "FixedRecord",
    "Generalisation",
    "Generality",
    "IntervalRecord",
    "Judgement",
    "PairedRecord",
    "Record",
    "ValueRecord",
    "generalisation",
    "judge",
]
