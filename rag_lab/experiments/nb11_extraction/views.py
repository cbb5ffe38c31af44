"""The run's records as tables (:class:`~rag_lab.experiments.present.Table`), formatted here,
last; each caption says what a row is and the units."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

import pandas as pd

from rag_lab.claims.render import METHODS
from rag_lab.evaluation.ledger import PAIRED_METHOD
from rag_lab.evaluation.paired import Finding
from rag_lab.experiments.nb11_extraction.measures import BASE, CLEAN, KS, OcrRun
from rag_lab.experiments.nb11_extraction.pdfs import Typeset
from rag_lab.experiments.nb11_extraction.run import Results, mitigations
from rag_lab.experiments.present import Table
from rag_lab.metrics import Ranks, recall_at
from rag_lab.sources.pdf.document import OCR_MIN_CONFIDENCE
from rag_lab.stats import wilson
from rag_lab.text import flat

_SIGNED = "+{}/\N{MINUS SIGN}{}"


def _cells(fmt: str, *columns) -> list[str]:
    """``fmt`` filled row by row from ``columns``; a NaN row reads ``–``."""
    rows = zip(*columns, strict=True)
    return ["–" if any(pd.isna(v) for v in row) else fmt.format(*row) for row in rows]


def _kept(k: int, n: int) -> str:
    return "{}/{} [{:.3f}, {:.3f}]".format(k, n, *wilson(k, n))


def _label(name: str) -> str:
    return name.replace(" · running lines removed", " · lines removed")


def layout_view(sets: Mapping[str, Typeset]) -> Table:
    """Per layout: documents, pages, needles placed of all, needles a page break cuts,
    characters the core fonts could not draw."""
    rows = {}
    for layout, s in sets.items():
        spans = [pages for p in s.placed.values() for pages in p.needles.values()]
        rows[layout] = {
            "documents": len(s.files),
            "pages": sum(len(p.pages) for p in s.placed.values()),
            "needles placed": f"{sum(map(bool, spans))} of {len(spans)}",
            "cut by a page break": sum(len(pages) > 1 for pages in spans),
            "characters drawn as ?": sum(p.replaced for p in s.placed.values()),
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("layout"),
        caption="Each layout's PDFs: needles placed (found in the drawn text), needles a page "
        "break cuts in two, characters the core fonts cannot draw",
    )


def kept_views(survival: pd.DataFrame) -> tuple[Table, Table]:
    """Needles kept and 8-word runs kept, a row per reader and a column per layout."""
    n = int(survival["n"].iloc[0])
    readers, layouts = (list(dict.fromkeys(survival[c])) for c in ("reader", "layout"))

    def grid(column: str, fmt) -> pd.DataFrame:
        frame = survival.pivot(index="reader", columns="layout", values=column)
        return frame.loc[readers, layouts].map(fmt).rename_axis(columns=None)

    needles = "Needles found verbatim (whitespace normalised), by reader and layout"
    runs = "Share of the drawn text's runs of 8 consecutive words found in the text"
    return (
        Table(grid("needles kept", lambda k: f"{int(k)}/{n}"), caption=needles),
        Table(grid("8-word runs kept", "{:.3f}".format), caption=runs),
    )


def losses_view(tests: pd.DataFrame) -> Table:
    """:func:`~.measures.layout_tests` where a needle differs."""
    differ = tests[(tests["wins"] + tests["losses"]) > 0].reset_index(level="reader")
    frame = pd.DataFrame(
        {
            "reader": differ["reader"],
            "needles +/−": _cells(_SIGNED, differ["wins"], differ["losses"]),
            "p": _cells("{:#.2g}", differ["p"]),
            "p Holm": _cells("{:#.2g}", differ["p Holm"]),
            "finding": differ["finding"],
        },
        index=differ.index,
    )
    return Table(
        frame,
        caption=f"Each layout against {BASE}, reader by reader, where a needle differs "
        f"(+: kept here, lost on {BASE}); exact sign test per needle, Holm over all "
        f"{len(tests)} comparisons; the other {len(tests) - len(differ)} keep the same needles",
    )


def rows_view(rows: pd.DataFrame) -> Table:
    """:func:`~.measures.rows_table`: ``kept/rows [lo, hi]``, and the tables they are in."""
    kept = [_kept(k, n) for k, n in zip(rows["kept"], rows["rows"], strict=True)]
    return Table(
        pd.DataFrame({"rows kept": kept, "tables": rows["tables"]}, index=rows.index),
        caption="Table rows (header rows included) whose cells come out in order, Wilson 95 % "
        "(descriptive: rows of one table are not independent)",
    )


def waste_views(results: Results) -> tuple[Table, Table]:
    """The running-header layout: what its running lines cost, then what removal does."""
    w = results.waste
    rh, after = (
        t[t["layout"] == "running-header"].set_index("reader").loc[w.index]
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
        "needles before": _cells("{}/{}", rh["needles kept"], rh["n"]),
        "after": _cells("{}/{}", after["needles kept"], after["n"]),
        "lost at a break": _cells(
            "{} of {}", rh["lost, cut by a page break"], rh["n"] - rh["needles kept"]
        ),
        "lines left": _cells("{:.0f}", w["left after removal"]),
        "body lines taken": _cells("{:.0f}", w["body lines removed"]),
    }
    return (
        Table(
            pd.DataFrame(cost, index=w.index),
            caption="On the running-header layout: strategy E's chunks carrying a running line; "
            "the word-pieces those lines take (share of all embedded, each chunk to the window)",
        ),
        Table(
            pd.DataFrame(removal, index=w.index),
            caption="Removal by repetition: needles kept before and after it; of the needles lost "
            "before it, those a page break cuts; running lines it left and body lines it took, "
            "against the ground truth (–: rag-lab index has removed them itself)",
        ),
    )


def left_out_view(same_text: Mapping[str, str]) -> Table:
    """The corpora not measured as the same text as an earlier one."""
    same = pd.Series(same_text, name="the same text as", dtype=object).rename_axis("left out")
    return Table(same.to_frame(), caption="Corpora left out, so none is tested twice")


def destroyed_view(destroyed: pd.DataFrame, systems: Mapping[str, Ranks]) -> Table:
    """:func:`~.measures.destroyed_table` beside each corpus's Recall@k."""
    recall = {f"R@{k}": [recall_at(systems[c], k) for c in destroyed.index] for k in KS}
    return Table(
        destroyed.assign(**recall).rename(index=_label),
        caption="Strategy E over each corpus: chunks; needles in the text (one per question); "
        "needles no chunk holds whole (destroyed); dense Recall@k of the queries",
    )


