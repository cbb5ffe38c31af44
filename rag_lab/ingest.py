"""Read a folder of Markdown and plain-text files into a stamped index, one document at a time.

A file that cannot become a document (unreadable, empty, binary, not UTF-8, too large,
nothing to index) ends ``failed`` with its reason while the others are indexed: one
broken file never breaks a folder. Unchanged files are skipped by the sha256 of their
bytes. A document whose vectors carry another stamp (a new model or pipeline version)
is marked ``stale`` and kept as it is until ``rebuild=True`` re-embeds it, so an upgrade
is a deliberate step that :func:`rag_lab.index.retriever` insists on.

Each document is written in its own transaction (:meth:`rag_lab.store.Store.replacing`):
chunks go in batch by batch as they are embedded and the chunk count is recorded when the
last one is in; an exception or a killed process in between leaves the previous state.
Errors that are not the file's fault (the encoder, the database) are not turned into a
``failed`` state: they stop the run, and running it again resumes.

Which files: every ``.md``, ``.markdown`` and ``.txt`` file under the folder, hidden
folders skipped; when the folder holds a ``SHA256SUMS`` manifest, only the files it lists
(as in the lab's corpus, whose folder also holds notes and licences). A document's id is
its path relative to the folder without the suffix, e.g. ``guides/setup``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from rag_lab.chunking import STRATEGIES, Chunk, Strategy
from rag_lab.chunking import chunk_document as chunk_markdown
from rag_lab.corpus import Document, read_sums, sha256
from rag_lab.index import PIPELINE_VERSION, STRATEGY, TextEncoder, current_stamp
from rag_lab.markdown import MarkdownDoc
from rag_lab.store import Status, Store

MAX_BYTES = 5 * 1024 * 1024
"""Larger files fail as ``too large``: 5 MB of text is a book, likely not meant for one index."""
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt",)
SUFFIXES = MARKDOWN_SUFFIXES + TEXT_SUFFIXES
MANIFEST = "SHA256SUMS"
WRITE_BATCH = 64
"""Chunks embedded and written per step within a document's transaction."""

# Where the chunker would see a Markdown heading; plain text has none (see _chunk_plain).
_LINE_START_HASH = re.compile(r"^#", re.MULTILINE)


