"""Recall@k curves: the share of queries hit in the top k, k = 1..kmax, as small multiples.

:func:`recall_curve_figure` draws one panel per system (a chunking, a retriever) with its
95 % band and the other systems faint behind it; the report's recall figures and notebook
10's are drawn with it (:func:`rag_lab.evaluation.figures.strategies_figure`,
:func:`~rag_lab.evaluation.figures.systems_figure`). It returns a matplotlib figure in the
lab's style (:mod:`rag_lab.evaluation.plots`); the caller shows or saves it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from rag_lab.chunking import STRATEGIES
from rag_lab.evaluation import plots
from rag_lab.metrics import Ranks, hits_at
from rag_lab.stats import clustered_wilson, wilson


def recall_curve_figure(
    systems: Mapping[str, Ranks],
    title: str,
    colors: Mapping[str, str] | None = None,
    kmax: int = 20,
    labels: Mapping[str, str] | None = None,
    hit: str = "queries with the needle",
    clusters: Sequence[Hashable] | None = None,
):
    """Recall@k for k = 1..kmax as small multiples: one panel per system with its 95 % band,
    the other systems faint behind it for comparison. The band is Wilson's, with the
    questions as the sample when ``clusters`` names each query's question
    (:func:`rag_lab.stats.clustered_wilson`). ``labels`` name the panels (default: a
    strategy's letter and label); ``hit`` says what is counted (after "share of the n").
    A system's colour is ``colors``'s, else the palette's for a strategy or a retriever
    (:mod:`rag_lab.evaluation.plots`), else ink."""
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
        for ax, name in zip(axes.flat, names, strict=False):
            n = len(systems[name])
            hits = np.array([int(hits_at(systems[name], k).sum()) for k in ks])
            if clusters is None:
                bounds = np.array([wilson(int(h), n) for h in hits])
            else:
                bounds = np.array(
                    [clustered_wilson(hits_at(systems[name], k), clusters) for k in ks]
                )
            color = _system_color(name, colors)
            for other in names:
                if other != name:
                    ax.plot(ks, curves[other], color=plots.NEUTRAL["faint"], lw=0.8)
            ax.plot(ks, hits / n, color=color, lw=1.8)
            ax.fill_between(ks, bounds[:, 0], bounds[:, 1], color=color, alpha=0.2, lw=0)
            ax.set_title((labels or {}).get(name, _panel_label(name)), fontsize=8)
            ax.set_xticks([1, 4, 8, 12, 16, 20])
            ax.set_ylim(0, 1)
        for ax in axes.flat[len(names) :]:
            ax.set_visible(False)
        for ax in axes[-1]:
            ax.set_xlabel("k (chunks retrieved)")
        for ax in axes[:, 0]:
            ax.set_ylabel("Recall@k")
        n = len(next(iter(systems.values())))
        band = (
            "Wilson 95 %"
            if clusters is None
            else f"95 %, the {len(set(clusters))} questions as the sample"
        )
        fig.suptitle(
            f"{title}: share of the {n} {hit} in the top k (band: {band}; grey: the others)",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def _system_color(name: str, colors: Mapping[str, str] | None) -> str:
    """``colors``'s colour for ``name``, else the palette's for a strategy or a retriever."""
    for palette in (colors or {}, plots.STRATEGY_COLORS, plots.SYSTEM_COLORS):
        if name in palette:
            return palette[name]
    return plots.NEUTRAL["ink"]


def _panel_label(name: str) -> str:
    """A strategy's letter and label (``E: boundaries + header``), else the name itself."""
    return f"{name}: {STRATEGIES[name].label}" if name in STRATEGIES else name
