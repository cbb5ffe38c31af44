"""Bring a stamped index up to date with a folder, one document at a time.

Files are found and read by :mod:`rag_lab.sources.folder`. A file that cannot become a
document ends ``failed`` with its reason while the others are indexed: one broken file
never breaks a folder (any exception while reading it is its failure:
:func:`~rag_lab.sources.folder.read_source`). A document is chunked by
:func:`~rag_lab.chunking.chunk_bounded`: the deployed strategy, with a passage that has no
paragraph or sentence break cut into pieces (:attr:`IngestReport.cut`). Unchanged files
are skipped by the sha256 of their bytes, as long as they are read the same way (a PDF
read by another extractor, library version or option is a new text, so it is indexed
again; :attr:`~rag_lab.sources.folder.Read.reading`) from the same path (``a.md`` renamed
``a.txt`` keeps its id, ``a``, but is plain text now: it is read again,
:attr:`IngestReport.renamed`).
How PDFs are read (:class:`~rag_lab.sources.folder.PdfOptions`) is recorded in the index's
``meta``, so that :func:`retry` reads them as the run that failed them did. A
document whose vectors carry another stamp (a new model or pipeline version) is marked
``stale`` and kept as it is until ``rebuild=True`` re-embeds it, so an upgrade is a
deliberate step that :func:`rag_lab.app.index.retriever` insists on.

Each document is written in its own transaction (:meth:`rag_lab.app.store.Store.replacing`):
chunks go in batch by batch as they are embedded and the chunk count is recorded when the
last one is in; an exception or a killed process in between leaves the previous state.
Failed documents are recorded together, a thousand per transaction.
Errors that are not the file's fault (the encoder, the database) are not turned into a
``failed`` state: they stop the run, and running it again resumes.

Removals are decisions, not accidents: a document under a folder that cannot be listed
ends ``failed`` with that reason (it is not gone, it is unseen), and a run that would
remove more than half of the indexed documents (an unmounted drive, a wrong path) is
refused with :class:`IngestError`, before anything is written, unless ``prune=True``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.app import deployed
from rag_lab.app.index import (
    STRATEGY,
    current_stamp,
    record_pdf_options,
    recorded_pdf_options,
)
from rag_lab.app.store import DocumentRecord, DocumentTooLarge, Pages, Stamp, Status, Store
from rag_lab.chunking import chunk_bounded
from rag_lab.progress import track
from rag_lab.search import TextEncoder
from rag_lab.sources.folder import (
    IngestError,
    PdfOptions,
    Source,
    Unreadable,
    check_manifest,
    discover,
    name_text,
    read_source,
    scan,
    unchanged_scan,
)
from rag_lab.sources.pdf.document import PdfDocument

WRITE_BATCH = 64
"""Chunks embedded and written per step within a document's transaction."""
FAIL_BATCH = 1_000
"""Failed documents recorded per transaction (:class:`_Failures`)."""


@dataclass(frozen=True)
class IngestReport:
    """What one run did, by document id."""

    indexed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Unchanged since the last run, stamp current."""
    failed: dict[str, str] = field(default_factory=dict)
    """Document id → reason."""
    stale: list[str] = field(default_factory=list)
    """Unchanged, but embedded with another stamp; left as they are (``rebuild=True``)."""
    removed: list[str] = field(default_factory=list)
    """In the index but no longer in the folder."""
    not_followed: dict[str, str] = field(default_factory=dict)
    """Path → why it was not read (symbolic links); not documents, so not in the index."""
    other: dict[str, int] = field(default_factory=dict)
    """Suffix (``""``: none) → files not read, of a type the reader does not read."""
    running_lines: dict[str, int] = field(default_factory=dict)
    """PDF document id → running header and footer lines removed, for those indexed now."""
    flagged: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """OCRed document id → its pages under the confidence threshold, for those indexed now."""
    cut: dict[str, int] = field(default_factory=dict)
    """Document id → its passages over the chunk bound, cut into pieces
    (:func:`~rag_lab.chunking.chunk_bounded`), for those indexed now."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Document id → the path it was recorded under, for a file whose path changed but not
    its id (``a.md`` renamed ``a.txt``): read again and recorded under its new path."""
    warned: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Document id → what the PDF library warned of while reading it, for those indexed
    now (:attr:`~rag_lab.sources.folder.Read.warnings`; a failed one's reason holds them)."""

    def summary(self) -> str:
        parts = [(len(self.indexed), "indexed"), (len(self.skipped), "unchanged")]
        parts += [(len(self.failed), "failed"), (len(self.stale), "stale")]
        parts += [(len(self.removed), "removed")]
        return ", ".join(f"{n} {what}" for n, what in parts)