class Unreadable(Exception):
    """A file that cannot become a document; ``reason`` is what the index records."""

    def __init__(self, reason: str, sha256: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sha256 = sha256


class IngestError(ValueError):
    """The folder cannot be indexed or loaded at all; ``problems`` lists why, one per line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Source:
    """A file found in the folder, with the document id it gets."""

    id: str
    path: str
    """Relative to the folder, ``/``-separated."""
    file: Path
    clash: str | None = None
    """The path of an earlier file with the same id, if any: then this one cannot be indexed."""


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

    def summary(self) -> str:
        parts = [(len(self.indexed), "indexed"), (len(self.skipped), "unchanged")]
        parts += [(len(self.failed), "failed"), (len(self.stale), "stale")]
        parts += [(len(self.removed), "removed")]
        return ", ".join(f"{n} {what}" for n, what in parts)


def discover(folder: str | os.PathLike) -> list[Source]:
    """The files to index under ``folder``, sorted by path (see the module docstring)."""
    root = Path(folder)
    manifest = root / MANIFEST
    if manifest.is_file():
        names = [n for n in read_sums(manifest) if Path(n).suffix.lower() in SUFFIXES]
        files = [root / n for n in names if (root / n).is_file()]
    else:
        files = [
            p
            for p in root.rglob("*")
            if p.suffix.lower() in SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        ]
    sources: list[Source] = []
    first: dict[str, str] = {}
    for file in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        path = file.relative_to(root).as_posix()
        doc_id = path.rsplit(".", 1)[0]
        if doc_id in first:
            # The later file keeps its full path as id, so its failure has a row of its own.
            sources.append(Source(path, path, file, clash=first[doc_id]))
        else:
            first[doc_id] = path
            sources.append(Source(doc_id, path, file))
    return sources


def read(source: Source) -> tuple[Document, str]:
    """The document in ``source`` and the sha256 of its bytes; raise :class:`Unreadable`.

    Markdown gets its title from the first ``# `` line (as the corpus loader does); plain
    text is titled by its file name.
    """
    if source.clash:
        raise Unreadable(f"same document id as {source.clash}; rename one of them")
    try:
        size = source.file.stat().st_size
        if size > MAX_BYTES:
            raise Unreadable(f"too large: {size:,} bytes, over the {MAX_BYTES:,}-byte limit")
        data = source.file.read_bytes()
    except OSError as err:
        raise Unreadable(f"unreadable: {err.strerror or err}") from None
    digest = sha256(data)
    if not data:
        raise Unreadable("empty file", digest)
    if b"\0" in data:
        raise Unreadable(f"binary: a NUL byte at byte {data.index(0)}", digest)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Unreadable(f"not UTF-8: {err.reason} at byte {err.start}", digest) from None
    stem = Path(source.path).stem
    if _is_plain(source.file):
        title = stem
    else:
        title = next((h.title for h in MarkdownDoc(text).headings if h.level == 1), stem)
    return Document(source.id, title, text, source.file), digest


def chunk_document(doc: Document, strategy: str | Strategy = STRATEGY) -> list[Chunk]:
    """:func:`rag_lab.chunking.chunk_document`, with plain-text files read as one section."""
    if doc.path is not None and _is_plain(doc.path):
        return _chunk_plain(doc, strategy)
    return chunk_markdown(doc, strategy)


def chunk_all(docs: Sequence[Document]) -> dict[str, list[Chunk]]:
    """All six strategies over the same documents, keyed ``"A"``–``"F"``."""
    return {name: [c for d in docs for c in chunk_document(d, name)] for name in STRATEGIES}


def load_folder(folder: str | os.PathLike) -> list[Document]:
    """Every document of ``folder``, or :class:`IngestError` listing each file that fails.

    For evaluation, where a corpus is all or nothing: a file that cannot be read is an
    error, and a ``SHA256SUMS`` manifest, if present, must match every file it lists.
    """
    root = Path(folder)
    if not root.is_dir():
        raise IngestError([f"{root}: not a folder"])
    docs, problems, sums = [], [], {}
    for source in discover(root):
        try:
            doc, sums[source.path] = read(source)
            docs.append(doc)
        except Unreadable as err:
            problems.append(f"{source.file}: {err.reason}")
    if (root / MANIFEST).is_file():
        for name, expected in read_sums(root / MANIFEST).items():
            if Path(name).suffix.lower() not in SUFFIXES:
                continue
            if not (root / name).is_file():
                problems.append(f"{root / name}: listed in {MANIFEST} but missing")
            elif name in sums and sums[name] != expected:
                problems.append(f"{root / name}: sha256 {sums[name]}, {MANIFEST} says {expected}")
    if not docs and not problems:
        problems.append(f"{root}: no .md, .markdown or .txt files")
    if problems:
        raise IngestError(problems)
    return docs


def index_folder(
    folder: str | os.PathLike,
    store: Store,
    encoder: TextEncoder,
    *,
    pipeline_version: str = PIPELINE_VERSION,
    rebuild: bool = False,
    progress: bool | None = None,
) -> IngestReport:
    """Bring ``store`` up to date with ``folder``; one failed file never stops the others.

    New, changed and previously failed files are (re-)indexed; unchanged ones are skipped;
    unchanged ones embedded with another stamp are marked ``stale`` (re-embedded when
    ``rebuild``); documents whose file is gone are removed. ``progress``: a bar per file
    (None: only on a terminal). An index holds one folder; another raises
    :class:`IngestError`.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise IngestError([f"{root}: not a folder"])
    held = store.meta("folder")
    if held is not None and held != str(root):
        raise IngestError(
            [f"this index holds {held}, not {root}; index another folder with --index PATH"]
        )
    store.set_meta("folder", str(root))
    sources = discover(root)
    report = _ingest(sources, store, encoder, pipeline_version, rebuild, progress)
    found = {s.id for s in sources}
    gone = [r.id for r in store.documents() if r.id not in found]
    store.remove(gone)
    return dataclasses.replace(report, removed=gone)


def retry(
    store: Store,
    encoder: TextEncoder,
    *,
    pipeline_version: str = PIPELINE_VERSION,
    progress: bool | None = None,
) -> IngestReport:
    """Re-attempt every ``failed`` document of the index's folder, and only those."""
    held = store.meta("folder")
    failed = {r.id for r in store.documents() if r.status is Status.FAILED}
    if held is None or not failed:
        return IngestReport()
    sources = [s for s in discover(held) if s.id in failed]
    report = _ingest(sources, store, encoder, pipeline_version, False, progress)
    gone = sorted(failed - {s.id for s in sources})
    store.remove(gone)
    return dataclasses.replace(report, removed=gone)


def _ingest(
    sources: Sequence[Source],
    store: Store,
    encoder: TextEncoder,
    pipeline_version: str,
    rebuild: bool,
    progress: bool | None,
) -> IngestReport:
    current = current_stamp(encoder.fingerprint, pipeline_version)
    previous = {r.id: r for r in store.documents()}
    indexed, skipped, stale, failed = [], [], [], {}
    for source in tqdm(sources, desc="indexing", unit="file", disable=_disable(progress)):
        prev = previous.get(source.id)
        try:
            doc, digest = read(source)
            unchanged = prev is not None and prev.sha256 == digest
            if unchanged and prev.status is not Status.FAILED:
                if prev.stamp == current:
                    if prev.status is Status.STALE:  # the stamp is current again
                        store.set_status([source.id], Status.INDEXED)
                    skipped.append(source.id)
                    continue
                if not rebuild:
                    if prev.status is not Status.STALE:
                        store.set_status([source.id], Status.STALE)
                    stale.append(source.id)
                    continue
            chunks = chunk_document(doc)
            if not chunks:
                raise Unreadable("nothing to index: no text outside headings", digest)
        except Unreadable as err:
            store.fail(source.id, source.path, err.sha256, err.reason)
            failed[source.id] = err.reason
            continue
        with store.replacing(source.id) as writer:
            for at in range(0, len(chunks), WRITE_BATCH):
                batch = chunks[at : at + WRITE_BATCH]
                writer.add(batch, encoder.encode([c.text for c in batch], progress=False))
            writer.finish(source.path, digest, doc.title, current)
        indexed.append(source.id)
    return IngestReport(indexed, skipped, failed, stale)


def _is_plain(path: Path) -> bool:
    return path.suffix.lower() in TEXT_SUFFIXES


def _chunk_plain(doc: Document, strategy: str | Strategy) -> list[Chunk]:
    """Chunks of a plain-text document, which is one section whatever its lines look like.

    The chunker reads Markdown headings, and a plain-text line may start with ``#``. So the
    text is chunked with those characters masked (same length, so offsets hold and
    paragraphs and sentences are unchanged) and each chunk re-cut from the real text.
    """
    s = strategy if isinstance(strategy, Strategy) else STRATEGIES[strategy]
    masked = dataclasses.replace(doc, text=_LINE_START_HASH.sub("x", doc.text))
    out = []
    for c in chunk_markdown(masked, s):
        header = c.text.partition("\n")[0] + "\n" if s.header else ""
        body_start = c.end - (len(c.text) - len(header))
        text = header + doc.text[body_start : c.end]
        out.append(dataclasses.replace(c, text=text, content=doc.text[c.start : c.end]))
    return out


def _disable(progress: bool | None) -> bool | None:
    """tqdm's ``disable``: None lets tqdm show the bar only on a terminal."""
    return None if progress is None else not progress
