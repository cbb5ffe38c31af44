"""The extracted text: normalised for matching, joined as the app joins pages, as documents.

Needles are matched whitespace normalised (:func:`flat`, the ground truth's own rule,
:func:`rag_lab.text.flat`); OCR'd needles also with the small marks OCR
confuses left out (:func:`folded`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_lab.documents import Document
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.text import flat

STRATEGY = "E"
"""The chunking measured over extracted text: the app's (paragraphs, sentences, header)."""
_MARKS = str.maketrans("", "", "`*'\"\u2018\u2019\u201c\u201d")
_WIDTH = 100
"""Characters of an excerpt's line shown (a page's width); past them it is cut with ``…``."""


def folded(text: str) -> str:
    """:func:`flat` with quotes, backticks and asterisks left out: the small marks OCR reads
    as one another (a backtick as ``‘``, an asterisk as ``“``), so that what is left to
    differ is letters, digits and the other symbols."""
    return flat(text.translate(_MARKS))


def canonical(pages: Sequence[str]) -> str:
    """The pages as one text to chunk: PDFium's ``\\r\\n`` read as ``\\n``, the pages joined
    as ``rag-lab index`` joins them (:data:`~rag_lab.sources.pdf.document.PAGE_JOIN`, a form
    feed and a newline: a paragraph runs on over a page break), so offsets name a page."""
    return pdf_document.PAGE_JOIN.join(p.replace("\r\n", "\n").replace("\r", "\n") for p in pages)


def is_app(by_doc: Mapping[str, ex.PdfText]) -> bool:
    """Whether these pages are ``rag-lab index``'s (which has removed running lines itself)."""
    return next(iter(by_doc.values())).extractor == "rag-lab"


def extracted_docs(
    docs: Sequence[Document], by_doc: Mapping[str, ex.PdfText], remove_running: bool = False
) -> list[Document]:
    """The corpus as a reader extracted it: plain documents (no Markdown is left), titled
    as their PDF is; with ``remove_running``, repeated lines removed first."""
    out = []
    remove_running = remove_running and not is_app(by_doc)  # it has removed them already
    for doc in docs:
        pages = list(by_doc[doc.id].pages)
        if remove_running:
            pages = ex.remove_repeated_lines([canonical([p]) for p in pages])[0]
        out.append(Document(doc.id, doc.title, canonical(pages), format="plain"))
    return out


def excerpt(by_doc: Mapping[str, ex.PdfText], doc: str, page: int = 1, lines: int = 6) -> str:
    """The first ``lines`` non-blank lines of one extracted page, as a reader gave them."""
    text = canonical([by_doc[doc].pages[page - 1]])
    return clipped([ln for ln in text.split("\n") if ln.strip()][:lines])


def clipped(lines: Sequence[str]) -> str:
    """Lines for showing: trailing space dropped, each cut to :data:`_WIDTH` characters."""
    kept = [ln.rstrip() for ln in lines]
    return "\n".join(ln if len(ln) <= _WIDTH else ln[: _WIDTH - 1] + "…" for ln in kept)
