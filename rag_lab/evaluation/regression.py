"""The regression gate: a new report against a stored one, question by question.

The gate fails (:attr:`Comparison.failed`) on any of three rules, each named in its
report: **lost answers**, more questions than ``allow_lost`` (default 0) that the baseline
found within one of the ks and the new run does not (:mod:`rag_lab.evaluation.lost`);
**missing questions**, a question of the baseline the new run did not ask, unless
``allow_missing``; **metrics**, a headline metric regressed by the test below. The first two
need no statistics: a loss too small for a test over a few questions still fails.

Both reports hold a :class:`~rag_lab.evaluation.deploy.Deployment` (per query: its question,
first-hit rank, the chunk it gets first, that chunk's distance) and the run's stamps. For
each headline metric (Recall@k at the report's ks, MRR, destroyed answers, and, when both
runs have negatives, bluffs and refusals at the cutoff) :func:`compare` gives the paired
difference new − baseline by question (:func:`rag_lab.stats.paired_difference`), its
interval widened to 1 − α/m over the m metrics, beside the questions better, worse and
tied, and judges the claim "the new run is worse" (:data:`NEW_RUN_WORSE`) by the one rule
(:func:`rag_lab.claims.judge.judge`): a metric **regressed** when that claim reproduces, or
when the estimate is worse by more than a ``max_drop`` the user sets; **improved** when it
is contradicted; otherwise no significant change (never "no change": the detectable
difference is given).

The metrics pair only the units both runs hold, and the comparison says so. The queries
whose first hit crossed a k are listed with the chunk each now gets first. A baseline is read
and checked before any work by :mod:`rag_lab.evaluation.baseline_file`;
:mod:`rag_lab.evaluation.gate_report` renders the result as Markdown, JSON and JUnit XML.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from rag_lab import stats
from rag_lab.claims import claim
from rag_lab.claims.judge import PairedRecord, judge
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.baseline_file import REPORT_MAX_BYTES as REPORT_MAX_BYTES
from rag_lab.evaluation.baseline_file import BaselineError, require_kind
from rag_lab.evaluation.baseline_file import read_report as read_report
from rag_lab.evaluation.deploy import STAMP_FIELDS
from rag_lab.evaluation.lost import (
    Flip,
    Lost,
    Missing,
    asked_anew,
    flips,
    hit,
    lost_questions,
    missing_questions,
)
from rag_lab.stats import (
    Difference,
    Paired,
    cluster_paired,
    cluster_paired_values,
    paired_difference,
    paired_mean_difference,
)

REGRESSED, IMPROVED, UNCHANGED = "regressed", "improved", "no significant change"
WEIGHED = "weighed in the cost"
"""The outcome of bluffs and refusals under ``--bluff-cost``: the cost decides."""
LOST, MISSING, METRICS = "lost answers", "missing questions", "metrics"
"""The gate's three rules, as :attr:`Comparison.failures` names them."""

NEW_RUN_WORSE = {
    True: claim("new-run-worse:higher-is-better"),
    False: claim("new-run-worse:lower-is-better"),
}
"""The gate's claim about a user's run, per kind of metric (higher is better, or lower),
declared in ``chapter.yaml`` beside the chapter's: never in the ledger, judged by the same
rule, the compared metrics one family."""


