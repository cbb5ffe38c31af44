"""The notebook's reading: one paragraph per finding, each worded from the run's records
(:class:`~.results.Results`), every number read from a field, formatted last."""

from __future__ import annotations

import pandas as pd

from rag_lab.evaluation.paired import Finding
from rag_lab.experiments.nb11_extraction.extraction import APP_READER, LIBRARY_READERS, READERS
from rag_lab.experiments.nb11_extraction.kept import NeedleFinding, losing
from rag_lab.experiments.nb11_extraction.results import Results
from rag_lab.experiments.nb11_extraction.retrieval import worse
from rag_lab.metrics import recall_at
from rag_lab.sources.pdf.document import OCR_MIN_CONFIDENCE
from rag_lab.stats import ALPHA, wilson

_LIMITS = (
    "**Limits.** These PDFs are clean: core fonts with a full character map, no "
    "hyphenation, no ligatures, scans rendered without skew or noise. Real files add "
    "those failures, so this is how much is lost at best; `rag-lab index` on your own PDFs "
    "shows what your files lose (the removed lines, pages without text, OCR confidence). "
    "The needles sit in 20 documents and extraction fails by page or by document, so the "
    "per-needle intervals and tests take as independent what may not be: read a partial "
    "loss as descriptive. How many chunks carry a running line depends on how long chunks "
    "are against pages. OCR here reads 150-dpi scans at 150 dpi; `rag-lab index --ocr` "
    "renders pages at 300 dpi."
)
_OCR_THRESHOLD = OCR_MIN_CONFIDENCE
"""``rag-lab index --ocr``'s default confidence threshold."""


def reading(results: Results) -> str:
    """The notebook's reading, every number taken from ``results``."""
    parts = [
        _what_survives(results),
        _tables_paragraph(results),
        _running_paragraph(results),
        _three_layers_later(results),
    ]
    if results.run is not None:
        parts.append(_scans_paragraph(results))
    return "\n\n".join([*parts, _LIMITS])


def _kept(results: Results, layout: str, readers=None) -> str:
    """Needles kept on ``layout`` over ``readers`` (all by default): ``k/n`` or ``lo–hi/n``."""
    v = results.survival.set_index(["layout", "reader"]).loc[layout]["needles kept"]
    if readers is not None:
        v = v[list(readers)]
    lo, hi = int(v.min()), int(v.max())
    return f"{lo}/{results.n}" if lo == hi else f"{lo}–{hi}/{results.n}"


def _what_survives(results: Results) -> str:
    """Needles on one column, on two columns drawn by column and by row; who loses them."""
    two_lost, rows_lost = (
        losing(results.tests, "two-column"),
        losing(results.tests, "two-column-rows"),
    )
    rows_keep = [r for r in READERS if r not in rows_lost]
    two = "no reader loses needles"
    if two_lost:
        two = (
            f"only {', '.join(two_lost)} {'loses' if len(two_lost) == 1 else 'lose'} them "
            f"({_kept(results, 'two-column', two_lost)})"
        )
        if two_lost == ["pypdf layout"]:
            two += (
                ": its layout mode lays the page out as a grid of characters, so the two "
                "columns come out side by side on every line"
            )
    rows = "no reader loses needles"
    if rows_lost:
        rows = f"{len(rows_lost)} of {len(READERS)} readers lose them " + (
            f"({_kept(results, 'two-column-rows', rows_lost)})"
        )
        rows += (
            f", and {', '.join(rows_keep)} keep {_kept(results, 'two-column-rows', rows_keep)}"
            if rows_keep
            else ", every one"
        )
    drawing = {"pypdf default", "pdfium default"}
    by_order = drawing <= set(rows_lost) and not drawing & set(two_lost)
    analysis = bool(rows_keep) and all(r.startswith("pdfminer") for r in rows_keep)
    out = (
        f"**What survives.** On one column every reader keeps {_kept(results, 'one-column')} "
        f"needles. On two columns drawn column by column, {two}. On the same page "
        f"drawn row by row across the columns, {rows}."
    )
    if by_order and analysis:
        out += (
            " So the interleaving is real, and it depends on how the file was drawn as much as "
            "on the reader: the default modes of pypdf and PDFium follow the drawing order, "
            "and only layout analysis (pdfminer.six's text boxes) puts the columns back."
        )
    if APP_READER in rows_lost and not any(r.startswith("pdfminer") for r in rows_lost):
        out += (
            " `rag-lab index` reads with PDFium by default and loses them too; "
            "`--pdf-extractor pdfminer` reads such files with layout analysis."
        )
    return out


