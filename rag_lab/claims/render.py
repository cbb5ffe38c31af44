"""The one renderer: a ledger entry (a declared claim, its numbers, the judge's verdict) as
words. Every number of a claim shown in a notebook, the README or a report is formatted here,
and the name of the method behind an interval comes from the entry's ``method``.

>>> from rag_lab.evaluation.ledger import count_entry
>>> e = count_entry("A-destroys", notebook="02", benchmark="d2l", holds=True, here="4 of 32")
>>> finding_line(e)
'- **Blind cuts destroy answers** (A-destroys, d2l): 4 of 32; the chapter: 4 of 32. *Reproduces*.'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from rag_lab.claims import Direction
from rag_lab.claims.judge import Generalisation, Generality
from rag_lab.claims.verdicts import Verdict

if TYPE_CHECKING:
    from rag_lab.evaluation.ledger import Entry

METHODS = {
    "paired_t_pseudo_questions": "t over questions, two pseudo-questions",
    "paired_t_questions": "t over questions",
    "sign_test_exact": "exact sign test",
    "wilson": "Wilson",
    "clustered_wilson": "Wilson over questions",
    "clopper_pearson": "Clopper–Pearson",
    "bootstrap_percentile": "percentile bootstrap",
    "bootstrap_percentile_by_group": "percentile bootstrap, each group of questions apart",
    "student_t": "t over questions",
    "cluster_bootstrap": "bootstrap over questions",
    "t_over_documents": "t over documents",
    "fieller_questions": "Fieller over questions",
    "chroma_scoring": "Chroma's own scoring",
    "exact": "exact, the whole corpus",
}
"""How a method's name reads beside its interval; a name not listed reads as itself."""

SIGNED = (Direction.BETTER, Direction.WORSE, Direction.SAME)


def interval(e: Entry) -> str:
    """The estimate and its interval (``+0.109 [−0.012, +0.230]``), or ``–``."""
    if e.estimate is None or e.ci is None:
        return "–"
    fmt = "{:+.3f}" if e.direction in SIGNED else "{:.3f}"
    lo, hi = (fmt.format(x).replace("inf", "\N{INFINITY}") for x in e.ci)
    return f"{fmt.format(e.estimate)} [{lo}, {hi}]"


def evidence(e: Entry) -> str:
    """Our result in one cell: the interval when there is one, else the count as shown,
    else ``–``."""
    shown = interval(e)
    return shown if shown != "–" else (e.here or "–")


def method(e: Entry) -> str:
    """The interval's method as it reads (``t over questions, two pseudo-questions``), with
    its level when that is not 95 % (a confirmatory family's Bonferroni level)."""
    name = METHODS.get(e.method, e.method)
    return f"{name}, {100 * e.level:.1f} %" if e.level is not None else name


def verdict_text(e: Entry) -> str:
    """The verdict and what qualifies it: the margin of an equivalence, the effect an
    inconclusive design could detect, the reason a claim is fixed."""
    words = e.verdict.label
    if e.verdict is Verdict.NO_VARIATION:
        return f"{words} (every question's difference is 0)"
    if e.ceiling is not None:
        reach = f"the chapter's effect is out of reach: at most {e.ceiling:+.3f}"
        if e.share is None or e.chapter_share is None:
            return f"{words} ({reach})"
        lo, hi = e.share
        return (
            f"{words} ({reach}; as shares of the headroom, ours [{lo:+.2f}, {hi:+.2f}], "
            f"the chapter's {e.chapter_share:+.2f})"
        )
    if e.verdict is Verdict.INCONCLUSIVE and e.detectable is not None:
        margin = f"margin ±{e.margin:.2f}; " if e.margin is not None else ""
        return f"{words} ({margin}detects ±{e.detectable:.2f} with 80 % power)"
    if e.margin is not None and e.verdict is Verdict.REPRODUCES and e.significant:
        return f"{words} (within ±{e.margin:.2f}, though the difference is significant)"
    if e.margin is not None and e.verdict in (Verdict.REPRODUCES, Verdict.INCONCLUSIVE):
        return f"{words} (margin ±{e.margin:.2f})"
    if not e.verdict.tested:
        return f"{words}: {e.reason}"
    return words


