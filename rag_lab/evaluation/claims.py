"""The chapter's claims, judged on any corpus's records: one place, for reports and notebooks.

Each function takes the records of a suite and returns :class:`~rag_lab.evaluation.verdicts.Claim`
records whose verdicts come from the numbers (:func:`~rag_lab.evaluation.verdicts.judge` for
paired comparisons, a stated count rule otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_lab.evaluation import chapter
from rag_lab.evaluation.chunking import Chunking
from rag_lab.evaluation.retrieval import Retrieval
from rag_lab.evaluation.verdicts import Claim, Verdict, judge


def chunking_claims(m: Chunking) -> tuple[Claim, ...]:
    """Blind cuts destroy answers (any destroyed under A); overlap prevents it (none under B)."""
    blind, overlap = m.destroyed.count("A"), m.destroyed.count("B")
    return (
        Claim(
            "blind cuts destroy answers (A)",
            f"{chapter.DESTROYED_BY_BLIND} of {chapter.CORPUS['questions']}",
            f"{blind} of {m.destroyed.of}",
            Verdict.REPRODUCES if blind > 0 else Verdict.NOT_REPRODUCED,
        ),
        Claim(
            "a 64-character overlap prevents it (B)",
            f"{chapter.DESTROYED_WITH_OVERLAP}",
            f"{overlap}",
            Verdict.REPRODUCES if overlap == 0 else Verdict.IN_PART,
        ),
    )


def header_share_figure(m: Chunking) -> Claim:
    """The header's share of E's word-pieces: a figure to compare, not a claim to test."""
    ours = float(m.pieces.table.loc["E", "header share"])
    theirs = chapter.HEADER_TOKENS / chapter.EMBEDDED_TOKENS
    return Claim(
        "the header's share of E's word-pieces",
        f"{theirs:.1%}",
        f"{ours:.1%}",
        Verdict.FIGURE,
        wording=f"measured: {'smaller' if ours < theirs else 'not smaller'} here",
    )


def paired_claims(
    retrieval: Retrieval, hypotheses: Sequence[tuple[str, str, int, str, str]]
) -> tuple[Claim, ...]:
    """Claims ``(a, b, k, direction, text)`` judged on ``retrieval``'s paired family."""
    claims = []
    for a, b, k, direction, text in hypotheses:
        c = retrieval.paired.get(a, b, k)
        sign = "≈" if direction == "=" else direction
        here = f"{c.per_question} (Holm {c.p_holm:#.2g})" if c.per_question else str(c.per_query)
        claims.append(
            Claim(
                f"{a} {sign} {b} at R@{k}: {text}",
                chapter.paired_reference(a, b, k) or "–",
                here,
                judge(c, direction),
            )
        )
    return tuple(claims)
