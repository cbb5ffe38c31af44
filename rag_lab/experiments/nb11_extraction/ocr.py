"""Scans: what the readers get from them, what Tesseract reads on the pages holding needles,
and what flagging pages under a confidence threshold catches.

OCR reads a stated sample, the pages holding (part of) a needle (:func:`ocr_sample`), so
retrieval over OCR text is not measured. A page is flagged under a threshold when its mean
word confidence is below it or it has no word at all, the rule ``rag-lab index --ocr`` flags
pages by.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab.experiments.nb11_extraction import pdfs
from rag_lab.experiments.nb11_extraction.pdfs import Extracted, Typeset, flat, folded
from rag_lab.progress import bar
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex

_THRESHOLDS = (70.0, 80.0, 90.0, 95.0)
"""Mean page confidences (0–100) under which an OCR'd page is flagged."""


def ocr_sample(scanned: Typeset) -> dict[str, list[int]]:
    """The pages OCR reads: every page holding (part of) a needle, by document."""
    out = {}
    for doc, p in scanned.placed.items():
        pages = sorted({n for pages in p.needles.values() for n in pages})
        if pages:
            out[doc] = pages
    return out


@dataclass(frozen=True)
class OcrRun:
    pages: pd.DataFrame
    """One row per page read: document, page, mean confidence, words, needles on it."""
    needles: pd.DataFrame
    """One row per needle: its pages, kept verbatim and with marks ignored (:func:`folded`),
    the lowest mean confidence of its pages, the text OCR read on them."""


def ocr_run(scanned: Typeset, needles: Mapping[str, Sequence[str]]) -> OcrRun:
    """OCR the sample (:func:`ocr_sample`) and check every needle on its pages."""
    sample = ocr_sample(scanned)
    page_rows, needle_rows = [], []
    pages_read = bar(sum(len(n) for n in sample.values()), "OCR", "page")
    for doc, numbers in sample.items():
        read = dict(zip(numbers, pdfs.ocr_cached(scanned.files[doc], numbers), strict=True))
        pages_read.update(len(numbers))
        placed = scanned.placed[doc]
        for n, page in read.items():
            on = [x for x in needles.get(doc, ()) if n in placed.needles.get(x, ())]
            page_rows.append(
                {
                    "document": doc,
                    "page": n,
                    "confidence": page.confidence,
                    "words": page.words,
                    "needles": len(on),
                }
            )
        for needle in needles.get(doc, ()):
            pages = placed.needles.get(needle, ())
            text = "\n".join(read[n].text for n in pages)
            needle_rows.append(
                {
                    "document": doc,
                    "needle": needle,
                    "pages": pages,
                    "kept": flat(needle) in flat(text),
                    "kept, marks ignored": folded(needle) in folded(text),
                    "confidence": _lowest(read[n].confidence for n in pages),
                    "text": text,
                }
            )
    pages_read.close()
    return OcrRun(pd.DataFrame(page_rows), pd.DataFrame(needle_rows))


def _lowest(confidences) -> float:
    """The lowest confidence, NaN (a page without words) lowest of all."""
    values = list(confidences)
    return math.nan if any(math.isnan(c) for c in values) else min(values)


def ocr_threshold_table(run: OcrRun, thresholds: Sequence[float] = _THRESHOLDS) -> pd.DataFrame:
    """Per threshold: pages flagged of all, the needles kept of those on pages not flagged
    (``kept, not flagged`` of ``needles, not flagged``) and on pages flagged, and Fisher's
    exact p of needles lost on flagged pages against not flagged ones (each unadjusted)."""
    from scipy.stats import fisher_exact

    rows = []
    kept = run.needles["kept"]
    for t in thresholds:
        low = _flagged(run.needles["confidence"], t)
        counts = [[int((~kept[w]).sum()), int(kept[w].sum())] for w in (low, ~low)]
        rows.append(
            {
                "flag pages under": t,
                "pages flagged": int(_flagged(run.pages["confidence"], t).sum()),
                "pages": len(run.pages),
                "kept, not flagged": counts[1][1],
                "needles, not flagged": sum(counts[1]),
                "kept, flagged": counts[0][1],
                "needles, flagged": sum(counts[0]),
                "p": float(fisher_exact(counts)[1]),
            }
        )
    return pd.DataFrame(rows).set_index("flag pages under")


def _flagged(confidence: pd.Series, threshold: float) -> pd.Series:
    """Pages (or needles on pages) under ``threshold``, or with no word read at all (NaN):
    the rule ``rag-lab index --ocr`` flags pages by."""
    return confidence.isna() | (confidence < threshold)


def text_layer_table(extracted: Extracted) -> pd.DataFrame:
    """What each reader gets from the scans: characters (other than whitespace) and pages."""
    rows = []
    for (layout, reader), by_doc in extracted.items():
        rows.append(
            {
                "layout": layout,
                "reader": reader,
                "pages": sum(len(t.pages) for t in by_doc.values()),
                "characters": sum(len(flat(t.text).replace(" ", "")) for t in by_doc.values()),
                "documents with a text layer": sum(t.has_text for t in by_doc.values()),
            }
        )
    return pd.DataFrame(rows).set_index(["layout", "reader"])


def ocr_misses(run: OcrRun, width: int = 90) -> pd.DataFrame:
    """Each needle OCR did not keep verbatim, beside what Tesseract read in its place (the
    stretch of the page text that matches it best), both cut to ``width`` characters."""
    rows = []
    for _, r in run.needles[~run.needles["kept"]].iterrows():
        needle = flat(r["needle"])
        read = _read_in_place(flat(r["text"]), needle)
        first = next(
            (i for i, (a, b) in enumerate(zip(needle, read, strict=False)) if a != b), len(read)
        )
        lo = max(0, first - 20)
        rows.append(
            {
                "document": r["document"],
                "marks ignored": "kept" if r["kept, marks ignored"] else "lost",
                "needle": needle[lo : lo + width],
                "OCR read": read[lo : lo + width],
            }
        )
    return pd.DataFrame(rows)


def _read_in_place(text: str, needle: str) -> str:
    """The stretch of ``text``, as long as ``needle``, aligned on their longest common block."""
    import difflib

    match = difflib.SequenceMatcher(None, text, needle, autojunk=False)
    block = max(match.get_matching_blocks(), key=lambda b: b.size)
    start = max(0, block.a - block.b)
    return text[start : start + len(needle)]


def app_refusals(scanned: Typeset) -> pd.DataFrame:
    """What ``rag-lab index`` (without ``--ocr``) says of the scans: per answer (read, or
    the reason it fails), the ``scans`` given it, of ``of``."""
    reasons: Counter[str] = Counter()
    for file in scanned.files.values():
        try:
            pdf_document.read_pdf(file)
            reasons["read (it has text)"] += 1
        except ex.PdfError as err:
            reasons[f"failed: {err.reason}"] += 1
    frame = pd.DataFrame({"scans": pd.Series(reasons), "of": len(scanned.files)})
    return frame.rename_axis("rag-lab index without --ocr")
