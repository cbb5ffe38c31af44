"""Notebook 11: where content dies. PDF extraction, measured before retrieval and through it.

The 20 documents are typeset as PDFs whose ground truth is known
(:mod:`rag_lab.sources.pdf.typeset`: which text is drawn on which page, in which order),
read back by three libraries in two modes each (:mod:`rag_lab.sources.pdf.extract`), and
the scanned variant by Tesseract. Three things are measured:

- **survival**: the 32 needles found verbatim in the extracted text (whitespace
  normalised), per layout and reader, with Wilson intervals; the share of the drawn text's
  8-word runs kept in order (what interleaving breaks); for the tables layout, the rows whose
  cells come out in order;
- **waste**: chunks of strategy E over the extracted text that carry a running header or
  footer, and the share of embedded word-pieces those lines take;
- **the symptom three layers later**: dense Recall@4 and @20 of the 64 queries over the
  extracted corpus against the clean Markdown, paired per question (the 64 queries are 32
  questions asked twice), for each layout's best and worst reader.

What each mitigation recovers is the same measures, with it and without: running lines
removed by repetition, a layout-aware reader, OCR with a confidence threshold.

Extraction and OCR results are cached (:func:`rag_lab.paths.cache_dir`) keyed by the PDF's
bytes, the reader and its library's version; the PDFs themselves are made again each run
(they are byte for byte the same) and never kept in the repository.

Progress goes to the terminal or the runner's relay (:mod:`rag_lab.progress`), never into
the notebook.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab import dense, paths
from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.evaluation import plots
from rag_lab.experiments import tables
from rag_lab.experiments.lab import Lab
from rag_lab.json_cache import JsonCache
from rag_lab.metrics import Ranks, first_hit_ranks, recall_at
from rag_lab.models.minilm import count_word_pieces
from rag_lab.progress import bar, track
from rag_lab.questions import Query, Question
from rag_lab.ranking import order
from rag_lab.search import ChunkIndex
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.stats import ALPHA, wilson

LIBRARY_READERS: tuple[str, ...] = tuple(f"{e} {m}" for e in ex.EXTRACTORS for m in ex.MODES[e])
"""Every extractor in every mode, named ``"pypdf default"``, ``"pdfminer positional"``, …"""
APP_READER = "rag-lab index"
"""What ``rag-lab index`` reads a PDF with (:func:`rag_lab.sources.pdf.document.read_pdf`,
its defaults): PDFium, cleaned, paragraphs from line spacing, running lines removed."""
READERS: tuple[str, ...] = (*LIBRARY_READERS, APP_READER)
LAYOUTS = ts.LAYOUTS
STRATEGY = "E"
"""The chunking measured over extracted text: the app's (paragraphs, sentences, header)."""
KS = (4, 20)
RUN = 8
"""Words per run for the reading-order measure."""
SCAN_LAYOUT = "one-column"
SCAN_DPI = 150
"""Scans are rendered at 150 dpi, grey: an office scanner's draft setting. OCR reads the
images at the same resolution, since rendering an image finer adds no detail (``rag-lab
index --ocr`` renders at 300 dpi, for scans made at that resolution)."""
OCR_WORKERS = 2
"""Tesseract processes at once, one thread each (:func:`rag_lab.sources.pdf.extract.ocr`)."""
OCR_THRESHOLDS = (70.0, 80.0, 90.0, 95.0)
"""Mean page confidences (0–100) under which an OCR'd page is flagged."""
WINDOW = 256
"""The encoder's window in word-pieces: past it, text is never embedded."""
_MARKS = str.maketrans("", "", "`*'\"\u2018\u2019\u201c\u201d")


def flat(text: str) -> str:
    """Whitespace normalised: every run of whitespace (newline, form feed, …) one space."""
    return " ".join(text.split())


def folded(text: str) -> str:
    """:func:`flat` with quotes, backticks and asterisks left out: the small marks OCR reads
    as one another (a backtick as ``‘``, an asterisk as ``“``), so that what is left to
    differ is letters, digits and the other symbols."""
    return flat(text.translate(_MARKS))


def reader_parts(reader: str) -> tuple[str, str]:
    extractor, mode = reader.split(" ")
    return extractor, mode


def _is_app(by_doc: Mapping[str, ex.PdfText]) -> bool:
    return next(iter(by_doc.values())).extractor == "rag-lab"


# --- typesetting -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Typeset:
    """The corpus drawn in one layout: a PDF and its ground truth per document."""

    layout: str
    files: dict[str, Path]
    placed: dict[str, ts.Placement]

    @property
    def pages(self) -> int:
        return sum(len(p.pages) for p in self.placed.values())


def needles_by_doc(queries: Sequence[Query]) -> dict[str, list[str]]:
    """Each document's distinct needles, in question order."""
    out: dict[str, list[str]] = {}
    for q in queries:
        if q.needle not in out.setdefault(q.question.doc, []):
            out[q.question.doc].append(q.needle)
    return out


def typeset_all(
    docs: Sequence[Document], needles: Mapping[str, Sequence[str]], folder: str | os.PathLike
) -> dict[str, Typeset]:
    """Every document in every layout under ``folder`` (one subfolder per layout)."""
    out = {}
    for layout in track(LAYOUTS, "typesetting", "layout"):
        here = Path(folder) / layout
        here.mkdir(parents=True, exist_ok=True)
        files, placed = {}, {}
        for doc in docs:
            files[doc.id] = here / f"{doc.id}.pdf"
            placed[doc.id] = ts.typeset(doc, layout, files[doc.id], needles.get(doc.id, ()))
        out[layout] = Typeset(layout, files, placed)
    return out


def scan_all(sets: Typeset, folder: str | os.PathLike, dpi: int = SCAN_DPI) -> Typeset:
    """The layout's PDFs rendered to images: the same ground truth, no text layer."""
    here = Path(folder) / f"scanned-{sets.layout}"
    here.mkdir(parents=True, exist_ok=True)
    files = {}
    for doc_id, pdf in track(sets.files.items(), "scanning", "PDF"):
        files[doc_id] = here / f"{doc_id}.pdf"
        ts.scan(pdf, files[doc_id], dpi=dpi)
    return Typeset(f"scanned {sets.layout}", files, sets.placed)


def layout_table(sets: Mapping[str, Typeset]) -> pd.DataFrame:
    """Pages, needles placed, needles a page break cuts, characters the fonts could not draw."""
    rows = []
    for layout, s in sets.items():
        spans = [pages for p in s.placed.values() for pages in p.needles.values()]
        rows.append(
            {
                "layout": layout,
                "documents": len(s.files),
                "pages": s.pages,
                "needles placed": sum(1 for pages in spans if pages),
                "needles": len(spans),
                "cut by a page break": sum(1 for pages in spans if len(pages) > 1),
                "characters drawn as ?": sum(p.replaced for p in s.placed.values()),
            }
        )
    return pd.DataFrame(rows).set_index("layout")