def index_folder(
    folder: str | os.PathLike,
    store: Store,
    encoder: TextEncoder,
    *,
    strategy: str = STRATEGY,
    pipeline_version: str | None = None,
    rebuild: bool = False,
    progress: bool | None = None,
    prune: bool = False,
    follow_symlinks: bool = False,
    pdf: PdfOptions | None = None,
    index: str | os.PathLike | None = None,
) -> IngestReport:
    """Bring ``store`` up to date with ``folder``; one failed file never stops the others.

    New, changed and previously failed files are (re-)indexed; unchanged ones are skipped;
    unchanged ones embedded with another stamp are marked ``stale`` (re-embedded when
    ``rebuild``); documents whose file is gone are removed. ``progress``: a bar per file
    (None: only on a terminal). An index holds one folder; another raises
    :class:`IngestError`, as does a run that would remove more than half of the documents
    (or all of them) unless ``prune``. ``follow_symlinks``: follow links that leave the
    folder, and symlinked folders. ``pdf``: how PDFs are read (default :class:`PdfOptions`).
    ``index``: the index file's path, when it may lie inside the folder: it and the files
    its lifecycle writes beside it are not read (:func:`~rag_lab.sources.folder.scan`).
    ``strategy``: the chunking (recorded in the index's ``meta``); ``pipeline_version`` of the
    stamps: the strategy's (:func:`~rag_lab.app.deployed.pipeline_version`) when None.
    """
    root = folder_root(folder)
    check_folder(store.meta("folder"), root)
    found = scan(root, follow_symlinks=follow_symlinks, index=index)
    ids = {s.id for s in found.sources}
    records = store.documents()
    unseen = {r.id: _unlisted(r.path, found.unlisted) for r in records if r.id not in ids}
    gone = [doc_id for doc_id, why in unseen.items() if why is None]
    if gone and len(gone) * 2 > len(records) and not prune:
        raise IngestError(
            [
                f"{root}: this run would remove {len(gone)} of the {len(records)} indexed "
                "documents (their files are not in the folder); if the folder is right (not "
                "an unmounted drive or a wrong path), run again with --prune"
            ]
        )
    store.set_meta("folder", str(root))
    store.set_meta(deployed.STRATEGY_KEY, strategy)
    options = pdf or PdfOptions()
    record_pdf_options(store, options)
    version = pipeline_version or deployed.pipeline_version(strategy)
    report = _ingest(found.sources, store, encoder, (strategy, version), rebuild, progress, options)
    failures = _Failures(store)
    for r in records:
        why = unseen.get(r.id)
        if why is not None:
            failures.add(r, r.id, r.path, None, why)
            report.failed[r.id] = why
    failures.flush()
    store.remove(gone)
    return dataclasses.replace(
        report, removed=gone, not_followed=found.skipped, other=dict(found.other)
    )