def _tables_paragraph(results: Results) -> str:
    """Which readers keep every table row in order, the worst one, needles in tables."""
    rows = results.rows
    full = [r for r, k, n in zip(rows.index, rows["kept"], rows["rows"], strict=True) if k == n]
    worst = (rows["kept"] / rows["rows"]).idxmin()
    k_w, m_w = int(rows.loc[worst, "kept"]), int(rows.loc[worst, "rows"])
    out = (
        f"**Tables.** {', '.join(full) or 'No reader'} "
        f"{'keeps' if len(full) == 1 else 'keep'} every table row's cells in order; "
        f"{worst} keeps {k_w} of {m_w} rows"
    )
    if worst.startswith("pdfminer") and k_w < m_w:
        out += " (its text boxes take a ruled table column by column)"
    n = results.needles_in_tables
    return (
        out
        + ". "
        + (
            "No needle lies in a table, so the retrieval numbers below cannot show this loss."
            if n == 0
            else f"{n} needles lie in tables."
        )
    )


def _running_paragraph(results: Results) -> str:
    """Needles lost to running lines and page breaks, what removal restores and takes, the
    chunks carrying running lines and the word-pieces they take, and the app's row."""
    rh = "running-header"
    removed = results.survival_removed.set_index(["layout", "reader"]).loc[rh]
    removed = removed.drop(index=APP_READER, errors="ignore")
    waste = results.waste.drop(index=APP_READER, errors="ignore")
    tests = results.tests.loc[rh].drop(index=APP_READER, errors="ignore")
    cut, lost = results.page_cuts
    out = (
        "**Running headers and footers.** The libraries keep "
        f"{_kept(results, rh, LIBRARY_READERS)} needles on the running-header layout; "
    )
    out += (
        f"every needle lost there ({lost} losses over the readers) is one a page break cuts, "
        "with the footer and the next header between its halves. "
        if cut == lost
        else f"{cut} of the {lost} losses (over the readers) are needles a page break cuts. "
    )
    if all(f is NeedleFinding.NO_LOSS for f in tests["finding"]):
        out += (
            "Against one column, by needle, the sign test cannot tell that loss from none "
            f"(Holm {_span(tests['p Holm'], '{:.2g}')}): on so few needles lost this design "
            "cannot tell, which is not evidence that none are lost. "
        )
    out += (
        f"Removing the lines that repeat at the page edges restores "
        f"{_span(removed['needles kept'], '{:.0f}')}/{results.n}. "
        f"Of the {int(waste['running lines in the text'].max())} running lines it left "
        f"{int(waste['left after removal'].max())} and took "
        f"{int(waste['body lines removed'].max())} body lines with them. Before it, "
        f"{_span(waste['share of chunks'], '{:.1%}')} of strategy E's chunks carry a running line"
    )
    if waste["share of chunks"].max() < 1:
        out += (
            ": not every chunk, as the chapter has it, but the chunks at the top or bottom of "
            "a page"
        )
    out += (
        "; those lines take "
        f"{waste['share of embedded word-pieces'].max():.2%} of the embedded word-pieces at most."
    )
    if APP_READER in results.waste.index:
        app = results.waste.loc[APP_READER]
        out += (
            f" `rag-lab index`, which removes them by default, keeps "
            f"{results.kept(rh, APP_READER)}/{results.n} needles, and "
            f"{int(app['carrying running lines'])} of its chunks carry a running line."
        )
    return out


def _three_layers_later(results: Results) -> str:
    """Retrieval over the extracted text against the clean Markdown: where it is worse,
    where no difference is shown (and how little that says), and what chunking destroys."""
    loss, systems = results.loss, results.systems
    held = results.destroyed.drop(index=results.clean, errors="ignore")
    in_text = held["needles in the text"]
    r20 = {name: recall_at(systems[name], 20) for name in held.index}
    clean20 = recall_at(systems[results.clean], 20)
    lower = list(dict.fromkeys(worse(loss)["a"]))
    parts = [
        f"{name} (R@20 {r20[name]:.3f} against {clean20:.3f}; it keeps {int(in_text[name])} of "
        f"{int(held.loc[name, 'questions'])} needles, so no ranking could do better than "
        f"{int(in_text[name]) / int(held.loc[name, 'questions']):.3f})"
        for name in lower
    ]
    out = "**Three layers later.** " + (
        "Retrieval over the extracted text is worse than over the clean Markdown, by "
        f"question after Holm, for {'; '.join(parts)}. That is the loss of the needles "
        "seen again, three layers later, not a second finding. "
        if parts
        else "No extracted corpus retrieves worse than the clean Markdown by question. "
    )
    lossy = [name for name in held.index if in_text[name] < results.n and name not in lower]
    if lossy:
        out += (
            "No difference is shown for a corpus that loses fewer needles: "
            + "; ".join(
                f"{name} keeps {int(in_text[name])} of {int(held.loc[name, 'questions'])} "
                f"(R@20 {r20[name]:.3f})"
                for name in lossy
            )
            + ". "
        )
    return out + _quiet_line(results, r20, clean20) + _destroyed_line(results.destroyed)


