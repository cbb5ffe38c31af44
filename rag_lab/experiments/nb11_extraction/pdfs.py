"""The corpus as PDFs: every document typeset in every layout, and one layout scanned.

The ground truth of each file is its :class:`~rag_lab.sources.pdf.typeset.Placement`
(which text was drawn on which page, in which order); the files are made again each run,
byte for byte the same, and never kept in the repository.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rag_lab.documents import Document
from rag_lab.progress import track
from rag_lab.questions import Query
from rag_lab.sources.pdf import typeset as ts

SCAN_LAYOUT = "one-column"
"""The layout rendered to images for the scans."""
SCAN_DPI = 150
"""Scans are rendered at 150 dpi, grey: an office scanner's draft setting. OCR reads the
images at the same resolution, since rendering an image finer adds no detail (``rag-lab
index --ocr`` renders at 300 dpi, for scans made at that resolution)."""


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
    docs: Sequence[Document],
    needles: Mapping[str, Sequence[str]],
    folder: str | os.PathLike,
    layouts: Sequence[str] = ts.LAYOUTS,
) -> dict[str, Typeset]:
    """Every document in each of ``layouts`` under ``folder`` (one subfolder per layout)."""
    out = {}
    for layout in track(layouts, "typesetting", "layout"):
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