def loss_views(loss: pd.DataFrame) -> tuple[Table, ...]:
    """:func:`~.measures.loss_table`, one table per k."""
    words = {Finding.B_BETTER: "worse", Finding.A_BETTER: "better"}
    tables = []
    for k, at in loss.groupby("k", sort=True):
        frame = pd.DataFrame(
            {
                f"R@{k}: a − b": _cells(
                    "{:+.3f} [{:+.3f}, {:+.3f}]", at["a − b"], at["lo"], at["hi"]
                ),
                "questions": _cells(_SIGNED, at["q wins"], at["q losses"]),
                "p Holm": _cells("{:#.2g}", at["p Holm"]),
                "finding": [words.get(d, "–") for d in at["difference"]],
            },
            index=pd.Index([_label(a) for a in at["a"]], name="corpus (a)"),
        )
        caption = (
            f"Recall@{k} of each corpus (a) against the clean {CLEAN} (b), by question: a − b "
            f"with its 95 % interval ({METHODS[PAIRED_METHOD]}); questions won/lost by a; Holm "
            f"over all {len(loss)} rows (both k); finding: worse (or better) than {CLEAN}, – : "
            "no difference shown by question"
        )
        tables.append(Table(frame, caption=caption))
    return tuple(tables)


def refusals_view(refusals: pd.DataFrame) -> Table:
    """What ``rag-lab index`` (without ``--ocr``) says of the scans."""
    scans = _cells("{} of {}", refusals["scans"], refusals["of"])
    return Table(
        pd.DataFrame({"scans": scans}, index=refusals.index),
        caption="What rag-lab index (without --ocr) says of each scan",
    )


