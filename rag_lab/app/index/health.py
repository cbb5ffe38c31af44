"""What an index holds, seen with the stamp of the code asking: which documents are stale
(:func:`is_stale`), the counts, failures and stamps of ``rag-lab status`` (:func:`status`,
:func:`describe`), and the integrity check of ``rag-lab status --check`` (:func:`check`)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_lab.app.index.recorded import (
    BACKEND_KEY,
    ENCODER_KEY,
    PDF_OPTIONS_KEY,
    DamagedMeta,
    UnknownBackend,
    recorded_backend,
    recorded_encoder,
    recorded_pdf_options,
)
from rag_lab.app.store import DocumentRecord, Pages, Stamp, Status, Store


def is_stale(record: DocumentRecord, current: Stamp) -> bool:
    """Does ``record`` hold vectors that were not made with ``current``?

    The stamp decides, not the stored status: that is the view of whoever indexed last,
    and the code asking may run another model or pipeline version.
    """
    return record.status is not Status.FAILED and record.stamp != current


@dataclass(frozen=True)
class IndexStatus:
    """What the index holds, seen with the stamp of the code asking."""

    counts: dict[str, int]
    """Documents per status (``indexed``, ``failed``, ``stale``), all three present."""
    chunks: int
    """Chunks of the indexed (searchable) documents, as the indexer recorded them."""
    failed: list[DocumentRecord]
    stale: list[DocumentRecord]
    stamps: dict[Stamp, int]
    """Documents per stamp, failed documents (which have none) left out."""
    current: Stamp
    folder: str | None
    flagged: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Path of an OCRed PDF → its pages under the confidence threshold."""
    pdfs: int = 0
    """Indexed PDF documents."""
    running_lines: int = 0
    """Running header and footer lines removed from them."""


def status(store: Store, current: Stamp) -> IndexStatus:
    """Counts by status, failures, stale documents and stamps; a stamp mismatch counts as stale."""
    records = store.documents()
    stale = [r for r in records if is_stale(r, current)]
    failed = [r for r in records if r.status is Status.FAILED]
    indexed = [r for r in records if r.status is not Status.FAILED and not is_stale(r, current)]
    counts = {
        Status.INDEXED.value: len(indexed),
        Status.FAILED.value: len(failed),
        Status.STALE.value: len(stale),
    }
    stamps = Counter(r.stamp for r in records if r.stamp is not None)
    return IndexStatus(
        counts=counts,
        chunks=sum(r.chunk_count or 0 for r in indexed),
        failed=failed,
        stale=stale,
        stamps=dict(sorted(stamps.items(), key=lambda kv: (-kv[1], str(kv[0])))),
        current=current,
        folder=store.meta("folder"),
        flagged={r.path: r.pages.flagged for r in indexed if r.pages and r.pages.flagged},
        pdfs=sum(r.pages is not None for r in indexed),
        running_lines=sum(r.pages.running_lines_removed for r in indexed if r.pages),
    )


WIDTH = 100
"""The width :func:`describe` keeps to: a terminal's, and a notebook's page."""