def p_text(e: Entry) -> str:
    """The test's p, with the family-adjusted p of a confirmatory claim, or its family."""
    if e.p is None:
        return "–"
    if e.p_adjusted is None:
        return f"{e.p:#.2g} ({e.family})"
    return f"{e.p:#.2g} ({e.p_adjusted:#.2g})"


def stand_in_note(e: Entry) -> str:
    """`` [stand-in: …]`` when the entry rests on one, else empty."""
    return f" [stand-in: {e.stand_in}]" if e.stand_in else ""


def entry_line(e: Entry, with_benchmark: bool = False) -> str:
    """A reading bullet: ``- **E>A@R20** (boundaries with a header beat blind cuts): by
    question +0.234 [+0.117, +0.351] (t over questions, …); +15/−1 …; p = 0.00052
    (adjusted 0.0026); the chapter: +18/−3, p = 0.0015. **Reproduces**.``"""
    parts = []
    if e.estimate is not None and e.ci is not None:
        scale = "by question" if e.direction in SIGNED else "rate"
        if e.direction is Direction.AT_LEAST:
            scale = "ratio"
        how = f" ({method(e)})" if e.method else ""
        parts.append(f"{scale} {interval(e)}{how}")
    if e.here:
        parts.append(e.here)
    if e.p is not None:
        adjusted = (
            f" (adjusted {e.p_adjusted:#.2g})" if e.p_adjusted is not None else f" ({e.family})"
        )
        parts.append(f"p = {e.p:#.2g}{adjusted}")
    if e.chapter not in ("", "–"):
        parts.append(f"the chapter: {e.chapter}")
    if e.prediction is not None and e.chapter_effect is not None:
        lo, hi = e.prediction
        inside = "inside" if lo <= e.chapter_effect <= hi else "outside"
        parts.append(
            f"a study of the chapter's size detects our difference with power "
            f"{e.chapter_power:.2f}; its effect {e.chapter_effect:+.3f} lies {inside} our "
            f"prediction for it [{lo:+.3f}, {hi:+.3f}]"
        )
    verdict = _capital(verdict_text(e))
    evidence = f": {'; '.join(parts)}" if parts else ""  # none: untested
    where = f", {e.benchmark}" if with_benchmark else ""
    return f"- **{e.claim}**{where} ({e.statement}){evidence}. **{verdict}**.{stand_in_note(e)}"


def finding_line(e: Entry) -> str:
    """One finding for the top of a notebook: the claim, our number, the chapter's, the
    verdict, the stand-in it rests on."""
    if e.estimate is not None and e.ci is not None:
        paired = e.direction in SIGNED
        ours = f"{interval(e)} by question" if paired else interval(e)
        if e.here and not paired:
            ours += f" ({e.here})"
    else:
        ours = e.here or "–"
    chapter = f"; the chapter: {e.chapter}" if e.chapter not in ("", "–") else ""
    why = f": {e.reason}" if not e.verdict.tested and e.reason else ""
    return (
        f"- **{_capital(e.statement)}** ({e.claim}, {e.benchmark}): {ours}{chapter}. "
        f"*{_capital(e.verdict.label)}*{why}.{stand_in_note(e)}"
    )


def view(entries: Sequence[Entry]) -> pd.DataFrame:
    """Entries for reading, one row a claim: the chapter's result, ours, the estimate and its
    interval by question, the test's p (adjusted in a confirmatory family), the verdict."""
    return pd.DataFrame(
        {
            "chapter": [e.chapter for e in entries],
            "here": [e.here for e in entries],
            "estimate [CI]": [interval(e) for e in entries],
            "p (adjusted)": [p_text(e) for e in entries],
            "verdict": [verdict_text(e) for e in entries],
        },
        index=pd.Index([f"{e.claim}: {e.statement}" for e in entries], name="claim"),
    )


def generalisation_text(g: Generalisation) -> str:
    """The generalisation rule's outcome (:func:`rag_lab.claims.judge.generalisation`), short
    enough for a table column: ``generalises``, ``specific to L3`` (the encoder as keyed),
    ``neither``."""
    if g.kind is Generality.MODEL_SPECIFIC:
        return f"specific to {g.encoder}"
    return g.kind.value


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = [
    "METHODS",
    "entry_line",
    "evidence",
    "finding_line",
    "generalisation_text",
    "interval",
    "method",
    "p_text",
    "stand_in_note",
    "verdict_text",
    "view",
]
