"""Notebook 11's two figures, drawn from the records: what survives by layout and reader (a
heatmap), and retrieval over each extracted corpus against the clean Markdown."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.evaluation import plots
from rag_lab.experiments.nb11_extraction.retrieval import CLEAN, KS
from rag_lab.metrics import Ranks, hits_at, recall_at
from rag_lab.stats import clustered_wilson


def kept_grid(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """One column of :func:`~.kept.survival_table` as a grid: a row per layout, a column per
    reader, both in the order the table has them."""
    layouts = list(dict.fromkeys(table["layout"]))
    readers = list(dict.fromkeys(table["reader"]))
    return table.pivot(index="layout", columns="reader", values=column).loc[layouts, readers]


def survival_figure(table: pd.DataFrame):
    """Two heatmaps, layout by reader: the needles kept verbatim (each cell ``k/n``) and the
    share of the drawn text's 8-word runs kept in order; pale is all kept, red is lost."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LinearSegmentedColormap

    ramp = LinearSegmentedColormap.from_list("kept", plots.KEPT_RAMP)
    kept, runs = kept_grid(table, "needles kept"), kept_grid(table, "8-word runs kept")
    n = int(table["n"].iloc[0])
    panels = (
        (kept / n, kept.map(lambda k: f"{int(k)}/{n}"), f"needles kept verbatim (of {n})"),
        (runs, runs.map("{:.2f}".format), "share of the drawn text's 8-word runs kept in order"),
    )
    with plots.style():
        fig, axes = plt.subplots(1, 2, figsize=(12.5, 0.45 * len(kept) + 2.6), sharey=True)
        for ax, (shares, labels, title) in zip(axes, panels, strict=True):
            ax.imshow(shares.to_numpy(dtype=float), cmap=ramp, vmin=0, vmax=1, aspect="auto")
            for (i, j), text in np.ndenumerate(labels.to_numpy()):
                dark = shares.iloc[i, j] < 0.5
                ink = plots.NEUTRAL["paper"] if dark else plots.NEUTRAL["ink"]
                ax.text(j, i, text, ha="center", va="center", fontsize=7.5, color=ink)
            ax.set_xticks(range(len(kept.columns)), kept.columns, rotation=30, ha="right")
            ax.set_yticks(range(len(kept)), kept.index)
            ax.grid(False)
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("reader")
        axes[0].set_ylabel("layout")
        fig.suptitle(
            f"What survives extraction: {len(kept)} layouts × {len(kept.columns)} readers, "
            f"{n} needles (one per question); a cell is one layout read by one reader",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def loss_figure(systems: Mapping[str, Ranks], clusters: Sequence[Hashable], clean: str = CLEAN):
    """R@4 and R@20 of every corpus (a dot) with Wilson's 95 % interval, the questions as
    the sample (a bar); the clean Markdown's R@k as a dashed line of the same colour."""
    import matplotlib.pyplot as plt

    names = [n for n in systems if n != clean]
    n = len(systems[clean])
    with plots.style():
        fig, ax = plt.subplots(figsize=(10, 0.42 * len(names) + 1.8))
        y = np.arange(len(names))[::-1]
        for k, dy in zip(KS, (0.15, -0.15), strict=True):
            color = plots.K_COLORS[k]
            values = [recall_at(systems[name], k) for name in names]
            bounds = np.array([clustered_wilson(hits_at(systems[c], k), clusters) for c in names])
            ax.hlines(y + dy, bounds[:, 0], bounds[:, 1], color=color, lw=2)
            ax.plot(values, y + dy, "o", color=color, ms=4.5, label=f"R@{k}")
            ax.axvline(recall_at(systems[clean], k), color=color, ls="--", lw=1)
        ax.set_yticks(y, names, fontsize=8)
        ax.set_xlim(0, 1.02)
        questions = len(set(clusters))
        ax.set_xlabel(
            f"Recall@k of the {n} queries (dot; bar: 95 %, the {questions} questions as the "
            "sample; dashed: the clean Markdown)"
        )
        ax.set_title(
            f"Retrieval over the extracted text: dense, strategy E, {len(names)} corpora",
            fontsize=9,
        )
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        fig.tight_layout()
    return fig
