"""The tables and figures that several notebooks share: Recall@k with intervals, paired tests.

Every verdict is derived from the numbers passed in, so the prose stays true when the
corpus, the questions or the model change.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.experiments import chapter, plots
from rag_lab.metrics import Ranks, hits_at, paired_table, summary_table
from rag_lab.questions import Query
from rag_lab.stats import ALPHA, Paired, cluster_bootstrap, cluster_paired, holm, wilson

KS = (1, 4, 8, 20)


def question_ids(queries: Sequence[Query]) -> list[str]:
    """The cluster of each query: its question (both phrasings of a question share one)."""
    return [q.question.id for q in queries]


def interval_table(
    systems: Mapping[str, Ranks],
    ks: Sequence[int] = KS,
    clusters: Sequence[Hashable] | None = None,
) -> pd.DataFrame:
    """Recall@k as ``value [lo, hi]`` (Wilson 95 %, per query, as the chapter), MRR and
    queries without any hit; with ``clusters``, also ``R@k by question``: the 95 % cluster
    bootstrap interval (:func:`rag_lab.stats.cluster_bootstrap`)."""
    table = summary_table(systems, ks)
    out = pd.DataFrame(index=table.index)
    out["n"] = table["n"].astype(int)
    for k in ks:
        out[f"R@{k}"] = [
            f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
            for v, lo, hi in zip(
                table[f"R@{k}"], table[f"R@{k} lo"], table[f"R@{k} hi"], strict=True
            )
        ]
        if clusters is not None:
            out[f"R@{k} by question"] = [
                fmt_interval(cluster_bootstrap(hits_at(r, k), clusters)) for r in systems.values()
            ]
    out["MRR"] = table["MRR"].map("{:.3f}".format)
    out["no hit"] = table["no hit"].astype(int)
    return out


def paired_view(
    systems: Mapping[str, Ranks],
    pairs: Sequence[tuple[str, str]],
    ks: Sequence[int],
    clusters: Sequence[Hashable] | None = None,
) -> pd.DataFrame:
    """Paired sign tests, with the chapter's result for the same comparison where it has one.

    ``here`` is the chapter's test: per query, as if the queries were independent. With
    ``clusters`` the question-level test follows (``by question``: wins and losses over
    questions, :func:`rag_lab.stats.cluster_paired`), its p adjusted by Holm over every row
    of this table, the notebook's family (``p Holm``), and a ``verdict`` read from the
    adjusted question-level test alone.
    """
    table = paired_table(systems, pairs, ks)
    table["here"] = [
        str(Paired(w, lo, 0)) for w, lo in zip(table["wins"], table["losses"], strict=True)
    ]
    if clusters is not None:
        by_q = [
            cluster_paired(hits_at(systems[a], k), hits_at(systems[b], k), clusters)
            for a, b, k in zip(table["a"], table["b"], table["k"], strict=True)
        ]
        adjusted = holm([r.p for r in by_q])
        table["by question"] = [str(r) for r in by_q]
        table["q wins"] = [r.wins for r in by_q]
        table["q losses"] = [r.losses for r in by_q]
        table["p Holm"] = [f"{p:#.2g}" for p in adjusted]
        table["verdict"] = [
            verdict_of(a, b, per_query, r, p)
            for a, b, per_query, r, p in zip(
                table["a"],
                table["b"],
                [Paired(w, lo, 0) for w, lo in zip(table["wins"], table["losses"], strict=True)],
                by_q,
                adjusted,
                strict=True,
            )
        ]
    table["chapter"] = [
        chapter_paired(a, b, k) for a, b, k in zip(table["a"], table["b"], table["k"], strict=True)
    ]
    return table


def verdict_of(a: str, b: str, per_query: Paired, per_question: Paired, p_holm: float) -> str:
    """What a paired comparison supports, read from the question-level test after Holm.

    ``"a > b"`` or ``"a < b"`` only when the question-level test, adjusted for the family,
    is under :data:`~rag_lab.stats.ALPHA`; ``"per query only"`` when just the chapter's
    per-query test is; otherwise ``"no difference shown"``.
    """
    if p_holm < ALPHA and per_question.wins != per_question.losses:
        return f"{a} > {b}" if per_question.wins > per_question.losses else f"{a} < {b}"
    if per_query.p < ALPHA and per_query.wins != per_query.losses:
        return "per query only"
    return "no difference shown"


def recall_curve_figure(
    systems: Mapping[str, Ranks],
    title: str,
    colors: Mapping[str, str] | None = None,
    kmax: int = 20,
    labels: Mapping[str, str] | None = None,
    hit: str = "queries with the needle",
):
    """Recall@k for k = 1..kmax as small multiples: one panel per system with its Wilson 95 %
    band, the other systems faint behind it for comparison. ``labels`` name the panels;
    ``hit`` says what is counted (after "share of the n")."""
    import matplotlib.pyplot as plt

    ks = np.arange(1, kmax + 1)
    names = list(systems)
    cols = min(3, len(names))
    rows = -(-len(names) // cols)
    curves = {name: np.array([hits_at(systems[name], k).mean() for k in ks]) for name in names}
    with plots.style():
        fig, axes = plt.subplots(
            rows,
            cols,
            figsize=(3.3 * cols, 2.6 * rows + 0.6),
            sharex=True,
            sharey=True,
            squeeze=False,
        )
        for i, (ax, name) in enumerate(zip(axes.flat, names, strict=False)):
            n = len(systems[name])
            hits = np.array([int(hits_at(systems[name], k).sum()) for k in ks])
            bounds = np.array([wilson(int(h), n) for h in hits])
            color = (colors or {}).get(name, f"C{i}")
            for other in names:
                if other != name:
                    ax.plot(ks, curves[other], color="#bdbdbd", lw=0.8)
            ax.plot(ks, hits / n, color=color, lw=1.8)
            ax.fill_between(ks, bounds[:, 0], bounds[:, 1], color=color, alpha=0.2, lw=0)
            ax.set_title((labels or {}).get(name, name), fontsize=8)
            ax.set_xticks([1, 4, 8, 12, 16, 20])
            ax.set_ylim(0, 1)
        for ax in axes.flat[len(names) :]:
            ax.set_visible(False)
        for ax in axes[-1]:
            ax.set_xlabel("k (chunks retrieved)")
        for ax in axes[:, 0]:
            ax.set_ylabel("Recall@k")
        n = len(next(iter(systems.values())))
        fig.suptitle(
            f"{title}: share of the {n} {hit} in the top k (band: Wilson 95 %; grey: the others)",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def verdict(r: Paired) -> str:
    if r.significant_win:
        return f"survives the paired sign test (p < {ALPHA})."
    if r.wins > r.losses:
        return "points the same way but does not reach significance here."
    return "does not reproduce: the difference goes the other way or is nil."


def wilson_at(ranks: Ranks, k: int) -> tuple[float, float]:
    return wilson(int(hits_at(ranks, k).sum()), len(ranks))


def fmt_interval(interval: tuple[float, float]) -> str:
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def chapter_paired(a: str, b: str, k: int) -> str:
    ref = chapter.PAIRED.get((a, b, k))
    if ref is None:
        return ""
    wins, losses, p = ref
    return f"+{wins}/−{losses}" + (f", p = {p}" if p else "")


def claim_line(row: pd.Series, a: str, b: str, direction: str, claim: str, k: int) -> str:
    """One reading bullet: a claim that ``a`` is ``direction`` than ``b`` at R@k (``">"``,
    ``"<"``, or ``"="`` for the chapter's "no significant difference"), judged on a
    :func:`paired_view` row (per query, per question with Holm)."""
    chapter_says = f"; the chapter: {row['chapter']}" if row["chapter"] else ""
    numbers = (
        f"per query {row['here']}; per question {row['by question']}, Holm p = "
        f"{row['p Holm']}{chapter_says}"
    )
    v = claim_verdict(row, a, b, direction)
    if direction == "=":
        if row["verdict"] == "no difference shown":
            outcome = "**reproduces**: no significant difference, per query or per question."
        elif v == "reproduces":
            outcome = (
                "**reproduces** where the design supports a test: per query the difference is "
                "now significant, unlike the chapter's, but at the question level after Holm "
                "it is not."
            )
        else:
            outcome = (
                f"**does not reproduce**: {row['verdict']}, significant at the question level "
                "after Holm."
            )
        return f"- **{a} vs {b} at R@{k}** ({claim}): {numbers}. The claim {outcome}"
    if v == "reproduces":
        outcome = "**reproduces**: the question-level test, corrected for the family, agrees."
    elif v == "reversed":
        outcome = "**does not reproduce**: the data point the other way, significantly."
    elif v == "per query only":
        outcome = (
            "holds **per query only**: the chapter's test says so, but the 64 queries are 32 "
            "questions asked twice, and the question-level test after Holm does not confirm "
            "it, so it is **not reproduced**."
        )
    else:
        wins, losses = int(row["q wins"]), int(row["q losses"])
        lean = (
            f"the questions lean {'its' if (wins > losses) == (direction == '>') else 'the other'}"
            f" way ({wins} against {losses})"
            if wins != losses
            else "the questions split evenly"
        )
        outcome = f"**does not reproduce** here: no significant difference; {lean}."
    return f"- **{a} vs {b} at R@{k}** ({claim}): {numbers}. The claim {outcome}"


def claim_verdict(row: pd.Series, a: str, b: str, direction: str) -> str:
    """``reproduces``, ``reversed``, ``per query only`` or ``does not reproduce``: a claim
    that ``a`` is ``direction`` than ``b``, read from a :func:`paired_view` row."""
    opposite = "<" if direction == ">" else ">"
    v = row["verdict"]
    if direction == "=":
        return "does not reproduce" if v in (f"{a} > {b}", f"{a} < {b}") else "reproduces"
    if v == f"{a} {direction} {b}":
        return "reproduces"
    if v == f"{a} {opposite} {b}":
        return "reversed"
    if v == "per query only":
        return "per query only"
    return "does not reproduce"


def claim_table(view: pd.DataFrame, claims) -> str:
    """A Markdown table of claims ``(a, b, k, direction, text)`` judged on ``view`` (indexed
    by ``a, b, k``): the chapter's result, ours per query and per question, the verdict."""
    lines = [
        "| claim | chapter | here, per query | here, per question (Holm p) | verdict |",
        "|---|---|---|---|---|",
    ]
    for a, b, k, direction, text in claims:
        row = view.loc[(a, b, k)]
        sign = "≈" if direction == "=" else direction
        lines.append(
            f"| {a} {sign} {b} at R@{k}: {text} | {row['chapter'] or '–'} | {row['here']} "
            f"| {row['by question']} (Holm {row['p Holm']}) | "
            f"{claim_verdict(row, a, b, direction)} |"
        )
    return "\n".join(lines)


def count_claims(rows: Sequence[tuple[str, str, str, str]]) -> str:
    """A Markdown claim table for claims measured by counts, not paired tests: rows of
    ``(claim, chapter, here, verdict)``. A count over questions needs no question-level
    correction, so the two ``here`` columns of :func:`claim_table` are one here."""
    lines = ["| claim | chapter | here | verdict |", "|---|---|---|---|"]
    lines += [f"| {c} | {ch} | {here} | {v} |" for c, ch, here, v in rows]
    return "\n".join(lines)
