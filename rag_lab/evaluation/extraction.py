"""What PDF extraction keeps and what it costs, measured on the corpus typeset in each layout
and read by each reader (:mod:`rag_lab.evaluation.extraction_pdfs`): :func:`measure` is the
whole run, a record of tables.

What survives is a needle found in its document's text (whitespace normalised) and runs of 8
consecutive words, which reading in the wrong order breaks; then the running lines (a page's
first and last drawn line) and what they cost, retrieval over the extracted text against the
clean Markdown, and what OCR reads of scans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import accumulate
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.evaluation import extraction_pdfs as pdfs
from rag_lab.evaluation.extraction_pdfs import Extracted, Typeset, extracted_docs
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.paired import paired_table
from rag_lab.evaluation.runs import dense_ranks
from rag_lab.markdown import MarkdownDoc
from rag_lab.metrics import Ranks, hits_at, recall_at, relevant_chunks
from rag_lab.models.minilm import count_word_pieces
from rag_lab.progress import track
from rag_lab.search import ChunkIndex
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.stats import ALPHA, cluster_paired, holm, paired, wilson
from rag_lab.text import flat

BASE = "one-column"
"""The layout every other is tested against."""
KS = (4, 20)
CLEAN = "Markdown"
"""The corpus every extracted one is set against: the documents as written."""
STRATEGY = "E"
"""The chunking measured over extracted text: the app's (paragraphs, sentences, header)."""
DRAWING_ORDER = "pdfium default"
"""The reader layout analysis is set against: ``rag-lab index``'s default, which reads in
the order the page was drawn."""
THRESHOLDS = (70, 80, 90, 95)
"""Mean page confidences (0–100) under which an OCR'd page is flagged."""


def layout_table(sets: Mapping[str, Typeset]) -> pd.DataFrame:
    """Per layout: documents, pages, needles, placed, cut by a page break, characters drawn as ?"""
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


def survival_table(docs, sets: Mapping[str, Typeset], extracted: Extracted, needles):
    """Per layout and reader: needles kept of ``n``, lost ones a page break cuts, 8-word runs
    kept; against the reader on :data:`BASE`, a sign test per needle (one question each), Holm
    over the table."""
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
    ties are broken by 8-word runs kept, then by the order of :data:`~.extraction_pdfs.READERS`."""
    out, columns = {}, ["needles kept", "8-word runs kept", "pos"]
    for layout, rows in table.groupby("layout", sort=False):
        key = rows.assign(pos=[pdfs.READERS.index(r) for r in rows["reader"]])
        best = key.sort_values(columns, ascending=[False, False, True])["reader"].iloc[0]
        out[layout] = (best, key.sort_values(columns)["reader"].iloc[0])
    return out


def rows_table(docs: Sequence[Document], extracted: Extracted) -> pd.DataFrame:
    """Per reader of the tables layout: rows whose cells come out in order, ``kept`` of ``rows``
    (header rows included) with their Wilson 95 % interval, and the ``tables``."""
    rows, out = [(d.id, cells) for d in docs for cells in ts.table_rows(d)], {}
    for (layout, reader), by_doc in extracted.items():
        if layout == "tables":
            texts = {d: flat(pdfs.canonical(t.pages)) for d, t in by_doc.items()}
            kept = sum(flat(" ".join(c for c in cells if c)) in texts[d] for d, cells in rows)
            out[reader] = [kept, len(rows), *wilson(kept, len(rows))]
    frame = pd.DataFrame.from_dict(out, "index", columns=["kept", "rows", "lo", "hi"])
    return frame.assign(tables=sum(MarkdownDoc(d.text).tables for d in docs)).rename_axis("reader")


def needles_in_tables(docs: Sequence[Document], needles: Mapping[str, Sequence[str]]) -> int:
    """Needles that lie inside a Markdown table line of their document."""
    lines = {d.id: [ln.text for ln in MarkdownDoc(d.text).table_rows] for d in docs}
    return sum(any(n in ln for ln in lines[d]) for d, ns in needles.items() for n in ns)


def running_spans(placed: ts.Placement, text: str) -> list[tuple[int, int]]:
    """Where the running lines still in ``text`` are: each page's first and last drawn line as
    whole lines (whitespace normalised), from the top and from the bottom; a line drawn twice on
    a page (the first heading is the title too) only if the page has it as often."""
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


WASTE = ("chunks", "carrying one", "word-pieces wasted", "word-pieces embedded")


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

    all_pieces, wasted = embedded([c.text for c in chunks]), embedded(texts) - embedded(without)
    return dict(zip(WASTE, (len(chunks), len(texts), wasted, all_pieces), strict=True))


def body_lines_removed(placed: Mapping[str, ts.Placement], by_doc: Mapping[str, ex.PdfText]) -> int:
    """Lines removal by repetition takes that are no page's first or last drawn line."""
    wrong = 0
    for doc, p in placed.items():
        _, removed = ex.remove_repeated_lines([pdfs.canonical([t]) for t in by_doc[doc].pages])
        for number, drawn in enumerate(p.pages, start=1):
            lines, got = drawn.split("\n"), [flat(ln) for n, ln in removed if n == number]
            wrong += len(got) - sum(flat(r) in got for r in (lines[0], lines[-1]))
    return wrong