def folder_root(folder: str | os.PathLike) -> Path:
    """``folder`` resolved, or :class:`IngestError` if it is not a folder an index can hold:
    the index records its folder as text, so a name that is not UTF-8 is refused, and a
    ``SHA256SUMS`` that cannot be read (:func:`~rag_lab.sources.folder.check_manifest`)
    leaves nothing to index."""
    root = Path(folder).resolve()
    if not root.is_dir():
        raise IngestError([f"{root}: not a folder"])
    if name_text(str(root)) != str(root):
        raise IngestError(
            [f"{name_text(str(root))}: the folder's name is not valid UTF-8; rename it"]
        )
    check_manifest(root)
    return root


class OtherFolder(IngestError):
    """The index holds another folder (the command line names how to give another index)."""


def check_folder(held: str | None, root: Path) -> None:
    """An index holds one folder: raise :class:`OtherFolder` if it holds ``held``, not ``root``."""
    if held is not None and held != str(root):
        raise OtherFolder(
            [f"this index holds {held}, not {root}; index another folder into another index"]
        )


def retry(
    store: Store,
    encoder: TextEncoder,
    *,
    pipeline_version: str | None = None,
    progress: bool | None = None,
    index: str | os.PathLike | None = None,
) -> IngestReport:
    """Re-attempt every ``failed`` document of the index's folder, and only those.

    PDFs are read with the options of the last :func:`index_folder` run; a record of them
    that is damaged raises :class:`~rag_lab.app.index.DamagedMeta` before anything is read.
    Documents are chunked by the index's recorded strategy. ``index`` as there.
    """
    held = store.meta("folder")
    failed = {r.id for r in store.documents() if r.status is Status.FAILED}
    if held is None or not failed:
        return IngestReport()
    if not Path(held).is_dir():
        raise IngestError([f"{held}: the index's folder is not there (not mounted?); nothing done"])
    options = recorded_pdf_options(store)  # a damaged record is refused before any file is read
    sources = [s for s in discover(held, index=index) if s.id in failed]
    strategy = deployed.recorded_strategy(store)
    version = pipeline_version or deployed.pipeline_version(strategy)
    report = _ingest(sources, store, encoder, (strategy, version), False, progress, options)
    gone = sorted(failed - {s.id for s in sources})
    store.remove(gone)
    return dataclasses.replace(report, removed=gone)


def _ingest(
    sources: Sequence[Source],
    store: Store,
    encoder: TextEncoder,
    chunking: tuple[str, str],
    rebuild: bool,
    progress: bool | None,
    options: PdfOptions,
) -> IngestReport:
    """``sources`` into ``store``; ``chunking``: (strategy, pipeline version of the stamps)."""
    strategy, version = chunking
    current = current_stamp(encoder.fingerprint, version)
    previous = {r.id: r for r in store.documents()}
    indexed, skipped, stale, failed = [], [], [], {}
    running: dict[str, int] = {}
    flagged: dict[str, tuple[int, ...]] = {}
    cut: dict[str, int] = {}
    warned: dict[str, tuple[str, ...]] = {}
    renamed: dict[str, str] = {}
    failures = _Failures(store)
    for source in track(sources, "indexing", "file", show=progress):
        prev = previous.get(source.id)
        # A file renamed to the same id (a.md → a.txt) is another file: read as its suffix
        # says, and recorded under its new path.
        kept = prev is not None and prev.status is not Status.FAILED and prev.path == source.path
        if prev is not None and prev.path != source.path:
            renamed[source.id] = prev.path
        try:
            # An unchanged scan is settled before it is read: OCR takes seconds a page.
            scanned = kept and prev.pages is not None and bool(prev.pages.confidences)
            if scanned and unchanged_scan(source, options, prev.reading or "", prev.sha256 or ""):
                settled = _settle(store, prev, current, rebuild)
                if settled is not None:
                    (skipped if settled == "skipped" else stale).append(source.id)
                    continue
            got = read_source(source, options)
            doc, digest = got.document, got.sha256
            if kept and prev.sha256 == digest and prev.reading == got.reading:
                settled = _settle(store, prev, current, rebuild)
                if settled is not None:
                    (skipped if settled == "skipped" else stale).append(source.id)
                    continue
            bounded = chunk_bounded(doc, strategy)
            chunks = bounded.chunks
            if not chunks:
                raise Unreadable("nothing to index: no text outside headings", digest)
        except Unreadable as err:
            failures.add(prev, source.id, source.path, err.sha256, err.reason)
            failed[source.id] = err.reason
            continue
        try:  # a document past the store's limits fails alone, left as it was
            with store.replacing(source.id) as writer:
                for at in range(0, len(chunks), WRITE_BATCH):
                    batch = chunks[at : at + WRITE_BATCH]
                    writer.add(batch, encoder.encode([c.text for c in batch], progress=False))
                pages = _pages(got.pdf) if got.pdf else None
                writer.finish(
                    source.path, digest, doc.title, current, reading=got.reading, pages=pages
                )
        except DocumentTooLarge as err:
            failures.add(prev, source.id, source.path, digest, err.reason)
            failed[source.id] = err.reason
            continue
        indexed.append(source.id)
        if pages and pages.running_lines_removed:
            running[source.id] = pages.running_lines_removed
        if pages and pages.flagged:
            flagged[source.id] = pages.flagged
        if bounded.cut:
            cut[source.id] = bounded.cut
        if got.warnings:
            warned[source.id] = got.warnings
    failures.flush()
    return IngestReport(
        indexed,
        skipped,
        failed,
        stale,
        running_lines=running,
        flagged=flagged,
        cut=cut,
        warned=warned,
        renamed=renamed,
    )


