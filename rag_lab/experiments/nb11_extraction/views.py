"""The run's records as tables that fit a page (:class:`~rag_lab.experiments.present.Table`)
and as figures. The records stay numbers; they are formatted here, last, and each caption
says what a row is and the units."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.claims.render import METHODS
from rag_lab.evaluation import plots
from rag_lab.evaluation.ledger import PAIRED_METHOD
from rag_lab.evaluation.paired import Finding
from rag_lab.experiments.nb11_extraction.ocr import OcrRun, ocr_misses
from rag_lab.experiments.nb11_extraction.pdfs import Typeset, layout_table
from rag_lab.experiments.nb11_extraction.retrieval import CLEAN, KS
from rag_lab.experiments.nb11_extraction.run import Results, mitigations
from rag_lab.experiments.nb11_extraction.survival import BASE
from rag_lab.experiments.present import Table
from rag_lab.metrics import Ranks, hits_at, recall_at
from rag_lab.sources.pdf.document import OCR_MIN_CONFIDENCE
from rag_lab.stats import clustered_wilson, wilson

_MINUS = "\N{MINUS SIGN}"


def _cells(fmt: str, *columns) -> list[str]:
    """``fmt`` filled row by row from ``columns``; a NaN row reads ``–``."""
    return [
        "–" if any(pd.isna(v) for v in row) else fmt.format(*row)
        for row in zip(*columns, strict=True)
    ]


def layout_view(sets: Mapping[str, Typeset]) -> Table:
    """:func:`~.pdfs.layout_table`, the needles placed of all in one cell."""
    t = layout_table(sets)
    return Table(
        t.drop(columns="needles").assign(
            **{"needles placed": _cells("{} of {}", t["needles placed"], t["needles"])}
        ),
        caption="Each layout's PDFs: needles placed (found in the drawn text), needles a page "
        "break cuts in two, characters the core fonts cannot draw",
    )


def kept_grid(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """One column of :func:`~.survival.survival_table` as a grid, a row per layout and a
    column per reader, both in the order the table has them."""
    layouts = list(dict.fromkeys(table["layout"]))
    readers = list(dict.fromkeys(table["reader"]))
    return table.pivot(index="layout", columns="reader", values=column).loc[layouts, readers]


def kept_views(survival: pd.DataFrame) -> tuple[Table, Table]:
    """Needles kept and 8-word runs kept, a row per reader and a column per layout."""
    n = int(survival["n"].iloc[0])
    kept = kept_grid(survival, "needles kept").T.map(lambda k: f"{int(k)}/{n}")
    runs = kept_grid(survival, "8-word runs kept").T.map("{:.3f}".format)
    return (
        Table(
            kept.rename_axis(index="reader", columns=None),
            caption="Needles found verbatim (whitespace normalised), by reader and layout",
        ),
        Table(
            runs.rename_axis(index="reader", columns=None),
            caption="Share of the drawn text's runs of 8 consecutive words found in the text",
        ),
    )


def losses_view(tests: pd.DataFrame, base: str = BASE) -> Table:
    """:func:`~.survival.layout_tests` where a needle differs: the needles kept here and lost
    on ``base`` (+) and the reverse (−), the exact sign test, Holm's p, the finding."""
    differ = tests[(tests["wins"] + tests["losses"]) > 0].reset_index(level="reader")
    frame = pd.DataFrame(
        {
            "reader": differ["reader"],
            "needles +/−": _cells("+{}/" + _MINUS + "{}", differ["wins"], differ["losses"]),
            "p": _cells("{:#.2g}", differ["p"]),
            "p Holm": _cells("{:#.2g}", differ["p Holm"]),
            "finding": [f.value for f in differ["finding"]],
        },
        index=differ.index,
    )
    return Table(
        frame,
        caption=f"Each layout against {base}, reader by reader, where a needle differs "
        f"(+: kept here, lost on {base}); exact sign test per needle, Holm over all "
        f"{len(tests)} comparisons; the other {len(tests) - len(differ)} keep the same needles",
    )


def rows_view(rows: pd.DataFrame) -> Table:
    """:func:`~.survival.rows_table`: ``kept/rows [lo, hi]``, and the tables they are in."""
    kept = _cells("{}/{} [{:.3f}, {:.3f}]", rows["kept"], rows["rows"], rows["lo"], rows["hi"])
    return Table(
        pd.DataFrame({"rows kept": kept, "tables": rows["tables"]}, index=rows.index),
        caption="Table rows (header rows included) whose cells come out in order, Wilson 95 % "
        "(descriptive: rows of one table are not independent)",
    )


