"""The regression gate's comparison rendered: Markdown, JSON and JUnit XML files.

:func:`markdown` reads a :class:`~rag_lab.evaluation.regression.Comparison`'s fields (the
verdict, what was paired, what changed, the metrics, the flipped queries); :func:`junit`
writes one testsuite with a testcase per metric and a ``failure`` where it regressed, so a
CI system shows the gate like a test run; :func:`write` puts the three files beside the
report.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rag_lab.evaluation.regression import REGRESSED, Comparison, Metric
from rag_lab.evaluation.render import markdown_table
from rag_lab.evaluation.report import strict_json


def metrics_frame(c: Comparison) -> pd.DataFrame:
    """One row a metric: both values, the difference with its interval, the counts, p, outcome."""
    return pd.DataFrame(
        {
            "baseline": [f"{m.baseline:.3f}" for m in c.metrics],
            "new": [f"{m.new:.3f}" for m in c.metrics],
            "new − baseline [95 % CI]": [str(m.difference) for m in c.metrics],
            "better/worse/tied": [_counts(m) for m in c.metrics],
            "p (adjusted)": [f"{m.p_adjusted:#.2g}" for m in c.metrics],
            "outcome": [m.outcome for m in c.metrics],
        },
        index=pd.Index([m.name for m in c.metrics], name="metric"),
    )


def _counts(m: Metric) -> str:
    t = m.test
    up, down = (t.wins, t.losses) if m.higher_is_better else (t.losses, t.wins)
    return f"{up}/{down}/{t.ties}"


def markdown(c: Comparison) -> str:
    """The comparison as Markdown: the verdict, what was paired, what changed, the metrics,
    the flips."""
    lines = [
        "# rag_lab regression gate",
        "",
        f"Baseline: `{c.baseline_path}`. {c.summary}",
        "",
        c.coverage,
        *(f"Not compared: {n}." for n in c.not_compared),
        "",
        "## What changed",
        "",
    ]
    if c.changes:
        lines += [f"- {s}: {a} → {b}" for s, a, b in c.changes]
    else:
        lines += [
            "Nothing in the stamps: the same corpus, questions, chunker, encoder, "
            "cutoff and version."
        ]
    lines += [
        "",
        "## Metrics",
        "",
        "New minus baseline, paired by question; the interval is the t interval by question "
        "at 1 − 0.05/m over the m metrics compared, and p the test it inverts, adjusted the "
        "same way; questions better, worse and tied are counted beside it; a metric "
        "regressed when that interval lies wholly on the worse side (the ledger's rule)"
        + (f" or worse by more than --max-drop {c.max_drop:g}" if c.max_drop is not None else "")
        + ". Lower is better for destroyed answers, bluffs and refusals.",
        "",
        markdown_table(metrics_frame(c)),
        "",
        "## Flipped queries",
        "",
    ]
    if not c.flips:
        lines += ["None: every query's first hit is on the same side of every k."]
    else:
        frame = pd.DataFrame(
            {
                "rank before": [_rank(f.baseline_rank) for f in c.flips],
                "rank now": [_rank(f.new_rank) for f in c.flips],
                "found → lost": [_ks(f.lost) for f in c.flips],
                "lost → found": [_ks(f.found) for f in c.flips],
                "first chunk now": [f.top_chunk for f in c.flips],
            },
            index=pd.Index([f.query for f in c.flips], name="query"),
        )
        lost = sum(bool(f.lost) for f in c.flips)
        lines += [
            f"{lost} queries lost at some k, {len(c.flips) - lost} only gained.",
            "",
            markdown_table(frame),
        ]
    return "\n".join(lines) + "\n"


def _rank(r: int | None) -> str:
    return "none" if r is None else str(r)


def _ks(ks: Sequence[int]) -> str:
    return ", ".join(f"R@{k}" for k in ks) or "–"


def junit(c: Comparison) -> str:
    """JUnit XML: one testsuite, one testcase a metric, a ``failure`` when it regressed."""
    suite = ET.Element(
        "testsuite",
        name="rag-lab regression gate",
        tests=str(len(c.metrics)),
        failures=str(len(c.regressed)),
        errors="0",
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="baseline", value=c.baseline_path)
    ET.SubElement(props, "property", name="coverage", value=c.coverage)
    for stamp, a, b in c.changes:
        ET.SubElement(props, "property", name=f"changed: {stamp}", value=f"{a} -> {b}")
    for m in c.metrics:
        case = ET.SubElement(suite, "testcase", classname="rag_lab.regression", name=m.name)
        text = f"{m.name}: {m.baseline:.3f} -> {m.new:.3f}, {m.difference}; {m.reason}"
        if m.outcome == REGRESSED:
            ET.SubElement(case, "failure", message=text, type="regression").text = text
        else:
            ET.SubElement(case, "system-out").text = text
    root = ET.Element("testsuites", tests=suite.get("tests"), failures=suite.get("failures"))
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


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
        "regression.json": lambda: strict_json(c.to_json()),
        "regression.xml": lambda: junit(c),
    }
    paths = []
    for name, render in texts.items():
        text = render()
        paths.append(write_atomically(out / name, lambda tmp, t=text: tmp.write_text(t, "utf-8")))
    return Files(*paths)
