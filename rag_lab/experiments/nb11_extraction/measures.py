"""What survives extraction against the ground truth, the running lines and what they cost,
retrieval over the extracted text against the clean Markdown, and what OCR reads.

A needle survives when it is found in its document's extracted text, whitespace normalised.
Reading in the wrong order (columns interleaved, table cells scattered) breaks runs of
consecutive words. On the ``running-header`` layout a page's first drawn line (the title) and
its last (``Page N``) are its running lines.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import accumulate

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.runs import dense_ranks
from rag_lab.experiments.nb11_extraction.pdfs import (
    APP_READER,
    READERS,
    Extracted,
    Typeset,
    canonical,
    extracted_docs,
    folded,
    ocr_cached,
)
from rag_lab.markdown import MarkdownDoc
from rag_lab.metrics import Ranks, recall_at, relevant_chunks
from rag_lab.models.minilm import count_word_pieces
from rag_lab.progress import track
from rag_lab.search import ChunkIndex
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.stats import ALPHA, holm, paired, wilson
from rag_lab.text import flat

BASE = "one-column"
"""The layout every other is tested against."""
KS = (4, 20)
CLEAN = "Markdown"
"""The corpus every extracted one is set against: the documents as written."""
STRATEGY = "E"
"""The chunking measured over extracted text: the app's (paragraphs, sentences, header)."""
THRESHOLDS = (70, 80, 90, 95)
"""Mean page confidences (0–100) under which an OCR'd page is flagged."""


def layout_table(sets: Mapping[str, Typeset]) -> pd.DataFrame:
    """Per layout: documents, pages, needles, those placed (found in the drawn text), those a
    page break cuts in two, characters the core fonts could not draw (drawn as ``?``)."""
    rows = {}
    for layout, s in sets.items():
        spans = [pages for p in s.placed.values() for pages in p.needles.values()]
        pages = sum(len(p.pages) for p in s.placed.values())
        replaced = sum(p.replaced for p in s.placed.values())
        cut = sum(len(pages) > 1 for pages in spans)
        rows[layout] = [len(s.files), pages, len(spans), sum(map(bool, spans)), cut, replaced]
    columns = ["documents", "pages", "needles", "placed", "cut by a page break", "drawn as ?"]
    return pd.DataFrame.from_dict(rows, "index", columns=columns).rename_axis("layout")


def kept_vector(needles: Mapping[str, Sequence[str]], texts: Mapping[str, str]) -> np.ndarray:
    """Per needle (documents in order, needles in question order): found in the text?"""
    return np.array([flat(n) in flat(texts[d]) for d, ns in needles.items() for n in ns])


def _runs(text: str, n: int = 8) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def runs_kept(placed: Mapping[str, ts.Placement], texts: Mapping[str, str]) -> float:
    """The share of the drawn body's 8-word runs found in the extracted text."""
    wanted = {d: _runs(" ".join(p.body)) for d, p in placed.items()}
    return sum(len(w & _runs(texts[d])) for d, w in wanted.items()) / sum(map(len, wanted.values()))


def survival_table(
    docs, sets: Mapping[str, Typeset], extracted: Extracted, needles
) -> pd.DataFrame:
    """Per layout and reader: needles kept of ``n``, the lost ones a page break cuts, 8-word
    runs kept; and against the same reader on :data:`BASE`, a sign test per needle (each
    needle is one question, so they are independent), Holm over the table."""
    texts = {key: {d.id: d.text for d in extracted_docs(docs, by)} for key, by in extracted.items()}
    kept = {key: kept_vector(needles, t) for key, t in texts.items()}
    rows = []
    for (layout, reader), k in kept.items():
        spans = [sets[layout].placed[d].needles[x] for d, xs in needles.items() for x in xs]
        cut = sum(len(p) > 1 for p, hit in zip(spans, k, strict=True) if not hit)
        r = paired(k, kept[BASE, reader])
        runs = runs_kept(sets[layout].placed, texts[layout, reader])
        rows.append([layout, reader, int(k.sum()), len(k), cut, runs, r.wins, r.losses, r.p])
    columns = ["layout", "reader", "needles kept", "n", "lost, cut by a page break"]
    table = pd.DataFrame(rows, columns=[*columns, "8-word runs kept", "wins", "losses", "p"])
    tested = table["layout"] != BASE
    table.loc[tested, "p Holm"] = holm(table.loc[tested, "p"].tolist())
    table.loc[tested, "finding"] = [
        "no loss shown" if p >= ALPHA else "loses needles" if lost > won else "gains needles"
        for won, lost, p in table.loc[tested, ["wins", "losses", "p Holm"]].itertuples(index=False)
    ]
    return table