def waste_views(results: Results) -> tuple[Table, Table]:
    """The running-header layout: what running lines cost (strategy E's chunks carrying one,
    the embedded word-pieces they take), then what removal by repetition does (needles
    before and after it, the lost ones a page break cuts, lines it left and took)."""
    w = results.waste
    rh, after = (
        t[t["layout"] == "running-header"].set_index("reader")
        for t in (results.survival, results.survival_removed)
    )

    cost = {
        "running lines in the text": w["running lines in the text"].astype(int),
        "chunks carrying one": _cells(
            "{:.0f} of {:.0f} ({:.1%})",
            w["carrying running lines"],
            w["chunks"],
            w["share of chunks"],
        ),
        "word-pieces they take": _cells(
            "{:.0f} ({:.2%})", w["word-pieces wasted"], w["share of embedded word-pieces"]
        ),
    }
    removal = {
        "needles before": pd.Series(_cells("{}/{}", rh["needles kept"], rh["n"]), rh.index),
        "after": pd.Series(_cells("{}/{}", after["needles kept"], after["n"]), after.index),
        "lost at a break": pd.Series(
            _cells("{} of {}", rh["lost, cut by a page break"], rh["n"] - rh["needles kept"]),
            rh.index,
        ),
        "lines left": pd.Series(_cells("{:.0f}", w["left after removal"]), w.index),
        "body lines taken": pd.Series(_cells("{:.0f}", w["body lines removed"]), w.index),
    }
    return (
        Table(
            pd.DataFrame(cost, index=w.index),
            caption="On the running-header layout: strategy E's chunks carrying a running line; "
            "the word-pieces those lines take (share of all embedded, each chunk to the window)",
        ),
        Table(
            pd.DataFrame(removal).loc[w.index],
            caption="Removal by repetition: needles kept before and after it; of the needles lost "
            "before it, those a page break cuts; running lines it left and body lines it took, "
            "against the ground truth (–: rag-lab index has removed them itself)",
        ),
    )


def picks_views(results: Results) -> tuple[Table, ...]:
    """Each layout's reader keeping the most needles and the one keeping the fewest; then
    the corpora left out as the same text as one measured, if any."""
    picks = pd.DataFrame(results.picks, index=["most needles", "fewest"]).T
    tables = [
        Table(
            picks.rename_axis("layout"),
            caption="The readers retrieval is measured on (ties: 8-word runs, then reader order)",
        )
    ]
    if results.same_text:
        same = pd.Series(results.same_text, name="the same text as").rename_axis("left out")
        tables.append(Table(same.to_frame(), caption="Corpora left out, so none is tested twice"))
    return tuple(tables)


def _label(name: str) -> str:
    """A corpus's name shortened for a table: running lines removed said ``lines removed``."""
    return name.replace(" · running lines removed", " · lines removed")


def destroyed_view(destroyed: pd.DataFrame, systems: Mapping[str, Ranks]) -> Table:
    """:func:`~.retrieval.destroyed_table` beside each corpus's Recall@k."""
    frame = destroyed[["chunks", "needles in the text", "needles no chunk holds"]].rename(
        columns={"needles in the text": "in the text", "needles no chunk holds": "destroyed"}
    )
    for k in KS:
        frame[f"R@{k}"] = [recall_at(systems[name], k) for name in frame.index]
    return Table(
        frame.rename(index=_label),
        caption="Strategy E over each corpus: chunks; needles in the text (one per question); "
        "needles no chunk holds whole (destroyed); dense Recall@k of the queries",
    )


def loss_views(loss: pd.DataFrame, clean: str = CLEAN) -> tuple[Table, ...]:
    """:func:`~.retrieval.loss_table`, one table per k: each corpus against ``clean``, the
    difference in Recall@k by question with its interval, the questions won and lost,
    Holm's p (over every row of both tables), and whether that test shows it worse."""
    words = {Finding.B_BETTER: "worse", Finding.A_BETTER: "better"}
    tables = []
    for k, at in loss.groupby("k", sort=True):
        frame = pd.DataFrame(
            {
                f"R@{k}: a − b": _cells(
                    "{:+.3f} [{:+.3f}, {:+.3f}]", at["a − b"], at["lo"], at["hi"]
                ),
                "questions": _cells("+{}/" + _MINUS + "{}", at["q wins"], at["q losses"]),
                "p Holm": _cells("{:#.2g}", at["p Holm"]),
                "finding": [words.get(d, "–") for d in at["difference"]],
            },
            index=pd.Index([_label(a) for a in at["a"]], name="corpus (a)"),
        )
        caption = (
            f"Recall@{k} of each corpus (a) against the clean {clean} (b), by question: a − b "
            f"with its 95 % interval ({METHODS[PAIRED_METHOD]}); questions won/lost by a; Holm "
            f"over all {len(loss)} rows (both k); finding: worse (or better) than {clean}, – : "
            "no difference shown by question"
        )
        tables.append(Table(frame, caption=caption))
    return tuple(tables)