def running_tables(docs, sets: Mapping[str, Typeset], extracted: Extracted, needles):
    """On the running-header layout, per reader: running lines in its text and their cost; per
    library reader, removal by repetition: needles kept before it (lost at a page break) and
    after, running lines it left, body lines it took."""
    placed, cost, removal = sets["running-header"].placed, {}, {}
    cut = [len(placed[d].needles[x]) > 1 for d, xs in needles.items() for x in xs]
    for (layout, reader), by_doc in extracted.items():
        if layout != "running-header":
            continue
        corpus = extracted_docs(docs, by_doc)
        spans = {d.id: running_spans(placed[d.id], d.text) for d in corpus}
        lines = {"running lines": sum(map(len, spans.values()))}
        cost[reader] = lines | waste_row(chunk_corpus(corpus, STRATEGY), spans)
        if by_doc[docs[0].id].extractor != "rag-lab":
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
    removal = pd.DataFrame.from_dict(removal, "index", columns=columns).rename_axis("reader")
    return pd.DataFrame.from_dict(cost, "index").rename_axis("reader"), removal


# --- retrieval over the extracted text --------------------------------------------------------


def corpora(lab: Lab, extracted: Extracted, wanted: Sequence[tuple[str, str, bool]]):
    """The corpora ``wanted`` (layout, reader, lines removed): name → the documents and their
    strategy E chunks; and those left out as the same text as an earlier one (name → it)."""
    out: dict[str, tuple[list[Document], list[Chunk]]] = {}
    same, seen = {}, {}
    for layout, reader, remove in dict.fromkeys(wanted):
        docs = extracted_docs(lab.docs, extracted[layout, reader], remove)
        name = f"{layout} · {reader}" + (" · lines removed" if remove else "")
        if (first := seen.setdefault(tuple(d.text for d in docs), name)) != name:
            same[name] = first
        else:
            out[name] = (docs, chunk_corpus(docs, STRATEGY))
    return out, same


def retrieval_systems(lab: Lab, measured) -> dict[str, Ranks]:
    """First-hit ranks of the queries, dense, over the clean Markdown's chunks then each
    corpus's; needles found whitespace normalised (extraction rewraps lines)."""
    texts = dict.fromkeys(c.text for _, cs in measured.values() for c in cs)
    lab.encoder.encode(sorted(texts, key=len))  # a batch is padded to its longest text
    named = {CLEAN: lab.chunks_by[STRATEGY], **{n: cs for n, (_, cs) in measured.items()}}
    return {
        name: dense_ranks(ChunkIndex.build(cs, lab.encoder), lab.queries, lab.encoder, fold=flat)
        for name, cs in named.items()
    }


def destroyed_table(lab: Lab, measured, systems: Mapping[str, Ranks]) -> pd.DataFrame:
    """Per corpus, the clean one first: chunks, needles in the text, needles no chunk holds
    whole (destroyed), dense Recall@k."""
    questions, rows = lab.qset.questions, {}
    for name, (docs, chunks) in {CLEAN: (lab.docs, lab.chunks_by[STRATEGY]), **measured}.items():
        texts = {d.id: flat(d.text) for d in docs}
        held = relevant_chunks(chunks, questions, fold=flat)  # it reads only the needles
        rows[name] = [len(chunks), sum(flat(q.needle) in texts[q.doc] for q in questions)]
        rows[name] += [sum(not h for h in held), *(recall_at(systems[name], k) for k in KS)]
    columns = ["chunks", "in the text", "destroyed", *(f"R@{k}" for k in KS)]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("corpus")


def mitigations(systems: Mapping[str, Ranks], pairs: Mapping[str, tuple[str, str]], ids):
    """Per mitigation (name → its corpus without, with it) and k: Recall@k without and with it,
    and the sign test by question of with over without."""
    rows = []
    for name, (without, with_it) in pairs.items():
        for k in KS:
            b, a = hits_at(systems[without], k), hits_at(systems[with_it], k)
            rows.append([name, k, b.mean(), a.mean(), cluster_paired(a, b, ids)])
    columns = ["mitigation", "k", "without", "with", "with over without, by question"]
    return pd.DataFrame(rows, columns=columns)


# --- scans and OCR ----------------------------------------------------------------------------