def describe(st: IndexStatus, where: str = "") -> str:
    """:func:`status` as lines of text: counts, each failure with its reason, the stamps;
    each line fits :data:`WIDTH` characters for the usual names (a stamp takes two).
    ``where``: what the rebuild command adds to act on this index (`` --store URI``)."""
    total = sum(st.counts.values())
    lines = [
        f"{total} documents: "
        + ", ".join(f"{n} {name}" for name, n in st.counts.items())
        + f"; {st.chunks} chunks searchable"
    ]
    if st.failed:
        lines.append("failed (rag-lab retry re-attempts them):")
        lines += [f"  {r.path}: {r.reason}" for r in st.failed]
    if st.stale:
        lines.append(
            f"stale: {len(st.stale)} documents embedded with another stamp; queries are refused "
            "until they are rebuilt:"
        )
        lines.append(f"  rag-lab index {st.folder or 'DIR'} --rebuild{where}")
        lines += [f"  {r.path}" for r in st.stale]
    if st.pdfs:
        lines.append(
            f"{st.pdfs} PDF{'s' * (st.pdfs != 1)}, {st.running_lines} running header and "
            "footer lines removed"
        )
        lines.append("  (rag-lab index --keep-running-lines keeps them)")
    if st.flagged:
        lines.append(
            "OCR pages of low confidence (their text may be wrong; their citations are marked):"
        )
        lines += [f"  {path}: {pages_label(pages)}" for path, pages in st.flagged.items()]
    lines.append("stamps:")
    for stamp, n in st.stamps.items():
        mark = " (current)" if stamp == st.current else ""
        lines += _stamp_lines(f"  {n} × ", stamp, mark)
    if st.current not in st.stamps:
        lines += _stamp_lines("  current: ", st.current, "")
    return "\n".join(lines)


def _stamp_lines(head: str, stamp: Stamp, mark: str) -> list[str]:
    """A stamp in two lines: the model, then the pipeline and reader, under the same indent."""
    return [
        f"{head}{stamp.model_name} (fingerprint {stamp.model_key}, {stamp.dimensions} dims)",
        f"{' ' * len(head)}pipeline {stamp.pipeline_version}, reader {stamp.reader_version}{mark}",
    ]


def _pages_sound(pages: Pages) -> bool:
    """Page starts from 0, increasing; OCR confidences, if any, one per page."""
    s = pages.starts
    ordered = bool(s) and s[0] == 0 and all(a < b for a, b in itertools.pairwise(s))
    return ordered and len(pages.confidences) in (0, len(s))


def pages_label(pages: Sequence[int]) -> str:
    """``p. 3`` or ``pp. 2, 5``."""
    return ("p. " if len(pages) == 1 else "pp. ") + ", ".join(map(str, pages))


def check(store: Store) -> list[str]:
    """Every problem of the index file, one line each; empty when it is sound.

    The store's integrity check first (when it fails, the tables cannot be trusted); then
    the ``meta`` values, each document's chunk count, vector dimensions and page starts
    against what it records, and chunks of no document.
    """
    problems = [f"{store.engine} integrity check: {line}" for line in store.integrity()]
    if problems:
        return problems
    for key, read in (
        (BACKEND_KEY, recorded_backend),
        (ENCODER_KEY, recorded_encoder),
        (PDF_OPTIONS_KEY, recorded_pdf_options),
    ):
        try:
            read(store)
        except UnknownBackend as err:
            problems.append(f"meta {key}: {err}")
        except DamagedMeta as err:
            problems.append(f"meta {key}: {err.what}")
    stats = store.chunk_stats()
    records = {r.id: r for r in store.documents()}
    for r in records.values():
        n, sizes = stats.get(r.id, (0, set()))
        if r.status is Status.FAILED:
            if n:
                problems.append(f"{r.id}: failed, yet {n} chunks are stored")
            continue
        if r.stamp is None:
            problems.append(f"{r.id}: {r.status.value} without a stamp")
            continue
        if r.chunk_count != n:
            problems.append(f"{r.id}: {r.chunk_count} chunks recorded, {n} stored")
        if r.pages is not None and not _pages_sound(r.pages):
            problems.append(
                f"{r.id}: its page starts {list(r.pages.starts)[:5]}… do not start at 0 and "
                "increase, or its OCR confidences are not one per page"
            )
        wrong = sorted(size // 4 for size in sizes if size != 4 * r.stamp.dimensions)
        if wrong:
            dims, said = ", ".join(map(str, wrong)), r.stamp.dimensions
            problems.append(f"{r.id}: vectors of {dims} dimensions, its stamp says {said}")
    for doc_id in sorted(stats.keys() - records.keys()):
        problems.append(f"{doc_id}: {stats[doc_id][0]} chunks of a document not in the index")
    return problems