class _Failures:
    """The documents of a run that failed, recorded :data:`FAIL_BATCH` at a time
    (:meth:`~rag_lab.app.store.Store.fail`: one transaction each), not one by one: a folder
    of 20,000 empty files is one write, not 20,000. One whose record says it failed already,
    its file, bytes and reason the same, is left as it is: a folder of failed files is not
    rewritten on every run. What a run stopped before :meth:`flush` did not record, the next
    run finds failed again."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._pending: list[DocumentRecord] = []

    def add(
        self,
        prev: DocumentRecord | None,
        doc_id: str,
        path: str,
        sha256: str | None,
        reason: str,
    ) -> None:
        """Document ``doc_id`` (at ``path``; ``prev`` its record, if any) failed."""
        held = prev is not None and prev.status is Status.FAILED
        if held and (prev.path, prev.sha256, prev.reason) == (path, sha256, reason):
            return
        self._pending.append(DocumentRecord.failure(doc_id, path, sha256, reason))
        if len(self._pending) >= FAIL_BATCH:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._store.fail(self._pending)
            self._pending = []


def _settle(store: Store, prev: DocumentRecord, current: Stamp, rebuild: bool) -> str | None:
    """For an unchanged document: ``skipped`` (stamp current), ``stale`` (not, and no
    ``rebuild``; its status set), or None: it is to be indexed again."""
    if prev.stamp == current:
        if prev.status is Status.STALE:  # the stamp is current again
            store.set_status([prev.id], Status.INDEXED)
        return "skipped"
    if rebuild:
        return None
    if prev.status is not Status.STALE:
        store.set_status([prev.id], Status.STALE)
    return "stale"


def _pages(pdf: PdfDocument) -> Pages:
    """What the index keeps of a :class:`~rag_lab.sources.pdf.document.PdfDocument`."""
    return Pages(
        pdf.starts,
        len(pdf.removed),
        pdf.ocr.confidences if pdf.ocr else (),
        pdf.ocr.min_confidence if pdf.ocr else None,
    )


def _unlisted(path: str, unlisted: dict[str, str]) -> str | None:
    """Why the file at ``path`` was not seen, if a folder above it could not be listed."""
    for folder, reason in unlisted.items():
        if folder == "." or path.startswith(folder + "/"):
            return f"not seen: the folder {folder}/ cannot be listed ({reason})"
    return None