def _quiet_line(results: Results, r20: dict[str, float], clean20: float) -> str:
    """The corpora with no difference shown at either k, and the power that says little;
    the comparisons only the per-query test finds."""
    loss = results.loss
    none = pd.Series([d is Finding.NONE for d in loss["difference"]], index=loss.index)
    quiet = [a for a, rows in none.groupby(loss["a"], sort=False) if rows.all()]
    out = ""
    if quiet:
        rows = loss[loss["a"].isin(quiet)]
        questions = len({q.question.id for q in results.queries})
        drop = max(quiet, key=lambda a: clean20 - r20[a])
        out += (
            f"For {len(quiet)} corpora no difference is shown at either k (by question, "
            f"{_range(rows, 'q wins')} wins and {_range(rows, 'q losses')} losses). That is not "
            f"evidence of no loss: on {questions} questions the test has little power, and the "
            f"largest R@20 drop among them, {drop}'s, is {clean20 - r20[drop]:.3f}."
        )
    per_q = loss[[d is Finding.PER_QUERY_ONLY for d in loss["difference"]]]
    if len(per_q):
        named = ", ".join(f"{a} at R@{k}" for a, k in zip(per_q["a"], per_q["k"], strict=True))
        out += f" {named} lose per query only, which the question-level test does not confirm."
    return out


def _destroyed_line(destroyed: pd.DataFrame) -> str:
    """Corpora where chunking destroys needles that extraction kept."""
    hit = destroyed[
        destroyed["needles no chunk holds"]
        > destroyed["questions"] - destroyed["needles in the text"]
    ]
    if hit.empty:
        return ""
    parts = [
        f"{name} {int(r['needles no chunk holds'])} (with {int(r['needles in the text'])} "
        f"of {int(r['questions'])} in its text)"
        for name, r in hit.iterrows()
    ]
    return (
        " Chunking destroys needles that extraction kept (split between two chunks): no "
        "chunk holds them whole in " + "; ".join(parts) + "."
    )


def _scans_paragraph(results: Results) -> str:
    """What the readers get from the scans, what OCR keeps, what a threshold flags."""
    run = results.run
    confidence = run.pages["confidence"]
    n = len(run.needles)
    v, f = int(run.needles["kept"].sum()), int(run.needles["kept, marks ignored"].sum())
    out = (
        f"**Scans.** No reader gets a single character from the scanned pages "
        f"({int(results.text_layer['characters'].max())}). Tesseract, on the {len(run.pages)} "
        f"pages that hold needles, reads them with a mean page confidence of "
        f"{confidence.mean():.1f} (from {confidence.min():.1f} to {confidence.max():.1f}) and "
        f"keeps {v}/{n} needles verbatim ({_wilson(v, n)}); "
        f"{f}/{n} once quotes, backticks and asterisks are ignored"
    )
    out += (
        ": most of what OCR loses is small marks (a backtick read as a quote), the "
        "marks code identifiers and quoted terms are written with."
        if f - v > (n - v) / 2
        else "."
    )
    if results.thresholds is not None:
        out += _threshold_line(results.thresholds)
    return out


def _threshold_line(thresholds: pd.DataFrame, default: float = _OCR_THRESHOLD) -> str:
    """What flagging pages under a confidence threshold catches, at the first threshold
    that flags any page (Fisher's exact test on needles lost, flagged against not), and
    what the app's default threshold flags."""
    from scipy.stats import fisher_exact

    flagged = thresholds[thresholds["pages flagged"] > 0]
    if flagged.empty:
        out = " No page falls under any threshold tried, so a threshold flags nothing here."
    else:
        t, row = flagged.index[0], flagged.iloc[0]
        n_low, lost_low = int(row["needles, flagged"]), _lost(row, "flagged")
        n_high, lost_high = int(row["needles, not flagged"]), _lost(row, "not flagged")
        p = fisher_exact([[lost_low, n_low - lost_low], [lost_high, n_high - lost_high]])[1]
        out = (
            f" Flagging pages under confidence {t:g} flags {row['pages flagged']} of "
            f"{row['pages']}; they hold {n_low} needles, {lost_low} of them lost, against "
            f"{lost_high} lost of {n_high} on the pages not flagged (Fisher's exact "
            f"p = {p:.2g}, one test, unadjusted)"
        )
        out += (
            ": the flagged pages are worse, but most losses sit on pages read with a "
            "confidence above the threshold."
            if p < ALPHA and lost_high > lost_low
            else "."
        )
    if default in thresholds.index:
        row = thresholds.loc[default]
        out += (
            f" At `rag-lab index`'s default, {default:g}, {row['pages flagged']} of "
            f"{row['pages']} pages are flagged while "
            f"{_lost(row, 'not flagged') + _lost(row, 'flagged')} needles are lost."
        )
    return out


def _lost(row: pd.Series, where: str) -> int:
    """Needles lost on the pages ``where`` (``"flagged"`` or ``"not flagged"``)."""
    return int(row[f"needles, {where}"]) - int(row[f"kept, {where}"])


def _span(values: pd.Series, fmt: str) -> str:
    lo, hi = fmt.format(values.min()), fmt.format(values.max())
    return lo if lo == hi else f"{lo}–{hi}"


def _range(table: pd.DataFrame, column: str) -> str:
    lo, hi = int(table[column].min()), int(table[column].max())
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _wilson(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"Wilson 95 % [{lo:.3f}, {hi:.3f}]"
