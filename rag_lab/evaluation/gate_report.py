"""The regression gate's comparison rendered: Markdown, JSON and JUnit XML files.

:func:`markdown` reads a :class:`~rag_lab.evaluation.regression.Comparison`'s fields: what
failed first (each lost question with what the run returns first instead, each missing
question, each regressed metric), then what was paired, what changed, the metrics and the
flipped queries; :func:`to_json` holds the same; :func:`junit` writes one testsuite with a
testcase per metric, per lost and per missing question, a ``failure`` where the gate failed
on it (``skipped`` where the user allowed it), so a CI system shows the gate like a test
run (every text in it made fit for XML 1.0 by :func:`~rag_lab.text.xml_safe`); :func:`write`
puts the three files beside the report. A metric's interval and its detectable difference
are the :class:`~rag_lab.evaluation.regression.Metric`'s own fields, formatted once: the
three files show the same numbers.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rag_lab.evaluation.lost import Flip, Missing
from rag_lab.evaluation.regression import REGRESSED, Comparison, Metric
from rag_lab.evaluation.render import markdown_table
from rag_lab.evaluation.report import strict_json
from rag_lab.text import xml_safe


def rule(c: Comparison) -> str:
    """The gate's rule with this run's allowances, in one sentence."""
    missing = "is allowed (--allow-missing)" if c.allow_missing else "fails it"
    drop = f", or worse by more than --max-drop {c.max_drop:g}" if c.max_drop is not None else ""
    cost = (
        f" Bluffs and refusals are weighed as one cost, a bluff worth {c.bluff_cost:g} "
        "refusals (--bluff-cost): the cost is one of the m metrics, and they are not."
        if c.bluff_cost is not None
        else ""
    )
    return (
        f"The gate fails when more than {_questions(c.allow_lost)} (--allow-lost) have a query "
        "the baseline found within k that the new run does not find within k (at each k "
        f"both reports measure); a question of the baseline the new run did not ask {missing}; "
        "and, beside these, a metric fails it when it regressed: its interval at 1 − 0.05/m "
        f"over the m metrics lies wholly on the worse side{drop}.{cost}"
    )


def summary(c: Comparison) -> str:
    """The verdict in one line: the rules that failed, then each rule's count."""
    lost = f"{_questions(len(c.lost))} lost (allowed {c.allow_lost})"
    lost += f": {', '.join(q.question for q in c.lost)}" if c.lost else ""
    missing = f"{len(c.missing)} missing" + (" (allowed)" if c.allow_missing else "")
    missing += f": {', '.join(q.question for q in c.missing)}" if c.missing else ""
    bad = c.regressed
    metrics = (
        f"{', '.join(m.name for m in bad)} regressed"
        if bad
        else "no metric regressed (no significant worsening"
        + (f", none beyond --max-drop {c.max_drop:g}" if c.max_drop is not None else "")
        + "; not significant is not the same as no difference)"
    )
    verdict = f"REGRESSION ({', '.join(c.failures)})" if c.failed else "Passed"
    return f"{verdict}: {lost}; {missing}; {metrics}."


def to_json(c: Comparison) -> dict[str, Any]:
    """``regression.json``: the verdict and the rule that decided, then the comparison."""
    common, old_only, new_only = c.questions
    return {
        "baseline": c.baseline_path,
        "regressed": c.failed,
        "failed by": c.failures,
        "rule": rule(c),
        "allow lost": c.allow_lost,
        "allow missing": c.allow_missing,
        "summary": summary(c),
        "lost": [q.to_json() for q in c.lost],
        "missing": [q.to_json() for q in c.missing],
        "coverage": c.coverage,
        "questions": {"common": common, "baseline only": old_only, "new only": new_only},
        "same question file": c.same_questions_file,
        "max drop": c.max_drop,
        "bluff cost": c.bluff_cost,
        "stamps compared": list(c.stamped),
        "not compared": list(c.not_compared),
        "changes": [{"stamp": s, "baseline": a, "new": b} for s, a, b in c.changes],
        "metrics": [m.to_json() for m in c.metrics],
        "flips": [f.to_json() for f in c.flips],
    }


def metrics_frame(c: Comparison) -> pd.DataFrame:
    """One row a metric: both values, the difference with its interval, the counts, p, the
    difference the test detects, the outcome."""
    return pd.DataFrame(
        {
            "baseline": [f"{m.baseline:.3f}" for m in c.metrics],
            "new": [f"{m.new:.3f}" for m in c.metrics],
            f"new − baseline [{_level(c)} CI]": [str(m.difference) for m in c.metrics],
            "better/worse/tied": [_counts(m) for m in c.metrics],
            "p (adjusted)": [f"{m.p_adjusted:#.2g}" for m in c.metrics],
            "detects (80 % power)": [m.detectable_text for m in c.metrics],
            "outcome": [m.outcome for m in c.metrics],
        },
        index=pd.Index([m.name for m in c.metrics], name="metric"),
    )


