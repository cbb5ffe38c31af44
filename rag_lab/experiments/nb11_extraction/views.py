"""The run's records as tables that fit a page (:class:`~rag_lab.experiments.present.Table`):
what the notebook shows, each with its units in the caption. The records stay numbers; the
words and the formatting are made here, last."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from rag_lab.evaluation.paired import Finding
from rag_lab.experiments.nb11_extraction.figures import kept_grid
from rag_lab.experiments.nb11_extraction.kept import _BASE
from rag_lab.experiments.nb11_extraction.ocr import OcrRun, ocr_misses
from rag_lab.experiments.nb11_extraction.pdfs import Typeset, layout_table
from rag_lab.experiments.nb11_extraction.retrieval import CLEAN
from rag_lab.experiments.present import Table


def layout_view(sets: Mapping[str, Typeset]) -> Table:
    """:func:`~.pdfs.layout_table` for reading: the needles placed of all in one cell."""
    t = layout_table(sets)
    frame = pd.DataFrame(
        {
            "documents": t["documents"],
            "pages": t["pages"],
            "needles placed": [
                f"{p} of {n}" for p, n in zip(t["needles placed"], t["needles"], strict=True)
            ],
            "cut by a page break": t["cut by a page break"],
            "characters drawn as ?": t["characters drawn as ?"],
        },
        index=t.index,
    )
    return Table(
        frame,
        caption="Each layout's PDFs: needles placed (found in the drawn text), needles a page "
        "break cuts in two, characters the core fonts cannot draw",
    )


def kept_views(survival: pd.DataFrame) -> tuple[Table, Table]:
    """Needles kept and 8-word runs kept, a row per reader and a column per layout."""
    n = int(survival["n"].iloc[0])
    kept = kept_grid(survival, "needles kept").T.map(lambda k: f"{int(k)}/{n}")
    runs = kept_grid(survival, "8-word runs kept").T.map("{:.3f}".format)
    return (
        Table(
            kept.rename_axis(index="reader", columns=None),
            caption=f"Needles found verbatim (whitespace normalised) of the {n}, by reader and "
            "layout",
        ),
        Table(
            runs.rename_axis(index="reader", columns=None),
            caption="Share of the drawn text's runs of 8 consecutive words found in the text",
        ),
    )


def losses_view(tests: pd.DataFrame, base: str = _BASE) -> Table:
    """:func:`~.kept.layout_tests`, the comparisons where a needle differs only: the needles
    kept here and lost on ``base`` (+) and the reverse (−), the exact sign test, Holm's p
    over every comparison, and what the adjusted test shows."""
    differ = tests[(tests["wins"] + tests["losses"]) > 0].reset_index(level="reader")
    frame = pd.DataFrame(
        {
            "reader": differ["reader"],
            "needles +/−": [
                f"+{w}/\N{MINUS SIGN}{lo}"
                for w, lo in zip(differ["wins"], differ["losses"], strict=True)
            ],
            "p": [f"{p:#.2g}" for p in differ["p"]],
            "p Holm": [f"{p:#.2g}" for p in differ["p Holm"]],
            "finding": [f.label for f in differ["finding"]],
        },
        index=differ.index,
    )
    same = len(tests) - len(differ)
    return Table(
        frame,
        caption=f"Each layout against {base}, reader by reader, where a needle differs "
        f"(+: kept here, lost on {base}); Holm over all {len(tests)} comparisons; the other "
        f"{same} keep the same needles",
    )


def rows_view(rows: pd.DataFrame) -> Table:
    """:func:`~.rows.rows_table` for reading: ``kept/rows [lo, hi]``."""
    shown = [
        f"{k}/{n} [{lo:.3f}, {hi:.3f}]"
        for k, n, lo, hi in zip(rows["kept"], rows["rows"], rows["lo"], rows["hi"], strict=True)
    ]
    return Table(
        pd.DataFrame({"rows kept": shown}, index=rows.index),
        caption="Table rows whose cells come out in order, Wilson 95 % (descriptive)",
    )


def waste_views(
    waste: pd.DataFrame, survival: pd.DataFrame, removed: pd.DataFrame
) -> tuple[Table, Table]:
    """:func:`~.running.waste_table` in two tables: what running lines cost (strategy E's
    chunks carrying one, the embedded word-pieces they take), then what removal by
    repetition does (needles before and after, running lines left, body lines taken)."""
    cost = pd.DataFrame(
        {
            "running lines in the text": waste["running lines in the text"].astype(int),
            "chunks carrying one": [
                f"{int(c)} of {int(n)} ({s:.1%})"
                for c, n, s in zip(
                    waste["carrying running lines"],
                    waste["chunks"],
                    waste["share of chunks"],
                    strict=True,
                )
            ],
            "word-pieces they take": [
                f"{int(p)} ({s:.2%})"
                for p, s in zip(
                    waste["word-pieces wasted"], waste["share of embedded word-pieces"], strict=True
                )
            ],
        },
        index=waste.index,
    )

    def kept(table: pd.DataFrame) -> pd.Series:
        rh = table[table["layout"] == "running-header"].set_index("reader")
        return pd.Series(
            [f"{k}/{n}" for k, n in zip(rh["needles kept"], rh["n"], strict=True)],
            index=rh.index,
        )

    def count(v: float) -> str:
        return "–" if isinstance(v, float) and math.isnan(v) else f"{int(v)}"

    removal = pd.DataFrame(
        {
            "needles before": kept(survival),
            "needles after": kept(removed),
            "running lines left": waste["left after removal"].map(count),
            "body lines removed": waste["body lines removed"].map(count),
        }
    ).loc[waste.index]
    return (
        Table(
            cost,
            caption="On the running-header layout: strategy E's chunks carrying a running line; "
            "the word-pieces those lines take (share of all embedded, each chunk to the window)",
        ),
        Table(
            removal,
            caption="Removal by repetition, checked against the ground truth (– : rag-lab "
            "index has removed them itself)",
        ),
    )


def picks_view(picks: Mapping[str, tuple[str, str]]) -> Table:
    """Each layout's reader keeping the most needles and the one keeping the fewest."""
    return Table(
        pd.DataFrame(
            {
                "most needles": [b for b, _ in picks.values()],
                "fewest": [w for _, w in picks.values()],
            },
            index=pd.Index(list(picks), name="layout"),
        ),
        caption="The readers retrieval is measured on (ties: 8-word runs, then reader order)",
    )


