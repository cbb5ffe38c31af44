"""What survives extraction against the ground truth, the running lines and what they cost,
retrieval over the extracted text against the clean Markdown, and what OCR reads.

A needle survives when it is found in its document's extracted text, whitespace normalised.
Reading in the wrong order (columns interleaved, table cells scattered) breaks runs of
consecutive words. On the ``running-header`` layout a page's first drawn line (the title) and
its last (``Page N``) are its running lines.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

import numpy as np
import pandas as pd

from rag_lab import progress
from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.paired import paired_table
from rag_lab.evaluation.runs import dense_ranks
from rag_lab.experiments.nb11_extraction import pdfs
from rag_lab.experiments.nb11_extraction.pdfs import (
    READERS,
    STRATEGY,
    Extracted,
    Typeset,
    canonical,
    extracted_docs,
    folded,
)
from rag_lab.metrics import Ranks, relevant_chunks
from rag_lab.models.minilm import count_word_pieces
from rag_lab.questions import Query
from rag_lab.search import ChunkIndex
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.stats import ALPHA, holm, paired
from rag_lab.text import flat

BASE = "one-column"
"""The layout every other is tested against."""
KS = (4, 20)
CLEAN = "Markdown"
"""The corpus every extracted one is set against: the documents as written."""
_RUN = 8
_WINDOW = 256
"""The encoder's window in word-pieces: past it, text is never embedded."""
THRESHOLDS = (70.0, 80.0, 90.0, 95.0)
"""Mean page confidences (0–100) under which an OCR'd page is flagged."""


def kept_vector(needles: Mapping[str, Sequence[str]], texts: Mapping[str, str]) -> np.ndarray:
    """Per needle (documents in order, needles in question order): found in the text?"""
    found = [flat(n) in flat(texts.get(d, "")) for d, ns in needles.items() for n in ns]
    return np.array(found, dtype=bool)


def _runs(text: str) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + _RUN]) for i in range(len(words) - _RUN + 1)}


def runs_kept(placed: Mapping[str, ts.Placement], texts: Mapping[str, str]) -> float:
    """The share of the drawn body's 8-word runs found in the extracted text."""
    wanted = {d: _runs(" ".join(p.body)) for d, p in placed.items()}
    total = sum(map(len, wanted.values()))
    kept = sum(len(w & _runs(texts.get(d, ""))) for d, w in wanted.items())
    return kept / total if total else math.nan


def rows_kept(docs: Sequence[Document], texts: Mapping[str, str]) -> tuple[int, int]:
    """Table rows (header rows included) whose cells come out in order: (kept, rows)."""
    rows = [(flat(texts.get(d.id, "")), cells) for d in docs for cells in ts.table_rows(d)]
    return sum(flat(" ".join(c for c in cells if c)) in t for t, cells in rows), len(rows)