def best_and_worst(table: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Per layout, the reader keeping the most needles and the one keeping the fewest;
    ties are broken by 8-word runs kept, then by the order of :data:`READERS`."""
    out, columns = {}, ["needles kept", "8-word runs kept", "pos"]
    for layout, rows in table.groupby("layout", sort=False):
        key = rows.assign(pos=[READERS.index(r) for r in rows["reader"]])
        best = key.sort_values(columns, ascending=[False, False, True])["reader"].iloc[0]
        out[layout] = (best, key.sort_values(columns)["reader"].iloc[0])
    return out


def rows_table(docs: Sequence[Document], extracted: Extracted) -> pd.DataFrame:
    """Per reader of the tables layout: table rows (header rows included) whose cells come out
    in order, ``kept`` of ``rows`` with its Wilson 95 % interval, and the ``tables``."""
    rows, out = [(d.id, cells) for d in docs for cells in ts.table_rows(d)], {}
    for (layout, reader), by_doc in extracted.items():
        if layout == "tables":
            texts = {d: flat(canonical(t.pages)) for d, t in by_doc.items()}
            kept = sum(flat(" ".join(c for c in cells if c)) in texts[d] for d, cells in rows)
            out[reader] = [kept, len(rows), *wilson(kept, len(rows))]
    frame = pd.DataFrame.from_dict(out, "index", columns=["kept", "rows", "lo", "hi"])
    return frame.assign(tables=sum(MarkdownDoc(d.text).tables for d in docs)).rename_axis("reader")


def table_of_rows(docs: Sequence[Document]) -> tuple[str, tuple[str, ...]]:
    """The first document with a table, and that table's first data row."""
    return next((d.id, rows[1]) for d in docs if len(rows := ts.table_rows(d)) > 1)


def needles_in_tables(docs: Sequence[Document], needles: Mapping[str, Sequence[str]]) -> int:
    """Needles that lie inside a Markdown table line of their document."""
    lines = {d.id: [ln.text for ln in MarkdownDoc(d.text).table_rows] for d in docs}
    return sum(any(n in ln for ln in lines[d]) for d, ns in needles.items() for n in ns)


def running_spans(placed: ts.Placement, text: str) -> list[tuple[int, int]]:
    """Where the running lines still in ``text`` (:func:`canonical`) are: a page's first
    drawn line and its last, found as whole lines of the page (whitespace normalised), the
    top one first from the top, the bottom one first from the bottom. A line drawn twice on a
    page (the first page's heading is the title too) counts only if the page still has it as
    often as it was drawn."""
    spans, at = [], 0
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
    encoder's 256-word-piece window (a line past it is never embedded, so wastes nothing)."""
    texts, without = [], []
    for c in chunks:
        if inside := [(s, e) for s, e in spans.get(c.doc_id, ()) if s < c.end and c.start < e]:
            text = c.text
            for s, e in inside:  # each line once, as it appears in the content
                text = text.replace(c.content[max(s - c.start, 0) : e - c.start], "", 1)
            texts.append(c.text)
            without.append(text)

    def embedded(texts: list[str]) -> int:
        return int(np.minimum(count_word_pieces(texts), 256).sum()) if texts else 0

    return {
        "chunks": len(chunks),
        "carrying one": len(texts),
        "word-pieces wasted": embedded(texts) - embedded(without),
        "word-pieces embedded": embedded([c.text for c in chunks]),
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


def running_tables(docs, sets: Mapping[str, Typeset], extracted: Extracted, needles):
    """On the running-header layout, per reader: the running lines in its text and what they
    cost (:func:`waste_row`); then per library reader, removal by repetition: needles kept
    before it (those lost a page break cuts) and after it, running lines it left, body lines
    it took (against the ground truth)."""
    placed, cost, removal = sets["running-header"].placed, {}, {}
    cut = [len(placed[d].needles[x]) > 1 for d, xs in needles.items() for x in xs]
    for (layout, reader), by_doc in extracted.items():
        if layout != "running-header":
            continue
        corpus = extracted_docs(docs, by_doc)
        spans = {d.id: running_spans(placed[d.id], d.text) for d in corpus}
        lines = {"running lines": sum(map(len, spans.values()))}
        cost[reader] = lines | waste_row(chunk_corpus(corpus, STRATEGY), spans)
        if reader != APP_READER:
            before = kept_vector(needles, {d.id: d.text for d in corpus})
            removed = extracted_docs(docs, by_doc, remove_running=True)
            removal[reader] = [
                int(before.sum()),
                sum(c and not k for c, k in zip(cut, before, strict=True)),
                int(kept_vector(needles, {d.id: d.text for d in removed}).sum()),
                sum(len(running_spans(placed[d.id], d.text)) for d in removed),
                body_lines_removed(placed, by_doc),
            ]
    columns = ["needles kept", "lost at a break", "after removal", "lines left", "body lines taken"]
    return pd.DataFrame.from_dict(cost, "index").rename_axis("reader"), pd.DataFrame.from_dict(
        removal, "index", columns=columns
    ).rename_axis("reader")


# --- retrieval over the extracted text --------------------------------------------------------


def corpora(lab: Lab, extracted: Extracted, wanted: Sequence[tuple[str, str, bool]]):
    """The corpora ``wanted`` (layout, reader, lines removed): name → the extracted documents
    and strategy E's chunks of them; and those left out as the same text as an earlier one
    (name → that one)."""
    out: dict[str, tuple[list[Document], list[Chunk]]] = {}
    same: dict[str, str] = {}
    seen: dict[tuple[str, ...], str] = {}
    for layout, reader, remove in dict.fromkeys(wanted):
        docs = extracted_docs(lab.docs, extracted[layout, reader], remove)
        name = f"{layout} · {reader}" + (" · lines removed" if remove else "")
        key = tuple(d.text for d in docs)
        if key in seen:
            same[name] = seen[key]
        else:
            seen[key] = name
            out[name] = (docs, chunk_corpus(docs, STRATEGY))
    return out, same


def retrieval_systems(lab: Lab, measured) -> dict[str, Ranks]:
    """First-hit ranks of the queries under dense retrieval over the clean Markdown's chunks,
    then each corpus's; needles looked for whitespace normalised (extraction rewraps lines)."""
    # Shortest first: a batch is padded to its longest text (15 % faster here).
    lab.encoder.encode(
        sorted(dict.fromkeys(c.text for _, cs in measured.values() for c in cs), key=len)
    )
    named = {CLEAN: lab.chunks_by[STRATEGY], **{n: cs for n, (_, cs) in measured.items()}}
    return {
        name: dense_ranks(ChunkIndex.build(cs, lab.encoder), lab.queries, lab.encoder, fold=flat)
        for name, cs in named.items()
    }


def destroyed_table(lab: Lab, measured, systems: Mapping[str, Ranks]) -> pd.DataFrame:
    """Per corpus, the clean one first: chunks, needles in the text, needles no chunk holds
    whole (chunking can split one extraction kept: other paragraph breaks than the Markdown),
    dense Recall@k."""
    questions, rows = lab.qset.questions, {}
    for name, (docs, chunks) in {CLEAN: (lab.docs, lab.chunks_by[STRATEGY]), **measured}.items():
        texts = {d.id: flat(d.text) for d in docs}
        held = relevant_chunks(chunks, questions, fold=flat)  # it reads only the needles
        rows[name] = [len(chunks), sum(flat(q.needle) in texts[q.doc] for q in questions)]
        rows[name] += [sum(not h for h in held), *(recall_at(systems[name], k) for k in KS)]
    columns = ["chunks", "in the text", "destroyed", *(f"R@{k}" for k in KS)]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("corpus")


# --- scans and OCR ----------------------------------------------------------------------------


def ocr_run(scanned: Typeset, needles: Mapping[str, Sequence[str]]):
    """OCR every page holding (part of) a needle, a stated sample, and check each needle: a
    row per page read (its mean word confidence, NaN when it has no word), and a row per
    needle (kept verbatim and with marks ignored, the lowest confidence of its pages, NaN
    lowest of all, the text OCR read on them)."""
    pages, found = [], []
    for doc, p in track(scanned.placed.items(), "OCR", "document"):
        if not (numbers := sorted({n for ps in p.needles.values() for n in ps})):
            continue
        read = dict(zip(numbers, ocr_cached(scanned.files[doc], numbers), strict=True))
        pages += [[doc, n, r.confidence] for n, r in read.items()]
        for needle in needles.get(doc, ()):
            text = "\n".join(read[n].text for n in p.needles[needle])
            lowest = float(np.min([read[n].confidence for n in p.needles[needle]]))
            found.append(
                [
                    doc,
                    needle,
                    flat(needle) in flat(text),
                    folded(needle) in folded(text),
                    lowest,
                    text,
                ]
            )
    columns = ["document", "needle", "kept", "kept, marks ignored", "confidence", "text"]
    return pd.DataFrame(pages, columns=["document", "page", "confidence"]), pd.DataFrame(
        found, columns=columns
    )


def ocr_tables(scanned: Typeset, pages: pd.DataFrame, needles: pd.DataFrame):
    """What OCR read: pages and documents read of all, their mean word confidence (0–100);
    needles kept, verbatim and with marks ignored, with Wilson 95 % intervals."""
    conf, total = pages["confidence"], sum(len(p.pages) for p in scanned.placed.values())
    read = [
        len(pages),
        total,
        pages["document"].nunique(),
        len(scanned.files),
        conf.mean(),
        conf.min(),
        conf.max(),
    ]
    columns = ["pages read", "of", "documents read", "of all", "confidence", "lowest", "highest"]
    kept = {
        c: [k := int(needles[c].sum()), len(needles), *wilson(k, len(needles))]
        for c in ("kept", "kept, marks ignored")
    }
    return pd.DataFrame([read], ["Tesseract"], columns), pd.DataFrame.from_dict(
        kept, "index", columns=["needles", "of", "lo", "hi"]
    )


def ocr_threshold_table(pages: pd.DataFrame, needles: pd.DataFrame) -> pd.DataFrame:
    """Per threshold, pages flagged as ``rag-lab index --ocr`` flags them (under it, or no
    word), needles kept on pages not flagged and flagged, Fisher's exact p of needles lost."""
    kept, rows = needles["kept"], {}
    for t in THRESHOLDS:
        low = ~(needles["confidence"] >= t)  # NaN: no word on a page
        counts = [[int((~kept[w]).sum()), int(kept[w].sum())] for w in (low, ~low)]
        flagged = int((~(pages["confidence"] >= t)).sum())
        rows[t] = [t == pdf_document.OCR_MIN_CONFIDENCE, flagged, counts[1][1], sum(counts[1])]
        rows[t] += [counts[0][1], sum(counts[0]), float(fisher_exact(counts)[1])]
    columns = ["default", "pages flagged", "kept unflagged", "of", "kept flagged", "of all", "p"]
    return pd.DataFrame.from_dict(rows, "index", columns=columns).rename_axis("flag under")


def text_characters(extracted: Extracted) -> pd.Series:
    """Per reader: characters other than whitespace."""
    chars = {
        r: sum(len(flat(t.text).replace(" ", "")) for t in by.values())
        for (_, r), by in extracted.items()
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
