"""Notebook 11's two figures, drawn from the records: survival by layout and reader, and
retrieval over each extracted corpus against the clean Markdown."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rag_lab.evaluation import plots
from rag_lab.experiments.nb11_extraction.retrieval import CLEAN
from rag_lab.metrics import Ranks, recall_at


def survival_figure(table: pd.DataFrame):
    """Needles kept (with Wilson intervals) and 8-word runs kept, by layout and reader
    (:func:`~.kept.survival_table`)."""
    import matplotlib.pyplot as plt

    with plots.style():
        fig, axes = plt.subplots(1, 2, figsize=(12.5, 4.2), sharey=True)
        layouts = list(dict.fromkeys(table["layout"]))
        readers = list(dict.fromkeys(table["reader"]))
        width = 0.8 / len(readers)
        colors = plt.get_cmap("tab10").colors
        for j, reader in enumerate(readers):
            rows = table[table["reader"] == reader].set_index("layout").loc[layouts]
            x = np.arange(len(layouts)) + (j - (len(readers) - 1) / 2) * width
            err = np.vstack([rows["share"] - rows["lo"], rows["hi"] - rows["share"]])
            axes[0].bar(x, rows["share"], width, yerr=err, capsize=2, color=colors[j], label=reader)
            axes[1].bar(x, rows["8-word runs kept"], width, color=colors[j], label=reader)
        titles = ("needles kept verbatim (Wilson 95 %)", "8-word runs of the drawn text kept")
        for ax, title in zip(axes, titles, strict=True):
            ax.set_xticks(np.arange(len(layouts)), layouts, rotation=15)
            ax.set_ylim(0, 1.05)
            ax.set_title(title)
        axes[0].set_ylabel("share")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncols=len(readers), fontsize=8)
        fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def loss_figure(systems: Mapping[str, Ranks], clean: str = CLEAN):
    """R@4 and R@20 of every corpus, the clean Markdown's as a line."""
    import matplotlib.pyplot as plt

    names = [n for n in systems if n != clean]
    with plots.style():
        fig, ax = plt.subplots(figsize=(11, 0.42 * len(names) + 1.6))
        y = np.arange(len(names))[::-1]
        for k, color, dy in ((4, "tab:blue", 0.18), (20, "tab:orange", -0.18)):
            values = [recall_at(systems[n], k) for n in names]
            ax.barh(y + dy, values, 0.34, color=color, label=f"R@{k}")
            ax.axvline(recall_at(systems[clean], k), color=color, ls="--", lw=1)
        ax.set_yticks(y, names, fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_xlabel("Recall@k of the 64 queries (dashed: the clean Markdown)")
        ax.set_title("Retrieval over the extracted text, dense, strategy E")
        ax.legend(loc="lower right")
        fig.tight_layout()
    return fig
