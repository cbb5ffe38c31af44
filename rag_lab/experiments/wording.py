"""How the notebooks word a ledger entry: one reading bullet, from the entry's numbers.

The verdict is the ledger's (:mod:`rag_lab.evaluation.ledger`); this module only says it.
"""

from __future__ import annotations

from rag_lab.evaluation.ledger import Direction, Entry


def entry_line(e: Entry) -> str:
    """``- **E>A@R20** (boundaries with a header beat blind cuts): by question +0.234
    [+0.117, +0.351], +15/−1 over questions, p = 0.00052 (Holm 0.0026); the chapter
    +18/−3, p = 0.0015. **Reproduces**.``"""
    parts = []
    if e.estimate is not None and e.ci is not None:
        scale = "by question" if e.direction is not Direction.VALUE else "rate"
        parts.append(f"{scale} {e.interval}")
    if e.here:
        parts.append(e.here)
    if e.p is not None:
        adjusted = f" (Holm {e.p_adjusted:#.2g})" if e.p_adjusted is not None else f" ({e.family})"
        parts.append(f"question-level p = {e.p:#.2g}{adjusted}")
    chapter = f"; the chapter: {e.chapter}" if e.chapter not in ("", "–") else ""
    verdict = e.verdict_text[0].upper() + e.verdict_text[1:]
    evidence = f": {'; '.join(parts)}{chapter}" if parts or chapter else ""  # none: untested
    return f"- **{e.claim}** ({e.statement}){evidence}. **{verdict}**."


def finding_line(e: Entry) -> str:
    """One finding for the top of a notebook: the claim, our number, the chapter's, the
    verdict. ``- **The header buys recall** (E>C@R20, d2l): +0.031 [−0.030, +0.089] by
    question; the chapter +12/−2, p = 0.0129. *Excludes the chapter's effect.*``"""
    if e.estimate is not None and e.ci is not None:
        ours = f"{e.interval} {'by question' if e.direction is not Direction.VALUE else ''}"
        ours = ours.rstrip() + (f" ({e.here})" if e.here and e.direction is Direction.VALUE else "")
    else:
        ours = e.here or "–"
    chapter = f"; the chapter: {e.chapter}" if e.chapter not in ("", "–") else ""
    verdict = e.verdict.label[0].upper() + e.verdict.label[1:]
    why = f": {e.reason}" if not e.verdict.tested and e.reason else ""
    statement = e.statement[0].upper() + e.statement[1:]
    return f"- **{statement}** ({e.claim}, {e.benchmark}): {ours}{chapter}. *{verdict}*{why}."