def text_layer_views(results: Results) -> tuple[Table, ...]:
    """What each reader gets from the scans, then what ``rag-lab index`` says of them."""
    layer = results.text_layer
    (layout,) = set(layer.index.get_level_values("layout"))
    tables = [
        Table(
            layer.reset_index(level="layout", drop=True),
            caption=f"What each reader gets from the {layout} PDFs: pages, characters other than "
            "whitespace, documents with a text layer",
        )
    ]
    if results.refusals is not None:
        r = results.refusals
        tables.append(
            Table(
                pd.DataFrame({"scans": _cells("{} of {}", r["scans"], r["of"])}, index=r.index),
                caption="What rag-lab index (without --ocr) says of each scan",
            )
        )
    return tuple(tables)


def ocr_view(run: OcrRun, scanned: Typeset) -> Table:
    """What Tesseract read on the pages holding needles: pages and documents read of all,
    the pages' mean word confidence, needles kept verbatim and with marks ignored."""
    conf, n = run.pages["confidence"], len(run.needles)
    pages = sum(len(p.pages) for p in scanned.placed.values())

    def kept(column: str) -> str:
        k = int(run.needles[column].sum())
        return "{}/{} [{:.3f}, {:.3f}]".format(k, n, *wilson(k, n))

    shown = {
        "pages read": f"{len(run.pages)} of {pages}",
        "documents read": f"{run.pages['document'].nunique()} of {len(scanned.files)}",
        "page confidence, mean (range)": f"{conf.mean():.1f} ({conf.min():.1f}–{conf.max():.1f})",
        "needles kept verbatim": kept("kept"),
        "needles kept, marks ignored": kept("kept, marks ignored"),
    }
    return Table(
        pd.DataFrame({"OCR": shown}).rename_axis("Tesseract"),
        caption="OCR of the scans' pages that hold a needle: confidence 0–100; needles with "
        "Wilson 95 %; marks ignored: quotes, backticks and asterisks left out on both sides",
    )


def threshold_view(thresholds: pd.DataFrame, default: float = OCR_MIN_CONFIDENCE) -> Table:
    """:func:`~.ocr.ocr_threshold_table`, needles kept as ``kept/needles``; the row of
    ``rag-lab index --ocr``'s default threshold marked."""
    t = thresholds
    frame = pd.DataFrame(
        {
            "pages flagged": _cells("{} of {}", t["pages flagged"], t["pages"]),
            "kept, not flagged": _cells("{}/{}", t["kept, not flagged"], t["needles, not flagged"]),
            "kept, flagged": _cells("{}/{}", t["kept, flagged"], t["needles, flagged"]),
            "p (Fisher)": _cells("{:#.2g}", t["p"]),
        },
        index=pd.Index(
            [f"{x:g}" + (" (default)" if x == default else "") for x in t.index],
            name="flag pages under",
        ),
    )
    return Table(
        frame,
        caption="Pages flagged when their mean word confidence (0–100) is under the threshold "
        "(default: rag-lab index --ocr's); needles kept verbatim on the pages not flagged and "
        "flagged; Fisher's exact p of needles lost, flagged against not, each unadjusted",
    )


def misses_text(run: OcrRun, width: int = 88) -> str:
    """Each needle OCR did not keep verbatim, the needle above what Tesseract read in its
    place, from a little before their first difference, each line cut to ``width``."""
    return "\n".join(
        f"{r['document']} (marks ignored: {r['marks ignored']})\n"
        f"  needle   {r['needle']}\n"
        f"  OCR read {r['OCR read']}"
        for r in ocr_misses(run, width).to_dict("records")
    )


def mitigation_tables(results: Results) -> tuple[Table, Table]:
    """:func:`~.run.mitigations`: where each is measured and the needles it recovers; then
    retrieval without → with it, and the sign test by question (each p unadjusted)."""
    t = mitigations(results)
    kept = [
        f"{'?' if pd.isna(w) else int(w)}/{n} → {int(k)}/{n}"
        for w, k, n in zip(t["kept without"], t["kept with"], t["n"], strict=True)
    ]
    retrieval = {}
    for k in KS:
        tests = t[f"R@{k} test"]
        retrieval[f"R@{k}"] = _cells("{:.3f} → {:.3f}", t[f"R@{k} without"], t[f"R@{k} with"])
        retrieval[f"R@{k} by question"] = ["not measured" if pd.isna(x) else str(x) for x in tests]
    return (
        Table(
            t[["without it", "with it"]].assign(**{"needles kept": kept}),
            caption="Each mitigation, measured without it and with it: needles found verbatim",
        ),
        Table(
            pd.DataFrame(retrieval, index=t.index),
            caption="Dense retrieval (strategy E) without → with it; by question: wins/losses of "
            "with over without, exact sign test, each p unadjusted (OCR's is not measured: only "
            "a sample of pages is read)",
        ),
    )


# --- figures ----------------------------------------------------------------------------------


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
        ax.set_xlabel(
            f"Recall@k of the {len(systems[clean])} queries (dot; bar: Wilson 95 %, the "
            f"{len(set(clusters))} questions as the sample; dashed: the clean Markdown)"
        )
        ax.set_title(
            f"Retrieval over the extracted text: dense, strategy E, {len(names)} corpora",
            fontsize=9,
        )
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        fig.tight_layout()
    return fig
