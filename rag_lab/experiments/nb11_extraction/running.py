"""Running headers and footers: where they are in the extracted text, the chunks that carry
them and the word-pieces they waste, and what removal by repetition takes.

The running lines are known from the ground truth: on the ``running-header`` layout, a
page's first drawn line (the title) and its last (``Page N``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.experiments.nb11_extraction.extraction import Extracted
from rag_lab.experiments.nb11_extraction.pdfs import Typeset
from rag_lab.experiments.nb11_extraction.text import (
    STRATEGY,
    canonical,
    extracted_docs,
    flat,
    is_app,
)
from rag_lab.models.minilm import count_word_pieces
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts

_WINDOW = 256
"""The encoder's window in word-pieces: past it, text is never embedded."""


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
    embedded = np.minimum(count_word_pieces([c.text for c in chunks]), _WINDOW).sum()
    pieces = 0
    if texts:
        full = np.minimum(count_word_pieces(texts), _WINDOW)
        pieces = int((full - np.minimum(count_word_pieces(without), _WINDOW)).sum())
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


def waste_table(
    docs: Sequence[Document],
    sets: Mapping[str, Typeset],
    extracted: Extracted,
    layout: str = "running-header",
) -> pd.DataFrame:
    """Per reader, on the text as it gives it: the running lines in it, strategy E's chunks
    that carry one and the word-pieces those lines take (:func:`waste_row`); then, after
    removal by repetition, the running lines left and the body lines removed with them
    (:func:`removal_check`; ``rag-lab index`` has removed them itself, so its row has NaN)."""
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
        if is_app(by_doc):
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
