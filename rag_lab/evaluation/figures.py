"""The figures a report shows, drawn from the records of :mod:`rag_lab.evaluation`.

Chunking (notebook 02): characters per chunk (:func:`size_figure`) and word-pieces against
the encoder's window (:func:`window_figure`). Retrieval (notebooks 03, 04): Recall@k over the
six chunkings (:func:`strategies_figure`) and of dense, BM25 and hybrid
(:func:`systems_figure`), drawn by :mod:`rag_lab.evaluation.recall_curves`. The gate
(notebook 06): answerable queries against negatives on one distance axis
(:func:`histogram_figure`) and the bluff curve (:func:`bluff_figure`). Claims: the paired
differences of a ledger as a forest (:func:`forest_figure`).

Each function returns a matplotlib figure in the lab's style (:mod:`rag_lab.evaluation.plots`);
the caller shows or saves it. Notebook-only figures live with their notebook's module.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import OVERLAP, STRATEGIES, TARGET
from rag_lab.evaluation import chapter, plots, recall_curves
from rag_lab.evaluation.chunking import Sizes, WordPieces
from rag_lab.evaluation.ledger import Direction, Entry
from rag_lab.evaluation.refusal import Distances
from rag_lab.metrics import Ranks
from rag_lab.stats import wilson_share


def _ingredient_grid(names: Sequence[str]) -> list[list[str | None]]:
    """The strategies laid out by ingredient: a row per kind of cut (blind, boundaries,
    boundaries with the header), without the overlap on the left and with it on the right.
    Rows none of ``names`` fills are dropped."""
    grid = []
    for cuts, header in (("blind", False), ("boundaries", False), ("boundaries", True)):
        row = [
            next(
                (
                    n
                    for n in names
                    if (STRATEGIES[n].cuts, STRATEGIES[n].header, STRATEGIES[n].overlap)
                    == (cuts, header, overlap)
                ),
                None,
            )
            for overlap in (False, True)
        ]
        if any(row):
            grid.append(row)
    return grid


def size_figure(sizes: Sizes):
    """Characters per chunk, one panel per strategy (a row per kind of cut, the overlap on
    the right): bars count chunks by ``content``, the chunk's own text, which is what the
    budget caps; the outline counts them by the embedded ``text`` (content plus the header
    and the overlap where the strategy has them), so the budget is drawn against what it
    applies to and what the encoder sees stays visible beside it."""
    import matplotlib.pyplot as plt

    grid = _ingredient_grid(list(sizes.text_lengths))
    longest = max(int(v.max()) for v in sizes.text_lengths.values())
    bins = np.arange(0.5, longest + 33, 32)  # edges at 32k + ½: the budget is an edge
    with plots.style():
        fig, axes = plt.subplots(
            len(grid),
            2,
            figsize=(8.6, 2.15 * len(grid) + 0.9),
            sharex=True,
            sharey="row",
            squeeze=False,
        )
        for row, names in zip(axes, grid, strict=True):
            for ax, name in zip(row, names, strict=True):
                if name is None:
                    ax.set_visible(False)
                    continue
                content, text = sizes.content_lengths[name], sizes.text_lengths[name]
                color = plots.STRATEGY_COLORS[name]
                ax.hist(content, bins=bins, color=color)
                adds = bool((text != content).any())
                if adds:
                    ax.hist(
                        text,
                        bins=bins,
                        histtype="step",
                        lw=1.2,
                        color=plots.NEUTRAL["ink"],
                        label="embedded text (content + header / overlap)",
                    )
                ax.axvline(TARGET, color=plots.NEUTRAL["ink"], lw=0.8, ls="--")
                medians = f"median content {int(np.median(content))}" + (
                    f", text {int(np.median(text))}" if adds else " (= text)"
                )
                ax.set_title(
                    f"{name}: {STRATEGIES[name].label} (n = {len(content)} chunks)\n{medians}",
                    fontsize=8,
                )
        fig.supxlabel("characters per chunk (bins of 32)", fontsize=9, y=0.105)
        for ax in axes[:, 0]:
            ax.set_ylabel("chunks")
        handles = [
            plt.Rectangle(
                (0, 0),
                1,
                1,
                color=plots.NEUTRAL["mid"],
                label="bars (the strategy's "
                "colour): content, the chunk's own characters, what is quoted and "
                "what the budget caps",
            ),
            plt.Line2D(
                [],
                [],
                color=plots.NEUTRAL["ink"],
                lw=1.2,
                label="outline: embedded "
                f"text, content + the header and the {OVERLAP}-character overlap",
            ),
            plt.Line2D(
                [],
                [],
                color=plots.NEUTRAL["ink"],
                lw=0.8,
                ls="--",
                label=f"the {TARGET}-character budget on content",
            ),
        ]
        fig.suptitle("Characters per chunk, by strategy", fontsize=10)
        fig.tight_layout(rect=(0, 0.09, 1, 1))
        fig.legend(handles=handles, loc="lower center", ncols=1, fontsize=7.5)
    return fig


def window_figure(pieces: WordPieces):
    """Word-pieces per embedded text for the boundary strategies, one panel each (the header
    in the lower row, the overlap on the right), with the encoder's window: the bars count
    chunks per bin on a log scale (the tail past the window is a handful), the grey outline
    is C, the boundaries alone, behind every panel, so a shift reads against it."""
    import matplotlib.pyplot as plt

    window = pieces.window
    names = [n for n in pieces.per_chunk if STRATEGIES[n].cuts == "boundaries"]
    grid = _ingredient_grid(names)
    base = next((n for n in names if not STRATEGIES[n].header and not STRATEGIES[n].overlap), None)
    longest = max(int(pieces.per_chunk[n].max()) for n in names)
    bins = np.arange(0.5, longest + 9, 8)  # edges at 8k + ½: the window is an edge
    with plots.style():
        fig, axes = plt.subplots(
            len(grid),
            2,
            figsize=(8.6, 2.3 * len(grid) + 0.9),
            sharex=True,
            sharey=True,
            squeeze=False,
        )
        for row, cells in zip(axes, grid, strict=True):
            for ax, name in zip(row, cells, strict=True):
                if name is None:
                    ax.set_visible(False)
                    continue
                counts = pieces.per_chunk[name]
                over = int((counts > window).sum())
                ax.hist(counts, bins=bins, color=plots.STRATEGY_COLORS[name])
                if base is not None and name != base:
                    ax.hist(
                        pieces.per_chunk[base],
                        bins=bins,
                        histtype="step",
                        lw=1.0,
                        color=plots.NEUTRAL["mid"],
                    )
                ax.axvline(window, color=plots.NEUTRAL["ink"], lw=0.8, ls="--")
                ax.set_yscale("log")
                ax.set_ylim(bottom=0.7)
                ax.set_title(
                    f"{name}: {STRATEGIES[name].label} (n = {len(counts)} chunks)\n"
                    f"median {int(np.median(counts))}, {over} over {window}, "
                    f"longest {int(counts.max())}",
                    fontsize=8,
                )
        fig.supxlabel(
            "word-pieces per embedded text, [CLS] and [SEP] included (bins of 8)",
            fontsize=9,
            y=0.095,
        )
        for ax in axes[:, 0]:
            ax.set_ylabel("chunks (log scale)")
        handles = [
            plt.Line2D(
                [],
                [],
                color=plots.NEUTRAL["ink"],
                lw=0.8,
                ls="--",
                label=f"the encoder's {window}-word-piece window: past it, truncated "
                "without a warning",
            ),
        ]
        if base is not None:
            handles.insert(
                0,
                plt.Line2D(
                    [],
                    [],
                    color=plots.NEUTRAL["mid"],
                    lw=1.0,
                    label=f"grey outline: {base} ({STRATEGIES[base].label}), for comparison",
                ),
            )
        fig.suptitle("What the encoder sees, per chunk", fontsize=10)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        fig.legend(handles=handles, loc="lower center", ncols=1, fontsize=7.5)
    return fig


def histogram_figure(d: Distances, kinds: Sequence[str], strategy: str):
    """Answerable queries against negatives on one distance axis, back to back: above the
    line each answerable query's distance to its needle's chunk (bars) and to its nearest
    chunk of any kind, the distance the gate compares (outline); below it each negative's
    distance to its nearest chunk, stacked by kind. Where bars stand on both sides, the
    two overlap; the triangles mark the nearest negative and the farthest answer, and the
    legend counts the queries on the wrong side of each."""
    import matplotlib.pyplot as plt

    bins = np.arange(0.1, 1.0001, 0.025)
    kinds = np.asarray(kinds)
    answerable, negative = plots.ROLE_COLORS["answerable"], plots.ROLE_COLORS["negative"]
    worst_in, best_out = float(np.nanmax(d.needle)), float(d.negative.min())
    needle = d.needle[~np.isnan(d.needle)]
    farther = int((needle >= best_out).sum())
    nearer = int((d.negative < worst_in).sum())
    with plots.style():
        fig, ax = plt.subplots(figsize=(8.0, 5.0))
        up, _ = np.histogram(needle, bins)
        ax.bar(
            bins[:-1],
            up,
            width=0.025,
            align="edge",
            color=answerable,
            alpha=0.55,
            lw=0,
            label=f"answerable: to the needle's chunk (n = {len(needle)})",
        )
        nearest, _ = np.histogram(d.nearest, bins)
        ax.stairs(
            nearest,
            bins,
            color=answerable,
            lw=1.3,
            label="answerable: to the nearest chunk, the distance the gate compares",
        )
        bottom = np.zeros(len(bins) - 1)
        for kind, role in (("uncovered", "negative"), ("offtopic", "offtopic")):
            values = d.negative[kinds == kind]
            down, _ = np.histogram(values, bins)
            ax.bar(
                bins[:-1],
                -down,
                bottom=-bottom,
                width=0.025,
                align="edge",
                color=plots.ROLE_COLORS[role],
                alpha=0.8,
                lw=0,
                label=f"{kind} negatives: to the nearest chunk (n = {len(values)})",
            )
            bottom += down
        ax.axhline(0, color=plots.NEUTRAL["ink"], lw=0.8)
        ax.plot(
            best_out,
            0,
            marker="^",
            color=negative,
            ms=9,
            ls="",
            clip_on=False,
            zorder=4,
            label=f"nearest negative, {best_out:.3f}: {farther} of {len(needle)} answers "
            "are farther",
        )
        ax.plot(
            worst_in,
            0,
            marker="v",
            color=answerable,
            ms=9,
            ls="",
            clip_on=False,
            zorder=4,
            label=f"farthest answer, {worst_in:.3f}: {nearer} of "
            f"{len(d.negative)} negatives are nearer",
        )
        ax.axvline(
            chapter.CUTOFF,
            color=plots.NEUTRAL["mid"],
            lw=0.9,
            ls="--",
            label=f"the chapter's cutoff, {chapter.CUTOFF}",
        )
        top = max(up.max(), nearest.max())
        ax.set_ylim(-bottom.max() * 1.25, top * 1.25)
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{abs(v):.0f}"))
        ax.set_ylabel("queries per 0.025 of distance\n(negatives below the line)")
        ax.set_xlabel("cosine distance (1 − cos)")
        ax.set_xlim(bins[0], bins[-1])
        ax.set_title(
            f"Strategy {strategy}: answerable queries above the line, negatives below; "
            "where both have bars, no cutoff separates them",
            fontsize=9,
        )
        handles, labels = ax.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda i: not labels[i].startswith("answerable"))
        ax.legend(
            [handles[i] for i in order],
            [labels[i] for i in order],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.13),
            ncols=2,
            fontsize=7.5,
        )
        fig.tight_layout()
    return fig


def bluff_figure(
    table: pd.DataFrame,
    n_answerable: int,
    n_negatives: int,
    chosen: float | None = None,
    answerable_questions: int | None = None,
):
    """Bluffs and refusals as the cutoff sweeps: shares as steps with 95 % bands, and no
    cutoff (everything passes) as its own slot past the right end. The chapter's points are
    black crosses; dashed, the chapter's cutoff; dotted, the cutoff picked here
    (``chosen``). The bands are Wilson's; for the answerable queries, with their
    ``answerable_questions`` questions as the sample (:func:`rag_lab.stats.clustered_wilson`)
    when given."""
    import matplotlib.pyplot as plt

    t = table[table["cutoff"].notna()]
    none = table[table["cutoff"].isna()]
    hi = float(t["cutoff"].max())
    slot = hi + 0.07  # no cutoff: past every cutoff swept, apart from them
    with plots.style():
        fig, ax = plt.subplots(figsize=(8.0, 4.6))
        lines = (
            (
                "bluffs",
                n_negatives,
                plots.ROLE_COLORS["negative"],
                "-",
                f"negatives answered: bluffs (of {n_negatives})",
            ),
            (
                "refused",
                n_answerable,
                plots.ROLE_COLORS["answerable"],
                "-",
                f"answerable queries refused (of {n_answerable})",
            ),
            (
                "answered without needle",
                n_answerable,
                plots.ROLE_COLORS["other"],
                "--",
                f"answerable, answered without the needle (of {n_answerable})",
            ),
        )
        for column, total, color, style, label in lines:
            counts = t[column].to_numpy(dtype=int)
            sample = total if column == "bluffs" else answerable_questions or total
            ax.step(
                t["cutoff"],
                counts / total,
                where="post",
                color=color,
                ls=style,
                lw=1.5,
                label=label,
            )
            if style == "-":
                bands = np.array([wilson_share(k / total, sample) for k in counts])
                ax.fill_between(
                    t["cutoff"],
                    bands[:, 0],
                    bands[:, 1],
                    step="post",
                    color=color,
                    alpha=0.12,
                    lw=0,
                )
            if len(none):
                k = int(none[column].iloc[0])
                lo, hi_ = wilson_share(k / total, sample)
                ax.errorbar(
                    slot,
                    k / total,
                    yerr=[[k / total - lo], [hi_ - k / total]],
                    fmt="o" if style == "-" else "D",
                    color=color,
                    ms=5,
                    capsize=3,
                    clip_on=False,
                    zorder=4,
                )
        ax.axvspan(hi + 0.025, slot + 0.045, color=plots.NEUTRAL["paper"], lw=0, zorder=0)
        crosses = [
            (c, b / chapter.NEGATIVES, f"bluffs {b}/{chapter.NEGATIVES}")
            for c, b in chapter.BLUFFS.items()
        ]
        crosses += [
            (c, r / chapter.CORPUS["queries"], f"refused {r}/{chapter.CORPUS['queries']}")
            for c, r in chapter.REFUSED_ANSWERABLE.items()
        ]
        for i, (cutoff, share, text) in enumerate(crosses):
            x = slot if cutoff is None else cutoff
            ax.plot(
                x,
                share,
                **plots.CHAPTER_MARK,
                zorder=5,
                label="the chapter's points" if i == 0 else None,
            )
            ax.annotate(
                text,
                (x, share),
                xytext=(-6, 5),
                textcoords="offset points",
                ha="right",
                fontsize=7,
                bbox={"boxstyle": "round,pad=0.15", "fc": plots.NEUTRAL["paper"], "lw": 0},
                zorder=6,
            )
        marks = [(chapter.CUTOFF, "--", f"the chapter's cutoff {chapter.CUTOFF}")]
        if chosen is not None:
            marks.append((chosen, ":", f"chosen here {chosen:.3f}"))
        for x, style, text in marks:
            ax.axvline(x, color=plots.NEUTRAL["ink"], lw=0.9, ls=style)
            left = chosen is not None and x == min(m[0] for m in marks) and len(marks) > 1
            ax.text(x, 1.1, text, ha="right" if left else "left", va="bottom", fontsize=7)
        ticks = [c for c in np.arange(0.3, hi + 1e-9, 0.1)]
        ax.set_xticks([*ticks, slot], [*(f"{c:.1f}" for c in ticks), "no\ncutoff"])
        ax.set_xlim(float(t["cutoff"].min()) - 0.01, slot + 0.045)
        ax.set_xlabel("cutoff (cosine distance; keep ≤ 4 chunks strictly below it)")
        ax.set_ylabel("share of queries (bands, bars: Wilson 95 %)")
        ax.set_ylim(0, 1.17)
        ax.set_yticks(np.linspace(0, 1, 6))
        ax.set_title(
            "The bluff curve: every cutoff trades bluffs for refusals; no cutoff lets "
            "everything through (right)",
            fontsize=9,
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=8)
        fig.tight_layout()
    return fig


def strategies_figure(ranks_by: Mapping[str, Ranks], clusters: Sequence[Hashable] | None = None):
    """Recall@k curves of dense retrieval over each chunking, one panel per strategy."""
    labels = {name: f"{name}: {STRATEGIES[name].label}" for name in ranks_by}
    return recall_curves.recall_curve_figure(
        ranks_by,
        "Dense retrieval, six chunkings",
        plots.STRATEGY_COLORS,
        labels=labels,
        clusters=clusters,
    )


def systems_figure(
    ranks: Mapping[str, Ranks], strategy: str, clusters: Sequence[Hashable] | None = None
):
    """Recall@k curves of dense, BM25 and their fusion on one chunking."""
    return recall_curves.recall_curve_figure(
        ranks, f"Strategy {strategy}: dense, BM25 and RRF", plots.SYSTEM_COLORS, clusters=clusters
    )


def forest_figure(entries: Sequence[Entry], title: str, *, label_benchmark: bool = False):
    """The paired differences among ``entries``, one row a claim: the estimate by question
    (a dot) and its 95 % interval (a bar) coloured by verdict, the chapter's effect on the
    same scale (a black cross); solid: zero, dashed: the equivalence margin of a
    no-difference claim. Returns None when no entry is a paired difference."""
    import matplotlib.pyplot as plt

    paired = [
        e
        for e in entries
        if e.direction in (Direction.BETTER, Direction.WORSE, Direction.SAME) and e.ci
    ]
    if not paired:
        return None
    with plots.style():
        fig, ax = plt.subplots(figsize=(8.0, 0.32 * len(paired) + 1.5))
        y = np.arange(len(paired))[::-1]
        for yi, e in zip(y, paired, strict=True):
            color = plots.VERDICT_COLORS[e.verdict.value]
            ax.plot(e.ci, [yi, yi], color=color, lw=2.2, solid_capstyle="butt")
            ax.plot(e.estimate, yi, "o", color=color, ms=4.5)
            if e.chapter_effect is not None:
                ax.plot(e.chapter_effect, yi, **plots.CHAPTER_MARK)
        ax.axvline(0, color=plots.NEUTRAL["ink"], lw=0.8)
        for m in {e.margin for e in paired if e.margin and e.direction is Direction.SAME}:
            for side in (m, -m):
                ax.axvline(side, color=plots.NEUTRAL["ink"], lw=0.6, ls="--")
        labels = [f"{e.claim} · {e.benchmark}" if label_benchmark else e.claim for e in paired]
        ax.set_yticks(y, labels)
        ax.tick_params(axis="y", labelsize=7 if len(paired) > 20 else 8)
        ax.set_ylim(-0.7, len(paired) - 0.3)
        ax.set_xlabel(
            "difference in Recall@k, a − b, by question (dot: estimate; bar: 95 % interval)"
        )
        verdicts = list(dict.fromkeys(e.verdict for e in paired))
        handles = [
            plt.Line2D([], [], color=plots.VERDICT_COLORS[v.value], lw=2.2, label=v.label)
            for v in verdicts
        ]
        if any(e.chapter_effect is not None for e in paired):
            handles.append(plt.Line2D([], [], **plots.CHAPTER_MARK, label="the chapter's effect"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5)
        questions = sorted({_questions(e) for e in paired} - {None})
        n = f", n = {questions[0]} questions" if len(questions) == 1 else ""
        ax.set_title(f"{title} ({len(paired)} differences{n})", fontsize=9)
        fig.tight_layout()
    return fig


def _questions(e: Entry) -> int | None:
    """The questions behind an entry's ``here`` (``+13/−0 of 32 questions``), if it says."""
    words = e.here.split()
    if len(words) >= 3 and words[-1] == "questions" and words[-2].isdigit():
        return int(words[-2])
    return None