# --- extraction, cached ----------------------------------------------------------------------


def library_versions() -> dict[str, str]:
    """The version of each extractor's library (what the cache keys on)."""
    return {
        "pypdf": version("pypdf"),
        "pdfminer": version("pdfminer.six"),
        "pdfium": version("pypdfium2"),
        "rag-lab": f"reader {pdf_document.READER_VERSION}, pypdfium2 {version('pypdfium2')}",
    }


def _cache() -> JsonCache:
    return JsonCache(paths.cache_dir() / "pdf-text")


def _cached(key: dict, compute):
    cache = _cache()
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.save(key, value)
    return value


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extract_key(path: Path, reader: str) -> dict:
    library = library_versions()["rag-lab" if reader == APP_READER else reader_parts(reader)[0]]
    return {"pdf": _sha256(path), "reader": reader, "library": library}


def _extract_pages(path: Path, reader: str) -> list[str]:
    if reader == APP_READER:
        return list(pdf_document.read_pdf(path).pages)
    return list(ex.extract(path, *reader_parts(reader)).pages)


def extract_cached(path: Path, reader: str) -> ex.PdfText:
    """:func:`rag_lab.sources.pdf.extract.extract`, cached by the PDF's bytes and the reader."""
    pages = _cached(_extract_key(path, reader), lambda: _extract_pages(path, reader))
    name = ("rag-lab", "index") if reader == APP_READER else reader_parts(reader)
    return ex.PdfText(*name, tuple(pages))


EXTRACT_WORKERS = 2
"""Processes extracting at once on a cold cache (pdfminer.six, pure Python, is most of it)."""


def extract_all(
    sets: Mapping[str, Typeset], readers: Sequence[str] = READERS, workers: int = EXTRACT_WORKERS
) -> dict[tuple[str, str], dict[str, ex.PdfText]]:
    """(layout, reader) → document id → the extracted pages; what the cache lacks is
    extracted in ``workers`` processes first."""
    jobs = [
        (layout, r, d, f) for layout in sets for r in readers for d, f in sets[layout].files.items()
    ]
    cache = _cache()
    missing = [(f, r) for _, r, _, f in jobs if cache.get(_extract_key(f, r)) is None]
    if missing:
        files, names = [f for f, _ in missing], [r for _, r in missing]
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            done = pool.map(_extract_pages, files, names, chunksize=4)
            counted = track(done, "extracting", "PDF", total=len(missing))
            for f, r, pages in zip(files, names, counted, strict=True):
                cache.save(_extract_key(f, r), pages)
    out: dict[tuple[str, str], dict[str, ex.PdfText]] = {}
    for layout, reader, doc, file in jobs:
        out.setdefault((layout, reader), {})[doc] = extract_cached(file, reader)
    return out


def ocr_cached(path: Path, pages: Sequence[int], dpi: int = SCAN_DPI) -> list[ex.OcrPage]:
    """:func:`rag_lab.sources.pdf.extract.ocr` of ``pages``, cached by bytes and Tesseract."""
    key = {"pdf": _sha256(path), "pages": list(pages), "dpi": dpi, "ocr": ex.tesseract_version()}
    rows = _cached(
        key,
        lambda: [
            [p.text, None if math.isnan(p.confidence) else p.confidence, p.words]
            for p in ex.ocr(path, dpi=dpi, pages=pages, workers=OCR_WORKERS)
        ],
    )
    return [ex.OcrPage(t, math.nan if c is None else c, w) for t, c, w in rows]


# --- what survives ---------------------------------------------------------------------------


def canonical(pages: Sequence[str]) -> str:
    """The pages as one text to chunk: PDFium's ``\\r\\n`` read as ``\\n``, the pages joined
    as ``rag-lab index`` joins them (:data:`~rag_lab.sources.pdf.document.PAGE_JOIN`, a form
    feed and a newline: a paragraph runs on over a page break), so offsets name a page."""
    return pdf_document.PAGE_JOIN.join(p.replace("\r\n", "\n").replace("\r", "\n") for p in pages)


def survival(needles: Mapping[str, Sequence[str]], texts: Mapping[str, str], fold=flat) -> int:
    """How many needles are found, normalised by ``fold``, in their document's text."""
    return sum(1 for doc, ns in needles.items() for n in ns if fold(n) in fold(texts.get(doc, "")))


def _runs(text: str, n: int = RUN) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def runs_kept(placed: Mapping[str, ts.Placement], texts: Mapping[str, str]) -> float:
    """The share of the drawn body's 8-word runs found in the extracted text: words that
    come out in another order (columns interleaved, table cells scattered) break runs."""
    kept = total = 0
    for doc, p in placed.items():
        want = _runs(" ".join(p.body))
        have = _runs(texts.get(doc, ""))
        kept += len(want & have)
        total += len(want)
    return kept / total if total else math.nan


def rows_kept(docs: Sequence[Document], texts: Mapping[str, str]) -> tuple[int, int]:
    """Table rows whose cells come out in order, as one run of words: (kept, rows)."""
    kept = total = 0
    for doc in docs:
        text = flat(texts.get(doc.id, ""))
        for cells in ts.table_rows(doc):
            total += 1
            kept += flat(" ".join(c for c in cells if c)) in text
    return kept, total