def ocr_run(scanned: Typeset, needles: Mapping[str, Sequence[str]]):
    """OCR of every page holding (part of) a needle, a stated sample: a row per page (its mean
    word confidence, NaN without words), a row per needle (kept verbatim and with marks
    ignored, the lowest confidence of its pages, the text OCR read on them)."""
    pages, found = [], []
    for doc, p in track(scanned.placed.items(), "OCR", "document"):
        if not (numbers := sorted({n for ps in p.needles.values() for n in ps})):
            continue
        read = dict(zip(numbers, pdfs.ocr_cached(scanned.files[doc], numbers), strict=True))
        pages += [[doc, n, r.confidence] for n, r in read.items()]
        for needle in needles.get(doc, ()):
            text = "\n".join(read[n].text for n in p.needles[needle])
            found.append(
                [doc, needle, np.min([read[n].confidence for n in p.needles[needle]]), text]
            )
    found = pd.DataFrame(found, columns=["document", "needle", "confidence", "text"])
    pairs = list(zip(found["needle"], found["text"], strict=True))
    found.insert(2, "kept", [flat(n) in flat(t) for n, t in pairs])
    found.insert(3, "kept, marks ignored", [pdfs.folded(n) in pdfs.folded(t) for n, t in pairs])
    return pd.DataFrame(pages, columns=["document", "page", "confidence"]), found


def ocr_tables(scanned: Typeset, pages: pd.DataFrame, needles: pd.DataFrame):
    """Pages and documents OCR read of all, their confidence (0–100); needles kept, verbatim
    and with marks ignored, with Wilson 95 % intervals."""
    c, n = pages["confidence"], len(needles)
    read = [len(pages), sum(len(p.pages) for p in scanned.placed.values())]
    read += [pages["document"].nunique(), len(scanned.files), c.mean(), c.min(), c.max()]
    columns = ["pages read", "of", "documents read", "of all", "confidence", "lowest", "highest"]
    kept = {
        col: [k := int(needles[col].sum()), n, *wilson(k, n)]
        for col in ("kept", "kept, marks ignored")
    }
    kept = pd.DataFrame.from_dict(kept, "index", columns=["needles", "of", "lo", "hi"])
    return pd.DataFrame([read], ["Tesseract"], columns), kept


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


# --- the whole run --------------------------------------------------------------------------


def measure(lab: Lab, folder: str) -> dict:
    """Every record of notebook 11, the PDFs written under ``folder``: retrieval over each
    layout's best and worst reader and both corpora of each mitigation; OCR (``ocr…``) only
    when Tesseract runs here (``tesseract``: its version, else None); ``versions``: the
    readers' libraries."""
    docs, needles, folder = lab.docs, pdfs.needles_by_doc(lab.queries), Path(folder)
    sets = pdfs.typeset_all(docs, needles, folder)
    r = {"sets": sets, "extracted": (extracted := pdfs.extract_all(sets))}
    r["versions"] = pdfs.library_versions()
    r["survival"] = survival_table(docs, sets, extracted, needles)
    r["layouts"], r["rows"] = layout_table(sets), rows_table(docs, extracted)
    r["needles_in_tables"] = needles_in_tables(docs, needles)
    r["waste"], r["removal"] = running_tables(docs, sets, extracted, needles)
    picks = best_and_worst(r["survival"])
    rw, cb = picks["running-header"][1], picks["two-column-rows"][0]
    wanted = [(layout, reader, False) for layout, pair in picks.items() for reader in pair]
    wanted += [("running-header", rw, True), ("two-column-rows", DRAWING_ORDER, False)]
    measured, same = corpora(lab, extracted, wanted)
    systems = retrieval_systems(lab, measured)
    r["same_text"] = pd.DataFrame({"the same text as": same}).rename_axis("left out")
    r["destroyed"] = destroyed_table(lab, measured, systems)
    versus_clean = [(n, CLEAN) for n in systems if n != CLEAN]
    r["loss"] = paired_table(systems, versus_clean, KS, lab.clusters)
    rh, rows = f"running-header · {rw}", f"two-column-rows · {cb}"
    pairs = {"remove running lines": (rh, f"{rh} · lines removed")}
    pairs["layout analysis"] = (f"two-column-rows · {DRAWING_ORDER}", rows)
    r["mitigations"] = mitigations(systems, pairs, lab.clusters)
    r["scanned"] = scanned = pdfs.scan_all(sets["one-column"], folder)
    r["text_layer"] = text_characters(pdfs.extract_all({"scans": scanned}, pdfs.LIBRARY_READERS))
    r["refusals"] = app_refusals(scanned)
    try:
        r["tesseract"] = ex.tesseract_version()
    except ex.OcrUnavailable:
        return r | {"tesseract": None}
    r["ocr_pages"], r["ocr_needles"] = pages, read = ocr_run(scanned, needles)
    return r | {
        "ocr": ocr_tables(scanned, pages, read),
        "thresholds": ocr_threshold_table(pages, read),
    }