def _questions(n: int) -> str:
    return f"{n} question" + ("" if n == 1 else "s")


def _level(c: Comparison) -> str:
    """The metrics' interval level (one family: the same for all), e.g. ``99.29 %``."""
    levels = {m.difference.level for m in c.metrics}
    return " / ".join(f"{100 * v:.4g} %" for v in sorted(levels))


def _counts(m: Metric) -> str:
    t = m.test
    up, down = (t.wins, t.losses) if m.higher_is_better else (t.losses, t.wins)
    return f"{up}/{down}/{t.ties}"


def markdown(c: Comparison) -> str:
    """The comparison as Markdown: the verdict and what failed, what was paired, what
    changed, the metrics, the flips."""
    lines = [
        "# rag_lab regression gate",
        "",
        f"Baseline: `{c.baseline_path}`. {summary(c)}",
        "",
        rule(c),
        "",
        "## What failed" if c.failed else "## Nothing failed",
        "",
        *_failed(c),
        c.coverage,
        *(f"Not compared: {n}." for n in c.not_compared),
        "",
        "## What changed",
        "",
    ]
    if c.changes:
        lines += [f"- {s}: {a} → {b}" for s, a, b in c.changes]
    else:
        lines += [f"Nothing in the stamps differs: {', '.join(c.stamped)}."]
    lines += [
        "",
        "## Metrics",
        "",
        "New minus baseline, paired by question; the interval is the t interval by question "
        "at 1 − 0.05/m over the m metrics compared, and p the test it inverts, adjusted the "
        "same way; questions better, worse and tied are counted beside it; a metric "
        "regressed when that interval lies wholly on the worse side (the ledger's rule)"
        + (f" or worse by more than --max-drop {c.max_drop:g}" if c.max_drop is not None else "")
        + ". Lower is better for destroyed answers, bluffs, refusals and their cost. "
        '"detects" is the smallest difference that test detects with 80 % power at that '
        "level with this "
        "comparison's spread (given where the verdict is inconclusive); report.md's \"how "
        'many questions you need" plans one comparison at 0.05 with the spread between '
        "chunkings, another figure.",
        "",
        markdown_table(metrics_frame(c)),
        "",
        "## Flipped queries",
        "",
    ]
    if not c.flips:
        lines += ["None: every query's first hit is on the same side of every k."]
    else:
        lost = sum(bool(f.lost) for f in c.flips)
        lines += [
            f"{lost} queries lost at some k, {len(c.flips) - lost} only gained.",
            "",
            markdown_table(_flips_frame(c.flips)),
        ]
    return "\n".join(lines) + "\n"


def _failed(c: Comparison) -> list[str]:
    """The section that opens the report: lost questions (each lost query with what the run
    returns first instead), missing questions, regressed metrics; allowed ones said so."""
    lines: list[str] = []
    if c.lost:
        allowed = len(c.lost) <= c.allow_lost
        state = f"allowed by --allow-lost {c.allow_lost}" if allowed else "the gate fails"
        flipped = [f for q in c.lost for f in q.queries]
        lines += [
            f"Lost answers: {_questions(len(c.lost))} ({state}), each query the baseline found "
            "within k and the new run does not, with the chunk the run returns first instead:",
            "",
            markdown_table(_flips_frame(flipped, lost_only=True)),
            "",
        ]
    if c.missing:
        state = "allowed by --allow-missing" if c.allow_missing else "the gate fails"
        lines += [f"Missing questions: {len(c.missing)} ({state}):", ""]
        lines += [f"- `{q.question}`: {missing_text(q)}" for q in c.missing]
        lines += [""]
    lines += [f"- {m.name} regressed: {m.reason}." for m in c.regressed]
    if not (c.lost or c.missing or c.regressed):
        lines += ["No question lost at any k, none missing, no metric regressed."]
    return [*lines, ""] if lines[-1] else lines


def _flips_frame(flips: Sequence[Flip], *, lost_only: bool = False) -> pd.DataFrame:
    columns = {
        "question": [f.question for f in flips],
        "rank before": [_rank(f.baseline_rank) for f in flips],
        "rank now": [_rank(f.new_rank) for f in flips],
        "found → lost": [_ks(f.lost) for f in flips],
        "lost → found": [_ks(f.found) for f in flips],
        "first chunk now": [f.top_chunk for f in flips],
        "first chunk before": [f.was_top_chunk for f in flips],
    }
    if lost_only:
        del columns["lost → found"]
    return pd.DataFrame(columns, index=pd.Index([f.query for f in flips], name="query"))