def destroyed_view(destroyed: pd.DataFrame) -> Table:
    """:func:`~.retrieval.destroyed_table` for reading, the questions in the caption."""
    n = int(destroyed["questions"].iloc[0])
    return Table(
        destroyed[["chunks", "needles in the text", "needles no chunk holds"]].rename(
            columns={"needles no chunk holds": "destroyed"}
        ),
        caption=f"Strategy E over each corpus: chunks, needles in the text (of {n}, one per "
        "question), needles no chunk holds whole (destroyed)",
    )


def corpus_label(name: str) -> str:
    """A corpus's name as the loss tables show it: the running lines removed by repetition
    said as ``lines removed`` (the rest of the name as it is)."""
    return name.replace(" · running lines removed", " · lines removed")


def loss_views(loss: pd.DataFrame, clean: str = CLEAN) -> tuple[Table, ...]:
    """:func:`~.retrieval.loss_table` for reading, one table per k: each corpus against
    ``clean``, the difference in Recall@k by question with its interval, the questions won
    and lost, Holm's p (over every row of both tables), and whether the adjusted test shows
    it worse (or better)."""
    words = {Finding.B_BETTER: "worse", Finding.A_BETTER: "better"}
    tables = []
    for k, at in loss.groupby("k", sort=True):
        frame = pd.DataFrame(
            {
                f"R@{k}: a − b": [
                    f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"
                    for d, lo, hi in zip(at["a − b"], at["lo"], at["hi"], strict=True)
                ],
                "questions": [
                    f"+{w}/\N{MINUS SIGN}{lo}"
                    for w, lo in zip(at["q wins"], at["q losses"], strict=True)
                ],
                "p Holm": [f"{p:#.2g}" for p in at["p Holm"]],
                "finding": [words.get(d, "–") for d in at["difference"]],
            },
            index=pd.Index([corpus_label(a) for a in at["a"]], name="corpus (a)"),
        )
        tables.append(
            Table(
                frame,
                caption=f"Recall@{k} of each corpus (a) against the clean {clean} (b), by "
                f"question: a − b with its 95 % interval; questions won/lost by a; Holm over "
                f"all {len(loss)} rows (both k); finding: worse (or better) than {clean}, "
                "– : no difference shown",
            )
        )
    return tuple(tables)


def text_layer_view(text_layer: pd.DataFrame) -> Table:
    """:func:`~.ocr.text_layer_table` for reading, one row per reader."""
    (layout,) = set(text_layer.index.get_level_values("layout"))
    return Table(
        text_layer.reset_index(level="layout", drop=True),
        caption=f"What each reader gets from the {layout} scans: pages, characters other than "
        "whitespace, documents with a text layer",
    )


def threshold_view(thresholds: pd.DataFrame) -> Table:
    """:func:`~.ocr.ocr_threshold_table` for reading: needles kept as ``kept/needles``."""

    def ratio(where: str) -> list[str]:
        pairs = zip(thresholds[f"kept, {where}"], thresholds[f"needles, {where}"], strict=True)
        return [f"{k}/{n}" for k, n in pairs]

    frame = pd.DataFrame(
        {
            "pages flagged": [
                f"{f} of {n}"
                for f, n in zip(thresholds["pages flagged"], thresholds["pages"], strict=True)
            ],
            "needles kept, not flagged": ratio("not flagged"),
            "needles kept, flagged": ratio("flagged"),
        },
        index=pd.Index([f"{t:g}" for t in thresholds.index], name="flag pages under"),
    )
    return Table(
        frame,
        caption="Pages flagged when their mean word confidence (0–100) is under the threshold, "
        "and the needles kept verbatim on the pages not flagged and flagged",
    )


def misses_text(run: OcrRun, scanned: Typeset, width: int = 88) -> str:
    """Each needle OCR did not keep verbatim, the needle above what Tesseract read in its
    place, from a little before their first difference, each line cut to ``width``."""
    blocks = []
    for r in ocr_misses(run, scanned, width).to_dict("records"):
        blocks.append(
            f"{r['document']} (marks ignored: {r['marks ignored']})\n"
            f"  needle   {r['needle']}\n"
            f"  OCR read {r['OCR read']}"
        )
    return "\n".join(blocks)


def refusals_text(refusals: str) -> str:
    """What ``rag-lab index`` says of the scans without ``--ocr``, one reason a line."""
    return "rag-lab index, without --ocr:\n" + "\n".join(
        f"  {reason}" for reason in refusals.split("; ")
    )
