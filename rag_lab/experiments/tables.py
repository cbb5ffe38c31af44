"""The tables and figures that several notebooks share: Recall@k with intervals, paired tests.

Every verdict is derived from the numbers passed in, so the prose stays true when the
corpus, the questions or the model change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.experiments import chapter, plots
from rag_lab.metrics import Ranks, hits_at, paired_table, summary_table
from rag_lab.stats import ALPHA, Paired, wilson

KS = (1, 4, 8, 20)


def interval_table(systems: Mapping[str, Ranks], ks: Sequence[int] = KS) -> pd.DataFrame:
    """Recall@k as ``value [lo, hi]`` (Wilson 95 %), MRR and queries without any hit."""
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
    out["MRR"] = table["MRR"].map("{:.3f}".format)
    out["no hit"] = table["no hit"].astype(int)
    return out


def paired_view(
    systems: Mapping[str, Ranks], pairs: Sequence[tuple[str, str]], ks: Sequence[int]
) -> pd.DataFrame:
    """Paired sign tests, with the chapter's result for the same comparison where it has one."""
    table = paired_table(systems, pairs, ks)
    table["here"] = [
        str(Paired(w, lo, 0)) for w, lo in zip(table["wins"], table["losses"], strict=True)
    ]
    table["chapter"] = [
        chapter_paired(a, b, k) for a, b, k in zip(table["a"], table["b"], table["k"], strict=True)
    ]
    return table


def recall_curve_figure(
    systems: Mapping[str, Ranks],
    title: str,
    colors: Mapping[str, str] | None = None,
    kmax: int = 20,
):
    """Recall@k for k = 1..kmax, one line per system, with Wilson 95 % bands."""
    import matplotlib.pyplot as plt

    ks = np.arange(1, kmax + 1)
    with plots.style():
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, (name, ranks) in enumerate(systems.items()):
            n = len(ranks)
            hits = np.array([int(hits_at(ranks, k).sum()) for k in ks])
            bounds = np.array([wilson(int(h), n) for h in hits])
            color = (colors or {}).get(name, f"C{i}")
            ax.plot(ks, hits / n, color=color, lw=1.6, label=name)
            ax.fill_between(ks, bounds[:, 0], bounds[:, 1], color=color, alpha=0.12, lw=0)
        ax.set_xlabel("k (chunks retrieved)")
        ax.set_ylabel("Recall@k (queries with the needle in the top k)")
        ax.set_xticks([1, 4, 8, 12, 16, 20])
        ax.set_ylim(0, 1)
        n = len(next(iter(systems.values())))
        ax.set_title(f"{title} (n = {n} queries; bands: Wilson 95 %)")
        ax.legend(loc="lower right", ncols=2)
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