def missing_text(q: Missing) -> str:
    """Which of a missing question's queries the new run lacks, in words."""
    queries = ", ".join(q.queries)
    if q.changed:
        return f"asked anew: the same ids, another phrasing or answer ({queries})"
    if q.whole:
        return "asked by the baseline, not in the new run" + (f" ({queries})" if queries else "")
    return f"the new run asks it without {queries}"


def _rank(r: int | None) -> str:
    return "none" if r is None else str(r)


def _ks(ks: Sequence[int]) -> str:
    return ", ".join(f"R@{k}" for k in ks) or "–"


def junit(c: Comparison) -> str:
    """JUnit XML: one testsuite; a testcase a metric, a ``failure`` when it regressed; a
    testcase a lost question (named by its id and the ks) and a missing one, a ``failure``
    unless the user allowed it (then ``skipped``, saying by what)."""
    cases: list[tuple[str, str, str, str | None]] = []  # classname, name, text, failure type
    for m in c.metrics:
        text = f"{m.name}: {m.baseline:.3f} -> {m.new:.3f}, {m.difference} at {_level(c)}; "
        cases.append(("rag_lab.regression", m.name, text + m.reason, _fails(m)))
    lost_fails = "lost" if len(c.lost) > c.allow_lost else None
    for q in c.lost:
        text = "; ".join(lost_text(f) for f in q.queries)
        cases.append(("rag_lab.regression.lost", f"{q.question} at {_ks(q.ks)}", text, lost_fails))
    for q in c.missing:
        text = f"{q.question}: {missing_text(q)}"
        cases.append(
            ("rag_lab.regression.missing", q.question, text, None if c.allow_missing else "missing")
        )
    failures = sum(kind is not None for *_, kind in cases)
    skipped = len(c.lost) * (lost_fails is None) + len(c.missing) * c.allow_missing
    suite = ET.Element(
        "testsuite",
        name="rag-lab regression gate",
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="baseline", value=c.baseline_path)
    ET.SubElement(props, "property", name="rule", value=rule(c))
    ET.SubElement(props, "property", name="coverage", value=c.coverage)
    for stamp, a, b in c.changes:
        ET.SubElement(props, "property", name=f"changed: {stamp}", value=f"{a} -> {b}")
    for classname, name, text, kind in cases:
        case = ET.SubElement(suite, "testcase", classname=classname, name=name)
        if kind is not None:
            ET.SubElement(case, "failure", message=text, type=kind).text = text
        elif classname.endswith((".lost", ".missing")):
            allowed = "--allow-lost" if classname.endswith(".lost") else "--allow-missing"
            ET.SubElement(case, "skipped", message=f"allowed by {allowed}").text = text
        else:
            ET.SubElement(case, "system-out").text = text
    root = ET.Element(
        "testsuites", tests=suite.get("tests"), failures=suite.get("failures"), skipped=str(skipped)
    )
    root.append(suite)
    for element in root.iter():  # a baseline's ids and stamps may hold what XML forbids
        element.text = None if element.text is None else xml_safe(element.text)
        element.attrib = {xml_safe(k): xml_safe(v) for k, v in element.attrib.items()}
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _fails(m: Metric) -> str | None:
    return "regression" if m.outcome == REGRESSED else None


def lost_text(f: Flip) -> str:
    """One lost query: where it was, where it is, and what the run returns first instead."""
    return (
        f"{f.query}: rank {_rank(f.baseline_rank)} -> {_rank(f.new_rank)} (lost at "
        f"{_ks(f.lost)}); the new run returns {f.top_chunk} first (before: {f.was_top_chunk})"
    )


@dataclass(frozen=True)
class Files:
    markdown: Path
    json: Path
    junit: Path


def write(c: Comparison, out: str | os.PathLike) -> Files:
    """``regression.md``, ``regression.json`` and ``regression.xml`` (JUnit) under ``out``."""
    from rag_lab.atomic import write_atomically

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    texts: dict[str, Callable[[], str]] = {
        "regression.md": lambda: markdown(c),
        "regression.json": lambda: strict_json(to_json(c)),
        "regression.xml": lambda: junit(c),
    }
    paths = []
    for name, render in texts.items():
        text = render()
        paths.append(write_atomically(out / name, lambda tmp, t=text: tmp.write_text(t, "utf-8")))
    return Files(*paths)
