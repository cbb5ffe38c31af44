"""How the notebooks word a paired claim: a reading bullet and a claim table, from records.

The verdict is :func:`rag_lab.evaluation.verdicts.judge`'s, from one
:class:`~rag_lab.evaluation.paired.Comparison`; this module only says it in sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_lab.evaluation import chapter
from rag_lab.evaluation.paired import Comparison, Finding, PairedTable
from rag_lab.evaluation.verdicts import Verdict, judge


def claim_line(c: Comparison, direction: str, claim: str) -> str:
    """One reading bullet: a claim that ``c.a`` is ``direction`` than ``c.b`` at R@k
    (``">"``, ``"<"``, or ``"="`` for the chapter's "no significant difference")."""
    reference = chapter.paired_reference(c.a, c.b, c.k)
    chapter_says = f"; the chapter: {reference}" if reference else ""
    numbers = (
        f"per query {c.per_query}; per question {c.per_question}, Holm p = "
        f"{c.p_holm:#.2g}{chapter_says}"
    )
    head = f"- **{c.a} vs {c.b} at R@{c.k}** ({claim}): {numbers}. The claim "
    return head + _outcome(c, direction)


def _outcome(c: Comparison, direction: str) -> str:
    v, finding = judge(c, direction), c.finding
    if direction == "=":
        if finding is Finding.NONE:
            return "**reproduces**: no significant difference, per query or per question."
        if v is Verdict.REPRODUCES:
            return (
                "**reproduces** where the design supports a test: per query the difference is "
                "now significant, unlike the chapter's, but at the question level after Holm "
                "it is not."
            )
        return (
            f"**does not reproduce**: {finding.label(c.a, c.b)}, significant at the question "
            "level after Holm."
        )
    if v is Verdict.REPRODUCES:
        return "**reproduces**: the question-level test, corrected for the family, agrees."
    if v is Verdict.REVERSED:
        return "**does not reproduce**: the data point the other way, significantly."
    if v is Verdict.PER_QUERY_ONLY:
        return (
            "holds **per query only**: the chapter's test says so, but the 64 queries are 32 "
            "questions asked twice, and the question-level test after Holm does not confirm "
            "it, so it is **not reproduced**."
        )
    wins, losses = c.per_question.wins, c.per_question.losses
    if wins == losses:
        lean = "the questions split evenly"
    else:
        way = "its" if (wins > losses) == (direction == ">") else "the other"
        lean = f"the questions lean {way} way ({wins} against {losses})"
    return f"**does not reproduce** here: no significant difference; {lean}."


def claim_table(paired: PairedTable, claims: Sequence[tuple[str, str, int, str, str]]) -> str:
    """A Markdown table of claims ``(a, b, k, direction, text)`` judged on ``paired``: the
    chapter's result, ours per query and per question, the verdict."""
    lines = [
        "| claim | chapter | here, per query | here, per question (Holm p) | verdict |",
        "|---|---|---|---|---|",
    ]
    for a, b, k, direction, text in claims:
        c = paired.get(a, b, k)
        sign = "≈" if direction == "=" else direction
        lines.append(
            f"| {a} {sign} {b} at R@{k}: {text} | {chapter.paired_reference(a, b, k) or '–'} "
            f"| {c.per_query} | {c.per_question} (Holm {c.p_holm:#.2g}) | "
            f"{judge(c, direction).label} |"
        )
    return "\n".join(lines)