# --- the comparison ------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """One headline metric, baseline against new on the units both runs hold."""

    name: str
    higher_is_better: bool
    baseline: float
    new: float
    difference: Difference
    """new − baseline, by question."""
    test: Paired
    """Wins: units where the new run's value is higher."""
    p_adjusted: float
    verdict: Verdict
    """Of the claim "the new run is worse" (:data:`NEW_RUN_WORSE`)."""
    detectable: float | None
    max_drop: float | None = None
    units: str = "questions"
    gates: bool = True
    """False: weighed in the cost (``--bluff-cost``), never failing the gate by itself."""

    @property
    def worsening(self) -> float:
        """How much worse the new run is, on the metric's scale (negative: better)."""
        d = self.difference.estimate
        return -d if self.higher_is_better else d

    @property
    def beyond_max_drop(self) -> bool:
        return self.max_drop is not None and self.worsening > self.max_drop

    @property
    def outcome(self) -> str:
        if not self.gates:
            return WEIGHED
        if self.verdict is Verdict.REPRODUCES or self.beyond_max_drop:
            return REGRESSED
        if self.verdict is Verdict.CONTRADICTED:
            return IMPROVED
        return UNCHANGED

    @property
    def reason(self) -> str:
        """Why the outcome, in one sentence."""
        t = self.test
        up, down = (t.wins, t.losses) if self.higher_is_better else (t.losses, t.wins)
        counts = f"{up} {self.units} better, {down} worse, {t.ties} tied"
        if self.verdict is Verdict.REPRODUCES:
            why = f"significantly worse (t by question, adjusted p = {self.p_adjusted:#.2g})"
        elif self.verdict is Verdict.CONTRADICTED:
            why = f"significantly better (adjusted p = {self.p_adjusted:#.2g})"
        else:
            why = f"no significant difference (adjusted p = {self.p_adjusted:#.2g}"
            why += f"; detects {self.detectable_text})" if self.detectable is not None else ")"
        if self.beyond_max_drop:
            why += f"; worse by {self.worsening:.3f}, beyond --max-drop {self.max_drop:g}"
        return f"{why}: {counts}"

    @property
    def detectable_text(self) -> str:
        """The smallest difference the test detects with 80 % power at its level, as the
        Markdown, the JUnit and the terminal show it (``–`` when the verdict needs none)."""
        return "–" if self.detectable is None else f"±{self.detectable:.3f}"

    def to_json(self) -> dict[str, Any]:
        d = self.difference
        return {
            "metric": self.name,
            "higher is better": self.higher_is_better,
            "baseline": self.baseline,
            "new": self.new,
            "difference": d.estimate,
            "ci": [d.lo, d.hi],
            "ci level": d.level,
            "wins": self.test.wins,
            "losses": self.test.losses,
            "ties": self.test.ties,
            "units": self.units,
            "p": d.p,
            "p adjusted": self.p_adjusted,
            "verdict of 'the new run is worse'": self.verdict.value,
            "detectable": self.detectable,
            "max drop": self.max_drop,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class Comparison:
    """A new run against a baseline: lost answers, missing questions, metrics, flips, what
    changed, what was paired, and what the user allowed."""

    baseline_path: str
    metrics: tuple[Metric, ...]
    flips: tuple[Flip, ...]
    changes: tuple[tuple[str, str, str], ...]
    """(stamp, baseline, new) for every stamp that differs."""
    questions: tuple[int, int, int]
    """Questions in common, only in the baseline, only in the new run."""
    same_questions_file: bool
    max_drop: float | None = None
    not_compared: tuple[str, ...] = ()
    """Metrics one run measured and the other did not, each with why."""
    lost: tuple[Lost, ...] = ()
    missing: tuple[Missing, ...] = ()
    allow_lost: int = 0
    """How many lost questions pass the gate (``--allow-lost``)."""
    allow_missing: bool = False
    stamped: tuple[str, ...] = ()
    """Every stamp compared (either report's), in the order :attr:`changes` lists them."""
    bluff_cost: float | None = None
    """Refusals one bluff is worth (``--bluff-cost``): bluffs and refusals are then weighed as
    one cost, and only the cost can fail the gate."""

    @property
    def regressed(self) -> list[Metric]:
        return [m for m in self.metrics if m.outcome == REGRESSED]

    @property
    def failures(self) -> list[str]:
        """The rules that failed (:data:`LOST`, :data:`MISSING`, :data:`METRICS`), in order."""
        return [
            rule
            for rule, failed in (
                (LOST, len(self.lost) > self.allow_lost),
                (MISSING, bool(self.missing) and not self.allow_missing),
                (METRICS, bool(self.regressed)),
            )
            if failed
        ]

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def coverage(self) -> str:
        """Which questions were paired, said plainly."""
        common, old_only, new_only = self.questions
        if self.same_questions_file:
            return f"The same question file: all {common} questions paired."
        return (
            f"The question files differ: compared on the {common} questions both hold only "
            f"({old_only} only in the baseline, {new_only} only in the new run are left out)."
        )


def compare(
    baseline: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    max_drop: float | None = None,
    baseline_path: str = "baseline",
    allow_lost: int = 0,
    allow_missing: bool = False,
    bluff_cost: float | None = None,
) -> Comparison:
    """``new`` against ``baseline`` (two report dicts, :func:`read_report`'s checks passed);
    ``allow_lost`` questions may be lost, and with ``allow_missing`` questions may be missing,
    without failing the gate; ``bluff_cost``: how many refusals one bluff is worth, to weigh
    the two as one cost (only when both runs have negatives)."""
    require_kind(baseline, new.get("kind"), baseline_path)
    old_d, new_d = baseline["deployment"], new["deployment"]
    old_q = {q["id"]: q for q in old_d["queries"]}
    anew = asked_anew(old_d, new_d)  # the same id, another question: not a pair
    common_q = [q for q in new_d["queries"] if q["id"] in old_q and q["id"] not in anew]
    if not common_q:
        raise BaselineError(baseline_path, "shares no query id with this run: nothing to pair")
    pairs = [(old_q[q["id"]], q) for q in common_q]
    ks = [k for k in new_d["ks"] if k in old_d["ks"]]
    measured, not_compared = _measure(old_d, new_d, pairs, ks, bluff_cost)
    metrics, flipped = tuple(_judge_all(measured, max_drop)), tuple(flips(pairs, ks))
    changes = tuple(_changes(baseline["stamps"], new["stamps"]))
    old_qs, new_qs = set(old_d["questions"]), set(new_d["questions"])
    questions = (len(old_qs & new_qs), len(old_qs - new_qs), len(new_qs - old_qs))
    same_file = baseline["stamps"].get("questions sha256") == new["stamps"].get("questions sha256")
    return Comparison(
        baseline_path,
        metrics,
        flipped,
        changes,
        questions,
        same_file,
        max_drop,
        tuple(not_compared),
        lost_questions(flipped),
        missing_questions(old_d, new_d),
        allow_lost,
        allow_missing,
        tuple(dict.fromkeys(_stamp_keys(baseline["stamps"], new["stamps"]))),
        bluff_cost,
    )


class Measured(NamedTuple):
    """One metric's values per unit in both runs, before any test."""

    name: str
    higher_is_better: bool
    baseline: Sequence[float]
    new: Sequence[float]
    clusters: Sequence[Hashable]
    units: str
    gates: bool = True
    """False: shown, and weighed in the cost instead of failing the gate itself."""
    scale: float = 1.0
    """The largest value a unit can take: the test runs on values over it (in [0, 1])."""
    shown: tuple[float, float] | None = None
    """Both runs' values as shown, when not the mean over units (a cost, per question)."""


def _measure(
    old_d: Mapping[str, Any],
    new_d: Mapping[str, Any],
    pairs: Sequence[tuple[Mapping, Mapping]],
    ks: Sequence[int],
    bluff_cost: float | None = None,
) -> tuple[list[Measured], list[str]]:
    """Each headline metric's values per unit in both runs, and the metrics not compared;
    with ``bluff_cost``, bluffs and refusals weighed as one cost (:func:`_cost`)."""
    clusters = [n["question"] for _, n in pairs]
    old_ranks, new_ranks = [o["rank"] for o, _ in pairs], [n["rank"] for _, n in pairs]
    measured: list[Measured] = []
    for k in ks:
        hits = [hit(r, k) for r in old_ranks], [hit(r, k) for r in new_ranks]
        measured.append(Measured(f"R@{k}", True, *hits, clusters, "questions"))
    rr = [_rr(r) for r in old_ranks], [_rr(r) for r in new_ranks]
    measured.append(Measured("MRR", True, *rr, clusters, "questions"))
    questions = [q for q in new_d["questions"] if q in set(old_d["questions"])]
    lost = [[q in d for q in questions] for d in (set(old_d["destroyed"]), set(new_d["destroyed"]))]
    measured.append(Measured("destroyed answers", False, *lost, questions, "questions"))
    cut_old, cut_new = float(old_d["cutoff"]), float(new_d["cutoff"])
    at = f"{cut_new:.3f}" if cut_old == cut_new else f"{cut_old:.3f} → {cut_new:.3f}"
    not_compared = [
        f"R@{k}: measured only in the {'new run' if k in new_d['ks'] else 'baseline'}"
        for k in dict.fromkeys([*old_d["ks"], *new_d["ks"]])
        if k not in ks
    ]
    if bool(old_d.get("negatives")) != bool(new_d.get("negatives")):
        lacking = "baseline" if not old_d.get("negatives") else "new run"
        not_compared.append(f"bluffs and refusals: the {lacking} has no negatives")
    if old_d.get("negatives") and new_d.get("negatives"):
        old_n = {n["id"]: n["nearest"] for n in old_d["negatives"]}
        negs = [n for n in new_d["negatives"] if n["id"] in old_n]
        gates = bluff_cost is None
        bluffs = (
            [old_n[n["id"]] < cut_old for n in negs],
            [n["nearest"] < cut_new for n in negs],
        )
        if negs:
            ids = [n["id"] for n in negs]
            measured.append(Measured(f"bluffs at {at}", False, *bluffs, ids, "negatives", gates))
        refused = (
            [o["nearest"] >= cut_old for o, _ in pairs],
            [n["nearest"] >= cut_new for _, n in pairs],
        )
        name = f"refusals at {at}"
        measured.append(Measured(name, False, *refused, clusters, "questions", gates))
        if bluff_cost is not None:
            negatives = [("negative", n["id"]) for n in negs]
            measured.append(_cost(bluff_cost, at, bluffs, refused, negatives, clusters))
    return measured, not_compared


def _cost(
    bluff_cost: float,
    at: str,
    bluffs: tuple[Sequence[bool], Sequence[bool]],
    refused: tuple[Sequence[bool], Sequence[bool]],
    negatives: Sequence[Hashable],
    clusters: Sequence[Hashable],
) -> Measured:
    """Bluffs and refusals as one cost per unit: ``bluff_cost`` for a negative answered, the
    share of its queries refused for a question; its mean over the negatives and questions
    is the cost per question asked, which the gate tests as it tests a rate (on the cost
    over its largest value, so that it lies in [0, 1])."""
    per_unit = [
        [bluff_cost * b for b in bluffed] + [float(r) for r in refusals]
        for bluffed, refusals in zip(bluffs, refused, strict=True)
    ]
    units = [*negatives, *clusters]
    shown = tuple(float(stats.per_question(np.array(v), units).mean()) for v in per_unit)
    name = f"cost at {at} (a bluff = {bluff_cost:g} refusals)"
    scale = max(bluff_cost, 1.0)
    return Measured(name, False, *per_unit, units, "questions and negatives", True, scale, shown)


def _judge_all(measured: Sequence[Measured], max_drop: float | None) -> list[Metric]:
    """Each metric's difference and test, the metrics one family, the ledger's rule."""
    family = sum(m.gates for m in measured)  # what is only weighed in a cost is not tested
    out = []
    for m in measured:
        old = np.array(m.baseline, dtype=float) / m.scale
        new = np.array(m.new, dtype=float) / m.scale
        if np.isin(old, (0.0, 1.0)).all() and np.isin(new, (0.0, 1.0)).all():
            new_b, old_b = new.astype(bool), old.astype(bool)
            d = paired_difference(new_b, old_b, m.clusters)
            t = cluster_paired(new_b, old_b, m.clusters)
        else:
            d = paired_mean_difference(new, old, m.clusters)
            t = cluster_paired_values(new, old, m.clusters)
        j = judge(NEW_RUN_WORSE[m.higher_is_better], PairedRecord(d, t, family))
        judged = _scaled(d.at(j.level), m.scale)  # the interval the verdict was read from
        shown = m.shown or (float(old.mean()) * m.scale, float(new.mean()) * m.scale)
        detectable = None if j.detectable is None else j.detectable * m.scale
        out.append(
            Metric(m.name, m.higher_is_better, *shown, judged, t, j.p_adjusted, j.verdict,
                   detectable, max_drop if m.scale == 1 else None, m.units, m.gates)
        )  # fmt: skip
    return out


def _scaled(d: Difference, scale: float) -> Difference:
    """``d``, tested on values over ``scale``, back on the metric's own scale."""
    if scale == 1:
        return d
    return dataclasses.replace(
        d, estimate=d.estimate * scale, lo=d.lo * scale, hi=d.hi * scale, se=d.se * scale,
        centre=d.centre * scale,
    )  # fmt: skip


def _rr(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / rank


def _stamp_keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Every stamp of either report, :data:`STAMP_FIELDS` first."""
    return [*STAMP_FIELDS, *(k for k in (*old, *new) if k not in STAMP_FIELDS)]


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (k, _stamp_text(old.get(k)), _stamp_text(new.get(k)))
        for k in dict.fromkeys(_stamp_keys(old, new))
        if old.get(k) != new.get(k)
    ]


def _stamp_text(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, str) and len(value) == 64:
        return value[:12]  # a sha256: its first 12 hex digits tell two apart
    return str(value)