def survival_table(
    docs: Sequence[Document],
    sets: Mapping[str, Typeset],
    extracted: Extracted,
    needles: Mapping[str, Sequence[str]],
    remove_running: bool = False,
    layouts: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per layout and reader: needles kept of ``n``, lost ones a page break cuts, 8-word runs."""
    n = sum(map(len, needles.values()))
    rows = []
    for (layout, reader), by_doc in extracted.items():
        if layouts is None or layout in layouts:
            texts = {d.id: d.text for d in extracted_docs(docs, by_doc, remove_running)}
            kept = kept_vector(needles, texts)
            spans = [sets[layout].placed[d].needles[x] for d, xs in needles.items() for x in xs]
            cut = sum(len(p) > 1 for p, k in zip(spans, kept, strict=True) if not k)
            runs = runs_kept(sets[layout].placed, texts)
            rows.append([layout, reader, int(kept.sum()), n, cut, runs])
    columns = ["layout", "reader", "needles kept", "n", "lost, cut by a page break"]
    return pd.DataFrame(rows, columns=[*columns, "8-word runs kept"])


def best_and_worst(table: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Per layout, the reader keeping the most needles and the one keeping the fewest;
    ties are broken by 8-word runs kept, then by the order of :data:`READERS`."""
    out = {}
    columns = ["needles kept", "8-word runs kept", "pos"]
    for layout, rows in table.groupby("layout", sort=False):
        key = rows.assign(pos=[READERS.index(r) for r in rows["reader"]])
        best = key.sort_values(columns, ascending=[False, False, True])["reader"].iloc[0]
        out[layout] = (best, key.sort_values(columns)["reader"].iloc[0])
    return out


def rows_table(docs: Sequence[Document], extracted: Extracted) -> pd.DataFrame:
    """Per reader of the tables layout: table rows ``kept`` of ``rows``, the ``tables``."""
    tables = sum(len(ts.tables(doc)) for doc in docs)
    rows = {
        reader: (*rows_kept(docs, {d: canonical(t.pages) for d, t in by_doc.items()}), tables)
        for (layout, reader), by_doc in extracted.items()
        if layout == "tables"
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["kept", "rows", "tables"])
    return frame.rename_axis("reader")


def table_of_rows(docs: Sequence[Document]) -> tuple[str, tuple[str, ...]]:
    """The first document with a table, and that table's first data row."""
    for doc in docs:
        if len(rows := ts.table_rows(doc)) > 1:
            return doc.id, rows[1]
    raise ValueError("no document has a table")


def needles_in_tables(docs: Sequence[Document], needles: Mapping[str, Sequence[str]]) -> int:
    """Needles that lie inside a Markdown table line of their document."""
    lines = {d.id: ts.table_lines(d) for d in docs}
    return sum(any(n in ln for ln in lines[d]) for d, ns in needles.items() for n in ns)


def layout_tests(
    docs: Sequence[Document], extracted: Extracted, needles: Mapping[str, Sequence[str]]
) -> pd.DataFrame:
    """Each reader on each layout against itself on :data:`BASE`: a sign test per needle
    (each needle is one question, so they are independent), Holm over the table."""

    def vector(layout: str, reader: str) -> np.ndarray:
        texts = {d.id: d.text for d in extracted_docs(docs, extracted[layout, reader])}
        return kept_vector(needles, texts)

    rows = []
    for layout in dict.fromkeys(layout for layout, _ in extracted):
        for reader in READERS:
            if layout != BASE and (layout, reader) in extracted:
                r = paired(vector(layout, reader), vector(BASE, reader))
                rows.append([layout, reader, r.wins, r.losses, r.ties, r.p])
    table = pd.DataFrame(rows, columns=["layout", "reader", "wins", "losses", "ties", "p"])
    table["p Holm"] = holm(table["p"].tolist())
    table["finding"] = [
        "no loss shown" if p >= ALPHA else "loses needles" if lost > won else "gains needles"
        for won, lost, p in zip(table["wins"], table["losses"], table["p Holm"], strict=True)
    ]
    return table.set_index(["layout", "reader"])


def running_spans(placed: ts.Placement, text: str) -> list[tuple[int, int]]:
    """Where the running lines still in ``text`` (:func:`canonical`) are: a page's first
    drawn line and its last, found as whole lines of the page (whitespace normalised), the
    top one first from the top, the bottom one first from the bottom. A line drawn twice on a
    page (the first page's heading is the title too) counts only if the page still has it as
    often as it was drawn."""
    spans = []
    at = 0
    for drawn, page in zip(placed.pages, text.split(ex.PAGE_BREAK), strict=True):
        drawn_lines, lines = drawn.split("\n"), page.split("\n")
        offsets = list(accumulate((len(ln) + 1 for ln in lines[:-1]), initial=at))
        for target, from_top in ((drawn_lines[0], True), (drawn_lines[-1], False)):
            found = [i for i, ln in enumerate(lines) if flat(ln) == flat(target)]
            if found and len(found) >= drawn_lines.count(target):
                i = found[0] if from_top else found[-1]
                spans.append((offsets[i], offsets[i] + len(lines[i])))
        at += len(page) + len(ex.PAGE_BREAK)
    return spans


def waste_row(chunks: Sequence[Chunk], spans: Mapping[str, Sequence[tuple[int, int]]]) -> dict:
    """Chunks overlapping a running line, and the word-pieces those lines take within the
    encoder's window (a line past the window is never embedded, so it wastes nothing)."""
    texts, without = [], []
    for c in chunks:
        inside = [(s, e) for s, e in spans.get(c.doc_id, ()) if s < c.end and c.start < e]
        if inside:
            text = c.text
            for s, e in inside:  # each line once, as it appears in the content
                text = text.replace(c.content[max(s - c.start, 0) : e - c.start], "", 1)
            texts.append(c.text)
            without.append(text)

    def embedded(texts: list[str]) -> np.ndarray:
        return np.minimum(count_word_pieces(texts), _WINDOW) if texts else np.zeros(0, int)

    pieces = int((embedded(texts) - embedded(without)).sum())
    return {
        "chunks": len(chunks),
        "carrying running lines": len(texts),
        "share of chunks": len(texts) / len(chunks),
        "word-pieces wasted": pieces,
        "share of embedded word-pieces": float(pieces / embedded([c.text for c in chunks]).sum()),
    }


def body_lines_removed(placed: Mapping[str, ts.Placement], by_doc: Mapping[str, ex.PdfText]) -> int:
    """Lines removal by repetition takes that are no page's first or last drawn line."""
    wrong = 0
    for doc, p in placed.items():
        _, removed = ex.remove_repeated_lines([canonical([t]) for t in by_doc[doc].pages])
        for number, drawn in enumerate(p.pages, start=1):
            lines, got = drawn.split("\n"), [flat(ln) for n, ln in removed if n == number]
            wrong += len(got) - sum(flat(r) in got for r in (lines[0], lines[-1]))
    return wrong


def waste_table(
    docs: Sequence[Document], sets: Mapping[str, Typeset], extracted: Extracted
) -> pd.DataFrame:
    """Per reader of the running-header layout: :func:`waste_row`, and after removal by
    repetition the running lines left and body lines taken (NaN: ``rag-lab index``)."""
    rows = []
    placed = sets["running-header"].placed
    for (layout, reader), by_doc in extracted.items():
        if layout != "running-header":
            continue
        corpus = extracted_docs(docs, by_doc)
        spans = {d.id: running_spans(placed[d.id], d.text) for d in corpus}
        left = taken = math.nan
        if not pdfs.is_app(by_doc):
            removed = extracted_docs(docs, by_doc, remove_running=True)
            left = sum(len(running_spans(placed[d.id], d.text)) for d in removed)
            taken = body_lines_removed(placed, by_doc)
        rows.append(
            {
                "reader": reader,
                "running lines in the text": sum(map(len, spans.values())),
                **waste_row(chunk_corpus(corpus, STRATEGY), spans),
                "left after removal": left,
                "body lines removed": taken,
            }
        )
    return pd.DataFrame(rows).set_index("reader")


# --- retrieval over the extracted text --------------------------------------------------------

Corpora = dict[str, tuple[list[Document], list[Chunk]]]
"""A corpus's name → its extracted documents and strategy E's chunks of them."""


def corpora(
    lab: Lab, extracted: Extracted, wanted: Sequence[tuple[str, str, bool]]
) -> tuple[Corpora, dict[str, str]]:
    """The corpora ``wanted`` (layout, reader, lines removed), and those left out as the same
    text as an earlier one (name → that one)."""
    out: Corpora = {}
    same: dict[str, str] = {}
    seen: dict[tuple[str, ...], str] = {}
    for layout, reader, remove in dict.fromkeys(wanted):
        docs = extracted_docs(lab.docs, extracted[layout, reader], remove)
        name = f"{layout} · {reader}" + (" · running lines removed" if remove else "")
        key = tuple(d.text for d in docs)
        if key in seen:
            same[name] = seen[key]
        else:
            seen[key] = name
            out[name] = (docs, chunk_corpus(docs, STRATEGY))
    return out, same


def destroyed_table(lab: Lab, measured: Corpora) -> pd.DataFrame:
    """Per corpus, the clean one first: chunks, needles in the text, needles no chunk holds
    whole (chunking can split one extraction kept: other paragraph breaks than the Markdown)."""
    questions = lab.qset.questions
    rows = {}
    for name, (docs, chunks) in {CLEAN: (lab.docs, lab.chunks_by[STRATEGY]), **measured}.items():
        texts = {d.id: flat(d.text) for d in docs}
        held = relevant_chunks(chunks, questions, fold=flat)  # it reads only the needles
        in_text = sum(flat(q.needle) in texts[q.doc] for q in questions)
        rows[name] = [len(chunks), in_text, sum(not h for h in held)]
    columns = ["chunks", "in the text", "destroyed"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("corpus")


def retrieval_systems(lab: Lab, measured: Corpora) -> dict[str, Ranks]:
    """First-hit ranks of the queries under dense retrieval over the clean Markdown's chunks,
    then each corpus's; needles looked for whitespace normalised (extraction rewraps lines)."""
    # Shortest first: a batch is padded to its longest text (15 % faster here).
    texts = sorted(dict.fromkeys(c.text for _, cs in measured.values() for c in cs), key=len)
    with progress.context(f"{len(measured)} extracted corpora"):
        lab.encoder.encode(texts)
    named = {CLEAN: lab.chunks_by[STRATEGY], **{n: cs for n, (_, cs) in measured.items()}}
    return {
        name: dense_ranks(ChunkIndex.build(cs, lab.encoder), lab.queries, lab.encoder, fold=flat)
        for name, cs in named.items()
    }


def loss_table(systems: Mapping[str, Ranks], queries: Sequence[Query]) -> pd.DataFrame:
    """Each corpus ``a`` against the clean one ``b``, one row per (corpus, k): the paired
    family by question (Holm over the table), its finding as ``difference``, and the
    difference in Recall@k with its 95 % interval (``a − b``, ``lo``, ``hi``)."""
    pairs = [(name, CLEAN) for name in systems if name != CLEAN]
    family = paired_table(systems, pairs, KS, [q.question.id for q in queries])
    table = family.frame().rename(columns={"finding": "difference"})
    table["a − b"] = [c.difference.estimate for c in family.comparisons]
    table["lo"] = [c.difference.lo for c in family.comparisons]
    table["hi"] = [c.difference.hi for c in family.comparisons]
    return table


# --- scans and OCR ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OcrRun:
    pages: pd.DataFrame
    """A row per page read: document, page, mean word confidence (NaN: no word)."""
    needles: pd.DataFrame
    """A row per needle: kept verbatim and with marks ignored, the lowest confidence of its
    pages (NaN lowest of all), the text OCR read on them."""


def ocr_run(scanned: Typeset, needles: Mapping[str, Sequence[str]]) -> OcrRun:
    """OCR every page holding (part of) a needle, a stated sample, and check each needle."""
    sample = {
        d: sorted({n for ps in p.needles.values() for n in ps}) for d, p in scanned.placed.items()
    }
    page_rows, needle_rows = [], []
    pages_read = progress.bar(sum(map(len, sample.values())), "OCR", "page")
    for doc, numbers in ((d, ns) for d, ns in sample.items() if ns):
        read = dict(zip(numbers, pdfs.ocr_cached(scanned.files[doc], numbers), strict=True))
        pages_read.update(len(numbers))
        page_rows += [
            {"document": doc, "page": n, "confidence": p.confidence} for n, p in read.items()
        ]
        for needle in needles.get(doc, ()):
            pages = scanned.placed[doc].needles.get(needle, ())
            text = "\n".join(read[n].text for n in pages)
            confidence = [read[n].confidence for n in pages]
            needle_rows.append(
                {
                    "document": doc,
                    "needle": needle,
                    "kept": flat(needle) in flat(text),
                    "kept, marks ignored": folded(needle) in folded(text),
                    "confidence": math.nan if any(map(math.isnan, confidence)) else min(confidence),
                    "text": text,
                }
            )
    pages_read.close()
    return OcrRun(pd.DataFrame(page_rows), pd.DataFrame(needle_rows))


def ocr_threshold_table(run: OcrRun, thresholds: Sequence[float] = THRESHOLDS) -> pd.DataFrame:
    """Per threshold, pages flagged as ``rag-lab index --ocr`` flags (under it, or no word),
    needles kept on pages not flagged and flagged, Fisher's exact p of needles lost."""
    from scipy.stats import fisher_exact

    kept, pages, needles = run.needles["kept"], run.pages["confidence"], run.needles["confidence"]
    rows = []
    for t in thresholds:
        low = needles.isna() | (needles < t)
        counts = [[int((~kept[w]).sum()), int(kept[w].sum())] for w in (low, ~low)]
        rows.append(
            {
                "flag pages under": t,
                "pages flagged": int((pages.isna() | (pages < t)).sum()),
                "pages": len(pages),
                "kept, not flagged": counts[1][1],
                "needles, not flagged": sum(counts[1]),
                "kept, flagged": counts[0][1],
                "needles, flagged": sum(counts[0]),
                "p": float(fisher_exact(counts)[1]),
            }
        )
    return pd.DataFrame(rows).set_index("flag pages under")


def text_characters(extracted: Extracted) -> pd.Series:
    """Per reader: characters other than whitespace."""
    chars = {
        r: sum(len(flat(t.text).replace(" ", "")) for t in by_doc.values())
        for (_, r), by_doc in extracted.items()
    }
    return pd.Series(chars, name="characters")


def app_refusals(scanned: Typeset) -> pd.DataFrame:
    """What ``rag-lab index`` (without ``--ocr``) says of the scans, ``of`` all."""
    reasons: Counter[str] = Counter()
    for file in scanned.files.values():
        try:
            pdf_document.read_pdf(file)
            reasons["read (it has text)"] += 1
        except ex.PdfError as err:
            reasons[f"failed: {err.reason}"] += 1
    frame = pd.DataFrame({"scans": pd.Series(reasons), "of": len(scanned.files)})
    return frame.rename_axis("rag-lab index without --ocr")