def survival_table(
    docs: Sequence[Document],
    sets: Mapping[str, Typeset],
    extracted: Mapping[tuple[str, str], Mapping[str, ex.PdfText]],
    needles: Mapping[str, Sequence[str]],
    remove_running: bool = False,
    layouts: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per layout and reader: needles kept (Wilson 95 %), 8-word runs kept, table rows kept;
    with ``remove_running``, of the text after running lines are removed by repetition."""
    n = sum(len(v) for v in needles.values())
    rows = []
    for (layout, reader), by_doc in extracted.items():
        if layouts is not None and layout not in layouts:
            continue
        texts = {d.id: d.text for d in extracted_docs(docs, by_doc, remove_running)}
        k = survival(needles, texts)
        lo, hi = wilson(k, n)
        kept_rows, all_rows = rows_kept(docs, texts) if layout == "tables" else (0, 0)
        rows.append(
            {
                "layout": layout,
                "reader": reader,
                "needles kept": k,
                "n": n,
                "share": k / n,
                "lo": lo,
                "hi": hi,
                "8-word runs kept": runs_kept(sets[layout].placed, texts),
                "table rows kept": kept_rows / all_rows if all_rows else math.nan,
                "characters": sum(len(t) for t in texts.values()),
            }
        )
    return pd.DataFrame(rows)


def survival_view(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`survival_table` for reading: ``k/n [lo, hi]`` and shares to three places."""
    out = pd.DataFrame(
        {
            "layout": table["layout"],
            "reader": table["reader"],
            "needles kept": [
                f"{k}/{n} [{lo:.3f}, {hi:.3f}]"
                for k, n, lo, hi in zip(
                    table["needles kept"], table["n"], table["lo"], table["hi"], strict=True
                )
            ],
            "8-word runs kept": table["8-word runs kept"].map("{:.3f}".format),
            "table rows kept": table["table rows kept"].map(
                lambda v: "" if math.isnan(v) else f"{v:.3f}"
            ),
        }
    )
    return out.set_index(["layout", "reader"])


def survival_figure(table: pd.DataFrame):
    """Needles kept (with Wilson intervals) and 8-word runs kept, by layout and reader."""
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


def best_and_worst(table: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Per layout, the reader keeping the most needles and the one keeping the fewest;
    ties are broken by 8-word runs kept, then by the order of :data:`READERS`."""
    out = {}
    for layout, rows in table.groupby("layout", sort=False):
        key = rows.assign(pos=[READERS.index(r) for r in rows["reader"]])
        ranked = key.sort_values(
            ["needles kept", "8-word runs kept", "pos"], ascending=[False, False, True]
        )
        worst = key.sort_values(
            ["needles kept", "8-word runs kept", "pos"], ascending=[True, True, True]
        )
        out[layout] = (ranked["reader"].iloc[0], worst["reader"].iloc[0])
    return out


# --- running headers and footers -------------------------------------------------------------


def running_spans(placed: ts.Placement, text: str) -> list[tuple[int, int]]:
    """Where the running lines still in ``text`` (:func:`canonical`) are, by the ground
    truth: a page's first drawn line (the title) and its last (``Page N``), found as whole
    lines of the page's extracted text (whitespace normalised), the top one first from the
    top, the bottom one first from the bottom. A line drawn twice on a page (the first
    page's heading is the title too) counts as present only if the page still has it as
    often as it was drawn."""
    spans = []
    at = 0
    for drawn, page in zip(placed.pages, text.split(ex.PAGE_BREAK), strict=True):
        drawn_lines = drawn.split("\n")
        lines, offsets, pos = page.split("\n"), [], at
        for line in lines:
            offsets.append(pos)
            pos += len(line) + 1
        normalised = [flat(ln) for ln in lines]
        for target, from_top in ((drawn_lines[0], True), (drawn_lines[-1], False)):
            found = [i for i, ln in enumerate(normalised) if ln == flat(target)]
            if found and len(found) >= drawn_lines.count(target):
                i = found[0] if from_top else found[-1]
                spans.append((offsets[i], offsets[i] + len(lines[i])))
        at += len(page) + len(ex.PAGE_BREAK)
    return spans


def extracted_docs(
    docs: Sequence[Document], by_doc: Mapping[str, ex.PdfText], remove_running: bool = False
) -> list[Document]:
    """The corpus as a reader extracted it: plain documents (no Markdown is left), titled
    as their PDF is; with ``remove_running``, repeated lines removed first."""
    out = []
    remove_running = remove_running and not _is_app(by_doc)  # it has removed them already
    for doc in docs:
        pages = list(by_doc[doc.id].pages)
        if remove_running:
            pages = ex.remove_repeated_lines([canonical([p]) for p in pages])[0]
        out.append(Document(doc.id, doc.title, canonical(pages), format="plain"))
    return out


def waste_row(chunks: Sequence[Chunk], spans: Mapping[str, Sequence[tuple[int, int]]]) -> dict:
    """Chunks whose content overlaps a running line, and the embedded word-pieces those lines
    take: for each such chunk, its word-pieces up to the encoder's window less those of its
    text without the running lines, up to the window too (a line past the window is never
    embedded, so it wastes nothing)."""
    carrying, texts, without = 0, [], []
    for c in chunks:
        inside = [(s, e) for s, e in spans.get(c.doc_id, ()) if s < c.end and c.start < e]
        if inside:
            carrying += 1
            text = c.text
            for s, e in inside:  # each line once, as it appears in the content
                text = text.replace(c.content[max(s - c.start, 0) : e - c.start], "", 1)
            texts.append(c.text)
            without.append(text)
    embedded = np.minimum(count_word_pieces([c.text for c in chunks]), WINDOW).sum()
    pieces = 0
    if texts:
        full = np.minimum(count_word_pieces(texts), WINDOW)
        pieces = int((full - np.minimum(count_word_pieces(without), WINDOW)).sum())
    return {
        "chunks": len(chunks),
        "carrying running lines": carrying,
        "share of chunks": carrying / len(chunks),
        "word-pieces wasted": pieces,
        "share of embedded word-pieces": float(pieces / embedded),
    }


def removal_check(
    placed: Mapping[str, ts.Placement], by_doc: Mapping[str, ex.PdfText]
) -> dict[str, int]:
    """What removal by repetition took, against the ground truth: running lines removed,
    running lines left, body lines removed by mistake."""
    right = missed = wrong = 0
    for doc, p in placed.items():
        pages = [canonical([t]) for t in by_doc[doc].pages]
        _, removed = ex.remove_repeated_lines(pages)
        removed_by_page: dict[int, list[str]] = {}
        for number, line in removed:
            removed_by_page.setdefault(number, []).append(line.strip())
        for number, drawn in enumerate(p.pages, start=1):
            lines = drawn.split("\n")
            running = [lines[0], lines[-1]]
            got = [flat(g) for g in removed_by_page.get(number, [])]
            hit = [r for r in running if flat(r) in got]
            right += len(hit)
            missed += len(running) - len(hit)
            wrong += len(got) - len(hit)
    return {
        "running lines removed": right,
        "running lines left": missed,
        "body lines removed": wrong,
    }


# --- retrieval -------------------------------------------------------------------------------


def relevant_flat(chunks: Sequence[Chunk], queries: Sequence[Query | Question]) -> list[set[int]]:
    """Per query, the chunks whose embedded text holds the needle, whitespace normalised
    (extraction rewraps lines, so a needle may come out with a newline where it had a space)."""
    flats = [flat(c.text) for c in chunks]
    memo: dict[str, set[int]] = {}
    for q in queries:
        if q.needle not in memo:
            n = flat(q.needle)
            memo[q.needle] = {i for i, t in enumerate(flats) if n in t}
    return [memo[q.needle] for q in queries]


def dense_ranks(lab: Lab, chunks: Sequence[Chunk], queries: Sequence[Query]) -> Ranks:
    """First-hit ranks under dense retrieval over ``chunks`` (relevance: :func:`relevant_flat`)."""
    index = ChunkIndex.build(chunks, lab.encoder)
    distances = dense.cosine_distance_matrix(
        lab.encoder.encode([q.text for q in queries]), index.vectors
    )
    rankings = [order(row, descending=False) for row in distances]
    return first_hit_ranks(rankings, relevant_flat(chunks, queries))


@dataclass(frozen=True)
class Corpus:
    """One extracted corpus retrieval is measured on."""

    name: str
    layout: str
    reader: str
    docs: list[Document]
    chunks: list[Chunk]


def corpora(
    lab: Lab,
    extracted: Mapping[tuple[str, str], Mapping[str, ex.PdfText]],
    picks: Mapping[str, tuple[str, str]],
    extra: Sequence[tuple[str, str, bool]] = (),
) -> tuple[list[Corpus], dict[str, str]]:
    """The corpora to retrieve from: each layout's best and worst reader, then ``extra``
    (layout, reader, running lines removed); and the ones left out because their text is
    the same as an earlier corpus's (name → that corpus), so that no test is counted twice."""
    wanted = [(layout, r, False) for layout, pair in picks.items() for r in dict.fromkeys(pair)]
    out: list[Corpus] = []
    same: dict[str, str] = {}
    seen: dict[tuple[str, ...], str] = {}
    for layout, reader, remove in wanted + list(extra):
        docs = extracted_docs(lab.docs, extracted[layout, reader], remove)
        name = f"{layout} · {reader}" + (" · running lines removed" if remove else "")
        key = tuple(d.text for d in docs)
        if key in seen:
            same[name] = seen[key]
            continue
        seen[key] = name
        out.append(Corpus(name, layout, reader, docs, chunk_corpus(docs, STRATEGY)))
    return out, same


def destroyed_table(lab: Lab, corpora_: Sequence[Corpus], clean: str = "Markdown") -> pd.DataFrame:
    """Per corpus: needles in the text, and needles no chunk holds whole (destroyed: never
    retrievable, whatever the ranking). A needle can survive extraction and still be
    destroyed by chunking: split between two chunks where the extracted text has other
    paragraph breaks than the Markdown (pypdf's none at all, PDFium's found by spacing)."""
    questions = lab.qset.questions
    rows = []
    named = [(clean, lab.chunks_by[STRATEGY], lab.docs)] + [
        (c.name, c.chunks, c.docs) for c in corpora_
    ]
    for name, chunks, docs in named:
        texts = {d.id: flat(d.text) for d in docs}
        held = relevant_flat(chunks, questions)  # it reads only each one's needle
        rows.append(
            {
                "corpus": name,
                "chunks": len(chunks),
                "needles in the text": sum(flat(q.needle) in texts[q.doc] for q in questions),
                "needles no chunk holds": sum(1 for h in held if not h),
                "questions": len(questions),
            }
        )
    return pd.DataFrame(rows).set_index("corpus")


def embed_all(lab: Lab, corpora_: Sequence[Corpus]) -> str:
    """Embed every corpus's chunks once (the vector cache keeps them); say how many.

    Shortest first: a batch is padded to its longest text, so texts of like length batch
    with less padding (15 % faster here on 512 chunk texts)."""
    texts = sorted(dict.fromkeys(c.text for corpus in corpora_ for c in corpus.chunks), key=len)
    lab.encoder.encode(texts)
    return f"{len(texts):,} distinct chunk texts over {len(corpora_)} extracted corpora"


def retrieval_systems(
    lab: Lab, corpora_: Sequence[Corpus], clean: str = "Markdown"
) -> dict[str, Ranks]:
    """First-hit ranks of the 64 queries: the clean Markdown's chunks, then each corpus's."""
    queries = lab.queries
    out = {clean: dense_ranks(lab, lab.chunks_by[STRATEGY], queries)}
    for corpus in corpora_:
        out[corpus.name] = dense_ranks(lab, corpus.chunks, queries)
    return out


def loss_table(systems: Mapping[str, Ranks], queries: Sequence[Query], clean: str = "Markdown"):
    """Each extracted corpus against the clean one at R@4 and R@20, paired per question."""
    pairs = [(name, clean) for name in systems if name != clean]
    return tables.paired_view(systems, pairs, KS, tables.question_ids(queries))


def loss_figure(systems: Mapping[str, Ranks], clean: str = "Markdown"):
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


# --- OCR ---------------------------------------------------------------------------------


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
    the lowest mean confidence of its pages."""


def ocr_run(scanned: Typeset, needles: Mapping[str, Sequence[str]]) -> OcrRun:
    """OCR the sample (:func:`ocr_sample`) and check every needle on its pages."""
    sample = ocr_sample(scanned)
    page_rows, needle_rows = [], []
    pages_read = bar(sum(len(n) for n in sample.values()), "OCR", "page")
    for doc, numbers in sample.items():
        read = dict(zip(numbers, ocr_cached(scanned.files[doc], numbers), strict=True))
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
                }
            )
    pages_read.close()
    return OcrRun(pd.DataFrame(page_rows), pd.DataFrame(needle_rows))


def _lowest(confidences) -> float:
    """The lowest confidence, NaN (a page without words) lowest of all."""
    values = list(confidences)
    return math.nan if any(math.isnan(c) for c in values) else min(values)


def ocr_threshold_table(run: OcrRun, thresholds: Sequence[float] = OCR_THRESHOLDS) -> pd.DataFrame:
    """Per threshold: pages flagged, and needles kept on the pages above it and under it."""
    rows = []
    for t in thresholds:
        low = _flagged(run.needles["confidence"], t)
        kept = run.needles["kept"]
        rows.append(
            {
                "flag pages under": t,
                "pages flagged": int(_flagged(run.pages["confidence"], t).sum()),
                "pages": len(run.pages),
                "needles kept, pages not flagged": f"{int(kept[~low].sum())}/{int((~low).sum())}",
                "needles kept, pages flagged": f"{int(kept[low].sum())}/{int(low.sum())}",
            }
        )
    return pd.DataFrame(rows).set_index("flag pages under")


def _flagged(confidence: pd.Series, threshold: float) -> pd.Series:
    """Pages (or needles on pages) under ``threshold``, or with no word read at all (NaN):
    the rule ``rag-lab index --ocr`` flags pages by."""
    return confidence.isna() | (confidence < threshold)


def text_layer_table(extracted: Mapping[tuple[str, str], Mapping[str, ex.PdfText]]) -> pd.DataFrame:
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


def ocr_misses(run: OcrRun, scanned: Typeset, width: int = 90) -> pd.DataFrame:
    """Each needle OCR did not keep verbatim, beside what Tesseract read in its place (the
    stretch of the page text that matches it best), both cut to ``width`` characters."""
    import difflib

    rows = []
    sample = ocr_sample(scanned)
    for _, r in run.needles[~run.needles["kept"]].iterrows():
        numbers = sample[r["document"]]
        pages = ocr_cached(scanned.files[r["document"]], numbers)
        text = flat(" ".join(pages[numbers.index(n)].text for n in r["pages"]))
        needle = flat(r["needle"])
        match = difflib.SequenceMatcher(None, text, needle, autojunk=False)
        block = max(match.get_matching_blocks(), key=lambda b: b.size)
        start = max(0, block.a - block.b)
        read = text[start : start + len(needle)]
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


def excerpt(by_doc: Mapping[str, ex.PdfText], doc: str, page: int = 1, lines: int = 6) -> str:
    """The first ``lines`` non-blank lines of one extracted page, as a reader gave them."""
    text = canonical([by_doc[doc].pages[page - 1]])
    kept = [ln.rstrip() for ln in text.split("\n") if ln.strip()]
    return "\n".join(ln if len(ln) <= 110 else ln[:109] + "…" for ln in kept[:lines])


def rows_table(
    docs: Sequence[Document],
    extracted: Mapping[tuple[str, str], Mapping[str, ex.PdfText]],
    layout: str = "tables",
) -> pd.DataFrame:
    """Per reader, the table rows (of the ``tables`` layout) whose cells come out in order,
    one after the other (line breaks between cells allowed: :func:`rows_kept`)."""
    rows = []
    for (lay, reader), by_doc in extracted.items():
        if lay != layout:
            continue
        kept, total = rows_kept(docs, {d: canonical(t.pages) for d, t in by_doc.items()})
        lo, hi = wilson(kept, total)
        rows.append({"reader": reader, "rows kept": f"{kept}/{total} [{lo:.3f}, {hi:.3f}]"})
    return pd.DataFrame(rows).set_index("reader")


def table_count(docs: Sequence[Document]) -> str:
    """How many tables and rows the corpus has (header rows included), for the table's note."""
    found = [t for doc in docs for t in ts.tables(doc)]
    rows = sum(len(t) for t in found)
    return f"{rows} rows in {len(found)} tables, header rows included"


def table_of_rows(docs: Sequence[Document]) -> tuple[str, tuple[str, ...]]:
    """The first document with a table, and that table's first data row."""
    for doc in docs:
        rows = ts.table_rows(doc)
        if len(rows) > 1:
            return doc.id, rows[1]
    raise ValueError("no document has a table")


def table_excerpt(
    by_doc: Mapping[str, ex.PdfText], doc: str, cells: Sequence[str], lines: int = 4
) -> str:
    """The extracted lines from the one holding the row's first cell on: how a reader gives
    a table row (its cells on one line, or scattered)."""
    text = canonical(by_doc[doc].pages).split("\n")
    at = next((i for i, ln in enumerate(text) if cells[0] in ln), None)
    if at is None:
        return f"(the cell {cells[0]!r} is not in the text)"
    kept = [ln.rstrip() for ln in text[at:] if ln.strip()][:lines]
    return "\n".join(ln if len(ln) <= 110 else ln[:109] + "…" for ln in kept)


def waste_table(
    docs: Sequence[Document],
    sets: Mapping[str, Typeset],
    extracted: Mapping[tuple[str, str], Mapping[str, ex.PdfText]],
    layout: str = "running-header",
) -> pd.DataFrame:
    """Per reader, on the text as it gives it: the running lines in it, strategy E's chunks
    that carry one and the word-pieces those lines take (:func:`waste_row`); then, after
    removal by repetition, the running lines left and the body lines removed with them
    (:func:`removal_check`; ``rag-lab index`` has removed them itself, so its row has none)."""
    rows = []
    placed = sets[layout].placed
    for (lay, reader), by_doc in extracted.items():
        if lay != layout:
            continue
        corpus = extracted_docs(docs, by_doc)
        spans = {d.id: running_spans(placed[d.id], d.text) for d in corpus}
        row = {
            "reader": reader,
            "running lines in the text": sum(len(v) for v in spans.values()),
            **waste_row(chunk_corpus(corpus, STRATEGY), spans),
        }
        if _is_app(by_doc):
            row.update({"left after removal": math.nan, "body lines removed": math.nan})
        else:
            removed = {d.id: d.text for d in extracted_docs(docs, by_doc, remove_running=True)}
            left = sum(len(running_spans(placed[d], t)) for d, t in removed.items())
            check = removal_check(placed, by_doc)
            row.update(
                {"left after removal": left, "body lines removed": check["body lines removed"]}
            )
        rows.append(row)
    return pd.DataFrame(rows).set_index("reader")


def waste_view(waste: pd.DataFrame) -> pd.DataFrame:
    """:func:`waste_table` for reading: counts as integers, shares as percentages."""
    out = pd.DataFrame(index=waste.index)
    for column in waste.columns:
        values = waste[column]
        if column.startswith("share"):
            out[column] = values.map("{:.2%}".format)
        else:
            out[column] = values.map(lambda v: "–" if pd.isna(v) else f"{int(v)}")
    return out


def mitigation_table(
    survival: pd.DataFrame,
    survival_removed: pd.DataFrame,
    waste: pd.DataFrame,
    systems: Mapping[str, Ranks],
    queries: Sequence[Query],
    run: OcrRun | None,
    text_layer: pd.DataFrame,
    picks: Mapping[str, tuple[str, str]],
    drawing_order: str = "pdfium default",
) -> pd.DataFrame:
    """What each mitigation recovers, measured with it and without it; layout analysis is
    set against ``drawing_order`` (the reader of ``rag-lab index`` by default), whose corpus
    must be among ``systems``."""
    ids = tables.question_ids(queries)
    rows = []
    rh, reader = "running-header", picks["running-header"][1]  # a library, lines kept
    sv = survival.set_index(["layout", "reader"])
    n = int(sv["n"].iloc[0])
    raw = int(sv.loc[(rh, reader), "needles kept"])
    removed = int(
        survival_removed.set_index(["layout", "reader"]).loc[(rh, reader), "needles kept"]
    )
    carrying = int(waste.loc[reader, "carrying running lines"])
    left = int(waste.loc[reader, "left after removal"])
    a, b = f"{rh} · {reader} · running lines removed", f"{rh} · {reader}"
    rows.append(
        {
            "mitigation": "remove running lines by repetition",
            "where": f"{rh}, {reader}",
            "without": f"needles {raw}/{n}; {carrying} chunks carry running lines",
            "with": f"needles {removed}/{n}; {left} running lines left",
            "retrieval, by question (p unadjusted)": _paired_line(systems, a, b, ids),
        }
    )
    two = "two-column-rows"
    best, worst = picks[two][0], drawing_order
    rows.append(
        {
            "mitigation": f"layout analysis ({best})",
            "where": f"{two}, against {worst}",
            "without": f"needles {int(sv.loc[(two, worst), 'needles kept'])}/{n}",
            "with": f"needles {int(sv.loc[(two, best), 'needles kept'])}/{n}",
            "retrieval, by question (p unadjusted)": _paired_line(
                systems, f"{two} · {best}", f"{two} · {worst}", ids
            ),
        }
    )
    if run is not None:
        n = len(run.needles)
        chars = int(text_layer["characters"].max())
        rows.append(
            {
                "mitigation": "OCR (Tesseract), pages holding needles",
                "where": f"scanned {SCAN_LAYOUT}, {SCAN_DPI} dpi",
                "without": f"{chars} characters from any reader: needles 0/{n}",
                "with": f"needles {int(run.needles['kept'].sum())}/{n} verbatim, "
                f"{int(run.needles['kept, marks ignored'].sum())}/{n} with marks ignored",
                "retrieval, by question (p unadjusted)": (
                    "not measured: only a sample of pages is read"
                ),
            }
        )
    return pd.DataFrame(rows).set_index("mitigation")


def _paired_line(systems: Mapping[str, Ranks], a: str, b: str, ids: Sequence[str]) -> str:
    """``R@4 b → a (+w/−l, p); R@20 …``: a against b by question, the p of each test
    unadjusted (the mitigation table says so)."""
    from rag_lab.metrics import hits_at
    from rag_lab.stats import cluster_paired

    parts = []
    for k in KS:
        r = cluster_paired(hits_at(systems[a], k), hits_at(systems[b], k), ids)
        parts.append(f"R@{k} {recall_at(systems[b], k):.3f} → {recall_at(systems[a], k):.3f} ({r})")
    return "; ".join(parts)


# --- tests and the reading -------------------------------------------------------------------


def kept_vector(
    needles: Mapping[str, Sequence[str]], texts: Mapping[str, str], fold=flat
) -> np.ndarray:
    """Per needle (documents in order, needles in question order): found in the text?"""
    return np.array(
        [fold(n) in fold(texts.get(doc, "")) for doc, ns in needles.items() for n in ns],
        dtype=bool,
    )


def layout_tests(
    docs: Sequence[Document],
    extracted: Mapping[tuple[str, str], Mapping[str, ex.PdfText]],
    needles: Mapping[str, Sequence[str]],
    base: str = "one-column",
) -> pd.DataFrame:
    """Each reader on each layout against the same reader on ``base``: the needles one keeps
    and the other loses, an exact sign test on them (each needle is one question, so these
    are independent), Holm over the table."""
    from rag_lab.stats import holm, paired

    def vector(layout: str, reader: str) -> np.ndarray:
        corpus = extracted_docs(docs, extracted[layout, reader])
        return kept_vector(needles, {d.id: d.text for d in corpus})

    rows = []
    layouts = list(dict.fromkeys(layout for layout, _ in extracted))
    for layout in layouts:
        if layout == base:
            continue
        for reader in READERS:
            if (layout, reader) not in extracted:
                continue
            r = paired(vector(layout, reader), vector(base, reader))
            rows.append({"layout": layout, "reader": reader, "test": r, "p": r.p})
    adjusted = holm([r["p"] for r in rows])
    out = pd.DataFrame(
        {
            "layout": [r["layout"] for r in rows],
            "reader": [r["reader"] for r in rows],
            f"kept here, lost on {base} / the reverse": [str(r["test"]) for r in rows],
            "p Holm": [f"{p:#.2g}" for p in adjusted],
            "verdict": [
                "loses needles"
                if p < ALPHA and r["test"].losses > r["test"].wins
                else "gains needles"
                if p < ALPHA
                else "no loss shown"
                for r, p in zip(rows, adjusted, strict=True)
            ],
        }
    )
    return out.set_index(["layout", "reader"])


def claim_rows(
    tests: pd.DataFrame,
    rows_by_reader: pd.DataFrame,
    waste: pd.DataFrame,
    text_layer: pd.DataFrame,
    run: OcrRun | None,
    loss: pd.DataFrame,
    needles_in_tables: int,
) -> pd.DataFrame:
    """The chapter's five statements about extraction, each beside what was measured here."""

    def losing(layout: str) -> list[str]:
        t = tests.loc[layout]
        return list(t.index[t["verdict"] == "loses needles"])

    rows = []
    for layout in ("two-column", "two-column-rows"):
        lost = losing(layout)
        rows.append(
            {
                "chapter": f"two-column layouts interleave ({layout})",
                "measured": (
                    f"needles lost against one column by {', '.join(lost)}"
                    if lost
                    else "no reader loses needles against one column"
                ),
                "verdict": _share_verdict(len(lost), len(tests.loc[layout])),
            }
        )
    kept = {r: _ratio(v) for r, v in rows_by_reader["rows kept"].items()}
    soup = [r for r, (k, n) in kept.items() if k < n]
    rows.append(
        {
            "chapter": "tables become word soup",
            "measured": "rows with cells in order: "
            + ", ".join(f"{r} {k}/{n}" for r, (k, n) in kept.items())
            + f"; needles inside tables: {needles_in_tables}",
            "verdict": (
                "does not reproduce"
                if not soup
                else f"in part: {len(soup)} of {len(kept)} readers scatter rows "
                f"(keeping {_span(pd.Series([kept[r][0] for r in soup]), '{:.0f}')} of "
                f"{kept[soup[0]][1]})"
            ),
        }
    )
    lib = waste.loc[[r for r in waste.index if r != APP_READER]]
    carrying = lib["share of chunks"]
    rows.append(
        {
            "chapter": "running headers repeat in every chunk",
            "measured": f"{carrying.min():.1%}–{carrying.max():.1%} of chunks carry one "
            f"(the chunks at a page's top or bottom); "
            f"{lib['share of embedded word-pieces'].max():.2%} "
            "of embedded word-pieces at most",
            "verdict": "reproduces" if carrying.min() == 1 else "does not reproduce as stated",
        }
    )
    chars = int(text_layer["characters"].max())
    ocr_part = (
        "OCR not run"
        if run is None
        else f"OCR: mean page confidence {run.pages['confidence'].mean():.1f}, "
        f"needles {int(run.needles['kept'].sum())}/{len(run.needles)} verbatim"
    )
    rows.append(
        {
            "chapter": "a scanned page has no text until OCR gives some, with a confidence",
            "measured": f"{chars} characters from any of the {len(text_layer)} readers; {ocr_part}",
            "verdict": "reproduces"
            if chars == 0 and run is not None
            else "not measured"
            if run is None
            else "does not reproduce",
        }
    )
    worse = loss[loss["verdict"].str.endswith("< Markdown")]
    same = loss[loss["verdict"] == "no difference shown"]
    rows.append(
        {
            "chapter": "the symptom shows up as bad retrieval, three layers later",
            "measured": f"{len(worse)} of {len(loss)} comparisons worse than the clean Markdown "
            f"(by question, Holm): {', '.join(sorted(set(worse['a']))) or 'none'}; "
            f"{len(same)} with no difference shown",
            "verdict": "reproduces where extraction loses most needles (the same loss, seen "
            "again); not shown elsewhere"
            if len(worse)
            else "does not reproduce",
        }
    )
    return pd.DataFrame(rows).set_index("chapter")


def _ratio(text: str) -> tuple[int, int]:
    k, n = text.split(" ")[0].split("/")
    return int(k), int(n)


def _share_verdict(bad: int, total: int) -> str:
    if bad == 0:
        return "does not reproduce"
    return "reproduces" if bad == total else f"reproduces for {bad} of {total} readers"


def needles_in_tables(docs: Sequence[Document], needles: Mapping[str, Sequence[str]]) -> int:
    """Needles that lie inside a Markdown table row of their document."""
    by_id = {d.id: d for d in docs}
    count = 0
    for doc, ns in needles.items():
        rows = [ln for ln in by_id[doc].text.splitlines() if ln.lstrip().startswith("|")]
        count += sum(1 for n in ns if any(n in r for r in rows))
    return count


def reading(
    survival: pd.DataFrame,
    survival_removed: pd.DataFrame,
    tests: pd.DataFrame,
    rows_by_reader: pd.DataFrame,
    waste: pd.DataFrame,
    loss: pd.DataFrame,
    systems: Mapping[str, Ranks],
    queries: Sequence[Query],
    run: OcrRun | None,
    thresholds: pd.DataFrame | None,
    text_layer: pd.DataFrame,
    page_cuts: tuple[int, int],
    needles_in_tables: int,
    destroyed: pd.DataFrame,
) -> str:
    """The notebook's reading, every number taken from the tables passed in."""
    sv = survival.set_index(["layout", "reader"])
    n = int(sv["n"].iloc[0])

    def kept(layout: str, readers=None) -> str:
        v = sv.loc[layout]["needles kept"]
        if readers is not None:
            v = v[list(readers)]
        lo, hi = int(v.min()), int(v.max())
        return f"{lo}/{n}" if lo == hi else f"{lo}–{hi}/{n}"

    def losers(layout: str) -> list[str]:
        t = tests.loc[layout]
        return list(t.index[t["verdict"] == "loses needles"])

    out = []
    one = kept("one-column")
    two_lost, rows_lost = losers("two-column"), losers("two-column-rows")
    rows_kept_readers = [r for r in READERS if r not in rows_lost]
    two = (
        f"only {', '.join(two_lost)} {'loses' if len(two_lost) == 1 else 'lose'} them "
        f"({kept('two-column', two_lost)})"
        + (
            ": its layout mode lays the page out as a grid of characters, so the two columns "
            "come out side by side on every line"
            if two_lost == ["pypdf layout"]
            else ""
        )
        if two_lost
        else "no reader loses needles"
    )
    rows_line = (
        f"{len(rows_lost)} of {len(READERS)} readers lose them "
        f"({kept('two-column-rows', rows_lost)})"
        + (
            f", and {', '.join(rows_kept_readers)} keep "
            f"{kept('two-column-rows', rows_kept_readers)}"
            if rows_kept_readers
            else ", every one"
        )
        if rows_lost
        else "no reader loses needles"
    )
    drawing = {"pypdf default", "pdfium default"}
    by_order = drawing <= set(rows_lost) and not drawing & set(two_lost)
    app_line = (
        " `rag-lab index` reads with PDFium by default and loses them too; "
        "`--pdf-extractor pdfminer` reads such files with layout analysis."
        if APP_READER in rows_lost and not any(r.startswith("pdfminer") for r in rows_lost)
        else ""
    )
    analysis = bool(rows_kept_readers) and all(r.startswith("pdfminer") for r in rows_kept_readers)
    out.append(
        f"**What survives.** On one column every reader keeps {one} needles. On two columns "
        f"drawn column by column, {two}. On the same page "
        f"drawn row by row across the columns, {rows_line}."
        + (
            " So the interleaving is real, and it depends on how the file was drawn as much as "
            "on the reader: the default modes of pypdf and PDFium follow the drawing order, "
            "and only layout analysis (pdfminer.six's text boxes) puts the columns back."
            if by_order and analysis
            else ""
        )
        + app_line
    )
    kept_rows = {r: _ratio(v) for r, v in rows_by_reader["rows kept"].items()}
    full = [r for r, (k, m) in kept_rows.items() if k == m]
    worst = min(kept_rows, key=lambda r: kept_rows[r][0] / kept_rows[r][1])
    k_w, m_w = kept_rows[worst]
    out.append(
        f"**Tables.** {', '.join(full) or 'No reader'} "
        f"{'keeps' if len(full) == 1 else 'keep'} every table row's cells in order; "
        f"{worst} keeps {k_w} of {m_w} rows"
        + (
            " (its text boxes take a ruled table column by column)"
            if worst.startswith("pdfminer") and k_w < m_w
            else ""
        )
        + ". "
        + (
            "No needle lies in a table, so the retrieval numbers below cannot show this loss."
            if needles_in_tables == 0
            else f"{needles_in_tables} needles lie in tables."
        )
    )
    removed = survival_removed.set_index(["layout", "reader"]).loc["running-header"]
    removed = removed.loc[[r for r in removed.index if r != APP_READER]]
    app = waste.loc[APP_READER] if APP_READER in waste.index else None
    waste = waste.loc[[r for r in waste.index if r != APP_READER]]
    lost_cut, lost = page_cuts
    rh_tests = tests.loc["running-header"]
    rh_tests = rh_tests.loc[[r for r in rh_tests.index if r != APP_READER]]
    out.append(
        "**Running headers and footers.** The libraries keep "
        f"{kept('running-header', LIBRARY_READERS)} needles on "
        "the running-header layout; "
        + (
            f"every needle lost there ({lost} losses over the readers) is one a page break cuts, "
            "with the footer and the next header between its halves. "
            if lost_cut == lost
            else f"{lost_cut} of the {lost} losses (over the readers) are needles a page "
            "break cuts. "
        )
        + (
            "Against one column that loss is not significant by needle (Holm "
            f"{_span(rh_tests['p Holm'].astype(float), '{:.2g}')}). "
            if (rh_tests["verdict"] == "no loss shown").all()
            else ""
        )
        + "Removing the lines that repeat at the page edges restores "
        f"{_span(removed['needles kept'], '{:.0f}')}/{n}. "
        f"Of the {int(waste['running lines in the text'].max())} running lines it left "
        f"{int(waste['left after removal'].max())} and took "
        f"{int(waste['body lines removed'].max())} body lines with them. Before it, "
        f"{_span(waste['share of chunks'], '{:.1%}')} of strategy E's chunks carry a running line"
        + (
            ": not every chunk, as the chapter has it, but the chunks at the top or bottom of "
            "a page"
            if waste["share of chunks"].max() < 1
            else ""
        )
        + "; those lines take "
        f"{waste['share of embedded word-pieces'].max():.2%} of the embedded word-pieces at most."
        + (
            f" `rag-lab index`, which removes them by default, keeps "
            f"{int(sv.loc[('running-header', APP_READER), 'needles kept'])}/{n} needles, and "
            f"{int(app['carrying running lines'])} of its chunks carry a running line."
            if app is not None
            else ""
        )
    )
    worse = loss[loss["verdict"].str.endswith("< Markdown")]
    clean = next(iter(systems))
    held = destroyed.drop(index=clean, errors="ignore")
    in_text = held["needles in the text"]
    r20 = {name: recall_at(systems[name], 20) for name in held.index}
    parts = []
    for name in dict.fromkeys(worse["a"]):
        k, of = int(in_text[name]), int(held.loc[name, "questions"])
        parts.append(
            f"{name} (R@20 {r20[name]:.3f} against {recall_at(systems[clean], 20):.3f}; it "
            f"keeps {k} of {of} needles, so no ranking could do better than {k / of:.3f})"
        )
    quiet_lossy = [name for name in held.index if in_text[name] < n and name not in set(worse["a"])]
    verdict_of = loss.groupby("a", sort=False)["verdict"]
    quiet = [a for a, v in verdict_of if (v == "no difference shown").all()]
    per_q = loss[loss["verdict"] == "per query only"]
    questions = len(set(tables.question_ids(queries)))
    drop = max(quiet, key=lambda a: recall_at(systems[clean], 20) - r20[a]) if quiet else None
    out.append(
        "**Three layers later.** "
        + (
            "Retrieval over the extracted text is worse than over the clean Markdown, by "
            f"question after Holm, for {'; '.join(parts)}. That is the loss of the needles "
            "seen again, three layers later, not a second finding. "
            if parts
            else "No extracted corpus retrieves worse than the clean Markdown by question. "
        )
        + (
            "No difference is shown for a corpus that loses fewer needles: "
            + "; ".join(
                f"{name} keeps {int(in_text[name])} of {int(held.loc[name, 'questions'])} "
                f"(R@20 {r20[name]:.3f})"
                for name in quiet_lossy
            )
            + ". "
            if quiet_lossy
            else ""
        )
        + (
            f"For {len(quiet)} corpora no difference is shown at either k (by question, "
            f"{_range(loss[loss['a'].isin(quiet)], 'q wins')} wins and "
            f"{_range(loss[loss['a'].isin(quiet)], 'q losses')} losses). That is not "
            f"evidence of no loss: on {questions} questions the test has little power, and the "
            f"largest R@20 drop among them, {drop}'s, is "
            f"{recall_at(systems[clean], 20) - r20[drop]:.3f}."
            if quiet
            else ""
        )
        + (
            f" {', '.join(f'{a} at R@{k}' for a, k in zip(per_q['a'], per_q['k'], strict=True))}"
            " lose per query only, which the question-level test does not confirm."
            if len(per_q)
            else ""
        )
        + _destroyed_line(destroyed)
    )
    if run is not None:
        n_ocr = len(run.needles)
        v, f = int(run.needles["kept"].sum()), int(run.needles["kept, marks ignored"].sum())
        out.append(
            f"**Scans.** No reader gets a single character from the scanned pages "
            f"({int(text_layer['characters'].max())}). Tesseract, on the {len(run.pages)} pages "
            f"that hold needles, reads them with a mean page confidence of "
            f"{run.pages['confidence'].mean():.1f} (from {run.pages['confidence'].min():.1f} to "
            f"{run.pages['confidence'].max():.1f}) and keeps {v}/{n_ocr} needles verbatim "
            f"({_wilson(v, n_ocr)}); "
            f"{f}/{n_ocr} once quotes, backticks and asterisks are ignored"
            + (
                ": most of what OCR loses is small marks (a backtick read as a quote), the "
                "marks code identifiers and quoted terms are written with."
                if f - v > (n_ocr - v) / 2
                else "."
            )
            + (_threshold_line(thresholds) if thresholds is not None else "")
        )
    out.append(
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
    return "\n\n".join(out)


def page_cuts(
    sets: Mapping[str, Typeset],
    extracted: Mapping[tuple[str, str], Mapping[str, ex.PdfText]],
    needles: Mapping[str, Sequence[str]],
    layout: str = "running-header",
) -> tuple[int, int]:
    """Over every reader of ``layout``: (needles lost that a page break cuts, needles lost)."""
    cut = lost = 0
    for (lay, _), by_doc in extracted.items():
        if lay != layout:
            continue
        for doc, ns in needles.items():
            text = flat(canonical(by_doc[doc].pages))
            for n in ns:
                if flat(n) not in text:
                    lost += 1
                    cut += len(sets[layout].placed[doc].needles[n]) > 1
    return cut, lost


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


def _span(values: pd.Series, fmt: str) -> str:
    lo, hi = fmt.format(values.min()), fmt.format(values.max())
    return lo if lo == hi else f"{lo}–{hi}"


def _range(table: pd.DataFrame, column: str) -> str:
    lo, hi = int(table[column].min()), int(table[column].max())
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _wilson(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"Wilson 95 % [{lo:.3f}, {hi:.3f}]"


def _threshold_line(thresholds: pd.DataFrame, default: float = 80.0) -> str:
    """What flagging pages under a confidence threshold catches, at the first threshold
    that flags any page (Fisher's exact test on needles lost, flagged against not), and
    what the app's default threshold flags."""
    from scipy.stats import fisher_exact

    out = ""
    flagged = thresholds[thresholds["pages flagged"] > 0]
    if flagged.empty:
        out = " No page falls under any threshold tried, so a threshold flags nothing here."
    else:
        t = flagged.index[0]
        row = flagged.iloc[0]
        k_low, n_low = _ratio(row["needles kept, pages flagged"])
        k_high, n_high = _ratio(row["needles kept, pages not flagged"])
        p = fisher_exact([[n_low - k_low, k_low], [n_high - k_high, k_high]])[1]
        out = (
            f" Flagging pages under confidence {t:g} flags {row['pages flagged']} of "
            f"{row['pages']}; they hold {n_low} needles, {n_low - k_low} of them lost, against "
            f"{n_high - k_high} lost of {n_high} on the pages not flagged (Fisher's exact "
            f"p = {p:.2g}, one test, unadjusted)"
            + (
                ": the flagged pages are worse, but most losses sit on pages read with a "
                "confidence above the threshold."
                if p < ALPHA and n_high - k_high > n_low - k_low
                else "."
            )
        )
    if default in thresholds.index:
        row = thresholds.loc[default]
        k_high, n_high = _ratio(row["needles kept, pages not flagged"])
        k_low, n_low = _ratio(row["needles kept, pages flagged"])
        out += (
            f" At `rag-lab index`'s default, {default:g}, {row['pages flagged']} of "
            f"{row['pages']} pages are flagged while {n_high - k_high + n_low - k_low} needles "
            "are lost."
        )
    return out


def app_refusals(scanned: Typeset) -> str:
    """What ``rag-lab index`` (without ``--ocr``) says of each scan, reasons counted."""
    from collections import Counter

    reasons: Counter[str] = Counter()
    for file in scanned.files.values():
        try:
            pdf_document.read_pdf(file)
            reasons["read (it has text)"] += 1
        except ex.PdfError as err:
            reasons[err.reason] += 1
    return "; ".join(f"{n} of {len(scanned.files)} failed: {r}" for r, n in reasons.items())