def ocr_view(run: OcrRun, scanned: Typeset) -> Table:
    """What Tesseract read on the pages holding needles."""
    conf, n = run.pages["confidence"], len(run.needles)
    pages = sum(len(p.pages) for p in scanned.placed.values())
    shown = {
        "pages read": f"{len(run.pages)} of {pages}",
        "documents read": f"{run.pages['document'].nunique()} of {len(scanned.files)}",
        "page confidence, mean (range)": f"{conf.mean():.1f} ({conf.min():.1f}–{conf.max():.1f})",
        "needles kept verbatim": _kept(int(run.needles["kept"].sum()), n),
        "needles kept, marks ignored": _kept(int(run.needles["kept, marks ignored"].sum()), n),
    }
    return Table(
        pd.DataFrame({"OCR": shown}).rename_axis("Tesseract"),
        caption="OCR of the scans' pages that hold a needle: confidence 0–100; needles with "
        "Wilson 95 %; marks ignored: quotes, backticks and asterisks left out on both sides",
    )


def threshold_view(t: pd.DataFrame) -> Table:
    """:func:`~.measures.ocr_threshold_table`; ``rag-lab index --ocr``'s default marked."""
    default = [f"{x:g}" + (" (default)" if x == OCR_MIN_CONFIDENCE else "") for x in t.index]
    frame = pd.DataFrame(
        {
            "pages flagged": _cells("{} of {}", t["pages flagged"], t["pages"]),
            "kept, not flagged": _cells("{}/{}", t["kept, not flagged"], t["needles, not flagged"]),
            "kept, flagged": _cells("{}/{}", t["kept, flagged"], t["needles, flagged"]),
            "p (Fisher)": _cells("{:#.2g}", t["p"]),
        },
        index=pd.Index(default, name="flag pages under"),
    )
    return Table(
        frame,
        caption="Pages flagged when their mean word confidence (0–100) is under the threshold "
        "(default: rag-lab index --ocr's); needles kept verbatim on the pages not flagged and "
        "flagged; Fisher's exact p of needles lost, flagged against not, each unadjusted",
    )


def misses_text(run: OcrRun, width: int = 88) -> str:
    """Each needle OCR did not keep verbatim above what Tesseract read in its place (aligned
    on their longest common block), from a little before their first difference."""
    shown = []
    for r in run.needles[~run.needles["kept"]].to_dict("records"):
        needle, text = flat(r["needle"]), flat(r["text"])
        match = difflib.SequenceMatcher(None, text, needle, autojunk=False)
        block = max(match.get_matching_blocks(), key=lambda b: b.size)
        read = text[max(0, block.a - block.b) :][: len(needle)]
        differ = (i for i, (a, b) in enumerate(zip(needle, read, strict=False)) if a != b)
        lo = max(0, next(differ, len(read)) - 20)
        marks = "kept" if r["kept, marks ignored"] else "lost"
        shown.append(
            f"{r['document']} (marks ignored: {marks})\n"
            f"  needle   {needle[lo : lo + width]}\n  OCR read {read[lo : lo + width]}"
        )
    return "\n".join(shown)


def mitigation_view(results: Results) -> Table:
    """:func:`~.run.mitigations`: retrieval without → with each mitigation."""
    t, columns = mitigations(results), {}
    for k in KS:
        at = t.xs(k, level="k")
        columns[f"R@{k}"] = _cells("{:.3f} → {:.3f}", at["without"], at["with"])
        columns[f"R@{k} by question"] = [
            "not measured" if pd.isna(x) else str(x) for x in at["test"]
        ]
    return Table(
        pd.DataFrame(columns, index=at.index),
        caption="Dense retrieval (strategy E) without → with it; by question: wins/losses of "
        "with over without, exact sign test, each p unadjusted (OCR's is not measured: only "
        "a sample of pages is read)",
    )
