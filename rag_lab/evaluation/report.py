"""The report ``rag-lab evaluate`` writes: an :class:`Evaluation` and its files.

An :class:`Evaluation` holds the records of one evaluation, in report order, and what they
were measured on (:mod:`rag_lab.evaluation.runner` measures them). What the report shows of
a record is declared once, by the record's type (:mod:`rag_lab.evaluation.sections`).
:func:`write` renders every section to ``report.md``, the records to ``report.json``, the
chapter's claims judged on the corpus to ``claims.json`` and the figures to ``figures/``.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rag_lab import __version__
from rag_lab.claims import render
from rag_lab.evaluation import plots
from rag_lab.evaluation.ledger import Entry, Ledger
from rag_lab.evaluation.render import markdown_table
from rag_lab.evaluation.sections import GateSkipped, Section, section


@dataclass(frozen=True)
class Evaluation:
    """The records of one evaluation, in report order, and what they were measured on."""

    title: str
    corpus: dict[str, Any]
    """Counts of what was evaluated: documents, characters, questions…"""
    encoder: dict[str, Any]
    """The encoder's fingerprint fields and key."""
    results: tuple[Any, ...]
    kind: str = "needles"
    """``needles`` (questions with a quoted answer) or ``spans`` (excerpts by offsets)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further plain values for ``report.json`` (query ids, BM25's tokenizer)."""
    judged: bool = True
    """Whether the chapter's claims are judged on the corpus (not on ``evaluate``'s fast
    path, which measures the deployed configuration alone)."""

    def result(self, kind: type) -> Any:
        """The record of type ``kind``, or None."""
        return next((r for r in self.results if isinstance(r, kind)), None)

    @property
    def intro(self) -> str:
        c, fp = self.corpus, self.encoder
        what = (
            f"{c['questions']} questions answered by {c['excerpts']} excerpts (Chroma's format)"
            if self.kind == "spans"
            else f"{c['questions']} questions asked in two phrasings ({c['queries']} queries) "
            f"and {c['negatives']} negatives ({c['uncovered negatives']} uncovered, "
            f"{c['offtopic negatives']} off-topic)"
        )
        return (
            f"{c['documents']} documents ({c['characters']:,} characters); {what}. "
            f"Encoder {fp['name']}, fingerprint {fp['key']}; rag_lab {__version__}."
        )

    def sections(self) -> list[Section]:
        return list(self._sections)

    @functools.cached_property
    def _sections(self) -> tuple[Section, ...]:
        # Built once: a section judges its claims, and a report reads them several times.
        return tuple(section(r, self.title) for r in self.results)

    def headline(self) -> list[tuple[str, pd.DataFrame]]:
        """The tables the terminal prints, in order."""
        return [(t.caption, t.frame) for s in self.sections() for t in s.tables if t.headline]

    def notes(self) -> list[str]:
        """What the terminal should say beside the tables (a part not measured)."""
        return [r.reason for r in self.results if isinstance(r, GateSkipped)]

    def to_json(self) -> dict[str, Any]:
        out = {
            "rag_lab": __version__,
            "kind": self.kind,
            "title": self.title,
            "encoder": self.encoder,
            "corpus": self.corpus,
            **self.extra,
        }
        for s, r in zip(self.sections(), self.results, strict=True):
            out[s.key] = None if isinstance(r, GateSkipped) else r.to_json()
            if isinstance(r, GateSkipped):
                out[f"{s.key} skipped"] = r.reason
        out["claims"] = [e.to_json() for e in self.claims()]
        return out

    def claims(self) -> list[Entry]:
        """The chapter's claims judged on this corpus: its claims ledger (none unless
        :attr:`judged`)."""
        if not self.judged:
            return []
        return [e for s in self.sections() for e in s.claims]


@dataclass(frozen=True)
class Written:
    """The files a report is: its Markdown, its JSON and its figures."""

    markdown: Path
    json: Path
    claims: Path | None
    """The claims ledger of the corpus (:mod:`rag_lab.evaluation.ledger`); None when the
    claims were not judged (:attr:`Evaluation.judged`)."""
    figures: tuple[Path, ...]


def write(evaluation: Evaluation, out: str | os.PathLike) -> Written:
    """Write ``report.md``, ``report.json``, ``figures/*.png`` and, when the chapter's
    claims were judged, ``claims.json`` under ``out``."""
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    drawn = []
    for s in evaluation.sections():
        for name, draw in s.figures.items():
            fig = draw()
            drawn.append(plots.save(fig, name, folder=out / "figures"))
            plt.close(fig)
    md = out / "report.md"
    md.write_text(markdown(evaluation), encoding="utf-8")
    js = out / "report.json"
    js.write_text(strict_json(evaluation.to_json()), "utf-8")
    claims_file = None
    if evaluation.judged:
        claims_file = Ledger(evaluation.claims()).write(out / "claims.json")
    else:  # an earlier --lab run's ledger would pass for this run's
        (out / "claims.json").unlink(missing_ok=True)
    return Written(md, js, claims_file, tuple(drawn))


def strict_json(value: Any) -> str:
    """``value`` as strict JSON (RFC 8259), indented: a float that is not finite
    (the distance of a twin with no chunk left, a rate of nothing) is ``null``, never
    ``NaN`` or ``Infinity``, which parsers other than Python's refuse."""
    return json.dumps(_finite(value), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


RULE_NOTE = (
    "Each claim is declared in `rag_lab/claims/chapter.yaml` and judged by one rule "
    "(`rag_lab/claims/judge.py`): a directional claim reproduces when the t interval of the "
    "difference by question, at 1 − 0.05/m over the m confirmatory claims, lies wholly on its "
    "side of zero, is contradicted when wholly on the other, excludes the chapter's effect "
    "when that interval excludes an effect the comparison could reach, and is inconclusive "
    "otherwise; a no-difference claim reproduces only when the interval lies within its "
    "declared margin, which its verdict names; a comparison in which no question differs has "
    "no variation."
)


LAB_NOTE = (
    "Measured: the deployed configuration alone. The six-strategy lab (chunking, dense "
    "retrieval over six chunkings, dense vs BM25 vs hybrid) and the chapter's claims judged "
    "on this corpus: `rag-lab evaluate --lab`."
)


def markdown(ev: Evaluation) -> str:
    """The report as Markdown: a section per record, then the claims judged on this corpus."""
    lines = [f"# rag_lab evaluation: {ev.title}", "", ev.intro, ""]
    for n, s in enumerate(ev.sections(), 1):
        lines += [f"## {n} · {s.heading}", ""]
        if s.skipped:
            lines += [f"Not measured: {s.skipped}.", ""]
            continue
        for t in s.tables:
            lines += [f"### {t.caption[0].upper()}{t.caption[1:]}", ""]
            lines += [t.note, ""] if t.note else []
            lines += [markdown_table(t.frame), ""]
        lines += [f"![{f}](figures/{f}.png)" for f in s.figures] + [""]
    if ev.extra.get("lab") is False:
        lines += [LAB_NOTE, ""]
    judged = ev.claims()
    if judged:
        lines += [
            "## The chapter's claims on this corpus",
            "",
            RULE_NOTE,
            "",
            markdown_table(render.view(judged)),
            "",
        ]
    return "\n".join(lines)
