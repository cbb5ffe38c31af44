"""The 20 corpus documents: which d2l sources they come from, how to render and check them."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from rag_lab.checksums import read_manifest, verify_files
from rag_lab.sources.d2l.extract.bib import parse_bibliography
from rag_lab.sources.d2l.extract.document import render_document
from rag_lab.sources.d2l.extract.numbering import book_numbering

SOURCES: tuple[str, ...] = (
    "chapter_preliminaries/ndarray.md",
    "chapter_preliminaries/pandas.md",
    "chapter_preliminaries/linear-algebra.md",
    "chapter_preliminaries/calculus.md",
    "chapter_preliminaries/autograd.md",
    "chapter_preliminaries/probability.md",
    "chapter_linear-regression/linear-regression.md",
    "chapter_linear-regression/oo-design.md",
    "chapter_linear-regression/synthetic-regression-data.md",
    "chapter_linear-regression/linear-regression-scratch.md",
    "chapter_linear-regression/linear-regression-concise.md",
    "chapter_linear-regression/generalization.md",
    "chapter_linear-regression/weight-decay.md",
    "chapter_linear-classification/softmax-regression.md",
    "chapter_linear-classification/image-classification-dataset.md",
    "chapter_linear-classification/classification.md",
    "chapter_linear-classification/softmax-regression-scratch.md",
    "chapter_linear-classification/softmax-regression-concise.md",
    "chapter_linear-classification/generalization-classification.md",
    "chapter_linear-classification/environment-and-distribution-shift.md",
)
"""The source of each document, in corpus order: book sections 2.1-2.6, 3.1-3.7, 4.1-4.7."""

OUTPUT_MANIFEST = Path(__file__).with_name("SHA256SUMS")
"""The expected sha256 of every document (a copy of the prepared corpus's ``SHA256SUMS``)."""


def document_name(index: int, source: str) -> str:
    """The file name of the ``index``-th document (from 1): ``NN-<source stem>.md``."""
    return f"{index:02d}-{PurePosixPath(source).stem}.md"


def render_corpus(source_root: Path) -> dict[str, str]:
    """Render every document from the d2l sources under ``source_root``, by file name.

    Cross-references need the whole book's numbering and citations its
    bibliography, so ``source_root`` must hold all the inputs of the raw
    manifest, not only the 20 sources.
    """
    numbering = book_numbering(source_root)
    bibliography = parse_bibliography((source_root / "d2l.bib").read_text(encoding="utf-8"))
    return {
        document_name(index, source): render_document(
            (source_root / source).read_text(encoding="utf-8"), numbering, bibliography
        )
        for index, source in enumerate(SOURCES, start=1)
    }


def write_corpus(source_root: Path, out: Path) -> list[Path]:
    """Render the documents into ``out`` and check them against :data:`OUTPUT_MANIFEST`.

    Returns the written paths. Raises :class:`~rag_lab.checksums.VerificationError`
    naming every document whose sha256 differs; the files stay on disk so that
    the difference can be inspected.
    """
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_corpus(source_root).items():
        path = out / name
        path.write_bytes(text.encode("utf-8"))
        written.append(path)
    verify_files(out, read_manifest(OUTPUT_MANIFEST))
    return written
