"""Read a folder of Markdown, plain-text, PDF, reST and HTML files into documents, one reason
per failure.

Which files (:func:`scan`): every ``.md``, ``.markdown``, ``.txt``, ``.pdf``, ``.rst``, ``.html``
and ``.htm`` file under the folder, hidden names skipped, the others counted by suffix; when the
folder holds a ``SHA256SUMS`` manifest, only the files it lists (as in the lab's corpus, whose
folder also holds notes and licences). A document's id
is its path relative to the folder without the suffix (``guides/setup``); a name that is not
UTF-8 is written by :func:`name_text`, so that the index and its citations hold text. Symbolic
links are followed only when they stay inside the folder (or with ``follow_symlinks``); those
not followed, and subfolders that cannot be listed, are reported with the reason, so a caller
never mistakes a file it could not see for a file that is gone.

A file that cannot become a document raises :class:`Unreadable` with the reason an index
records. A PDF is read by :func:`rag_lab.sources.pdf.document.read_pdf` (:class:`PdfOptions`)
into ``plain`` text whose pages are joined by a page break and a newline; reST and HTML into
Markdown (:data:`READERS`, :mod:`rag_lab.sources.markup`). :func:`load_folder`
is the all-or-nothing reading an evaluation needs; :mod:`rag_lab.app.ingest` reads file by file.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_lab.checksums import ManifestError, read_manifest, sha256_bytes
from rag_lab.documents import Document, title_of
from rag_lab.errors import BadInput
from rag_lab.sources import html, rst
from rag_lab.sources.encoding import wide_encoding
from rag_lab.sources.pdf import document as pdf

READER_VERSION = "1"
"""Bump whenever :func:`read` could turn the same bytes into another document."""

MAX_BYTES = 5 * 1024 * 1024
"""Larger files fail as ``too large``: 5 MB of text is a book, likely not meant for one index."""
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt",)
PDF_SUFFIXES = (".pdf",)
READERS = {".rst": rst.read_rst, ".html": html.read_html, ".htm": html.read_html}
"""Markup read into Markdown (:mod:`rag_lab.sources.markup`), by suffix."""
SUFFIXES = MARKDOWN_SUFFIXES + TEXT_SUFFIXES + PDF_SUFFIXES + tuple(READERS)
MAX_PDF_BYTES = 100 * 1024 * 1024
"""PDFs carry fonts and images besides their text, so their limit is higher: 100 MB."""
MANIFEST = "SHA256SUMS"
RUNNING_LINES_HINT = "(rag-lab index --keep-running-lines keeps them)"
NOT_FOLLOWED = "not followed (--follow-symlinks follows it)"


class Unreadable(BadInput):
    """A file that cannot become a document; ``reason`` is what the index records."""

    def __init__(self, reason: str, sha256: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sha256 = sha256


class IngestError(BadInput, ValueError):
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
    expected: str | None = None
    """The sha256 a ``SHA256SUMS`` manifest lists for it (the lab's corpus has one)."""


@dataclass(frozen=True)
class PdfOptions:
    """How PDFs are read (``rag-lab index --pdf-extractor, --keep-running-lines, --ocr``)."""

    extractor: str = pdf.DEFAULT_EXTRACTOR
    keep_running_lines: bool = False
    ocr: bool = False
    ocr_min_confidence: float = pdf.OCR_MIN_CONFIDENCE


@dataclass(frozen=True)
class Read:
    """What :func:`read_source` made of a file."""

    document: Document
    sha256: str
    pdf: pdf.PdfDocument | None = None
    """For a PDF: its pages, how it was read, and what was removed; None for text files."""
    warnings: tuple[str, ...] = ()
    """What the PDF library or docutils warned of while reading it, in order (:func:`warned`)."""

    @property
    def reading(self) -> str:
        """How the file was read: a PDF's :attr:`~.PdfDocument.reading`, else the reader's."""
        return self.pdf.reading if self.pdf else f"text reader {READER_VERSION}"


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the files to read, and what it could not or would not see."""

    sources: list[Source]
    unlisted: dict[str, str]
    """Folder (relative, ``.`` for the root) → why it could not be listed."""
    skipped: dict[str, str]
    """Path (relative) → why it was not followed (symbolic links)."""
    other: Counter[str]
    """Suffix (``""``: none) → files of a type not read, hidden ones aside; not documents."""


def name_text(name: str) -> str:
    """A file name as text: what :func:`os.fsdecode` kept as a surrogate (a byte that is not
    UTF-8) written ``\\xNN``; a UTF-8 name is returned as it is.

    >>> name_text(os.fsdecode(b"caf\\xe9.md"))
    'caf\\\\xe9.md'
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def discover(
    folder: str | os.PathLike,
    *,
    follow_symlinks: bool = False,
    index: str | os.PathLike | None = None,
) -> list[Source]:
    """The files to index under ``folder``, sorted by path (see the module docstring)."""
    return scan(folder, follow_symlinks=follow_symlinks, index=index).sources


def scan(
    folder: str | os.PathLike,
    *,
    follow_symlinks: bool = False,
    index: str | os.PathLike | None = None,
) -> Scan:
    """:func:`discover`'s files, with the folders it could not list and the links it skipped.

    ``index``: the index file the run writes, which may lie inside the folder. It and the
    files its lifecycle writes beside it (``<index>-journal``, ``<index>.lock``…) are never
    read, or the index would index itself; said once, in :attr:`Scan.skipped`.
    """
    root = Path(folder)
    manifest = root / MANIFEST
    unlisted: dict[str, str] = {}
    skipped: dict[str, str] = {}
    sums: dict[str, str] = {}
    other: Counter[str] = Counter()
    if manifest.is_file():
        sums = _manifest(manifest)
        other.update(s for s in (Path(n).suffix.lower() for n in sums) if s not in SUFFIXES)
        files = []
        for name in (n for n in sums if Path(n).suffix.lower() in SUFFIXES):
            outside = _outside(root, name, follow_symlinks)
            if outside:
                skipped[name] = outside
            elif (root / name).is_file():
                files.append(root / name)
    else:
        files = _walk(root, follow_symlinks, unlisted, skipped, other)
    own = _of_index(index)
    if mine := [f for f in files if own(f)]:
        files = [f for f in files if not own(f)]
        here = Path(index).absolute()
        if not here.is_relative_to(root.absolute()):  # through a link: where it was found
            here = mine[0].parent / here.name
        skipped[name_text(here.relative_to(root).as_posix())] = (
            "the index itself, inside the folder: not read, nor any file it writes (its "
            "journal, lock, rebuild)"
        )
    return Scan(_sources(root, files, sums), unlisted, skipped, other)


def _of_index(index: str | os.PathLike | None) -> Callable[[Path], bool]:
    """Is a file the index at ``index`` (or, through a link, its target), one of the files
    beside it that its lifecycle writes (its name, then ``-`` or ``.``), or, when the index
    is a folder (Milvus Lite's), inside it?"""
    if index is None:
        return lambda file: False
    given = Path(index).absolute()
    places = {(given.parent.resolve(), given.name), (given.resolve().parent, given.resolve().name)}
    inside = given.resolve() if given.is_dir() else None

    def own(file: Path) -> bool:
        where = file.parent.resolve()
        if inside is not None and where.is_relative_to(inside):
            return True
        return any(
            where == folder
            and (file.name == name or file.name.startswith((f"{name}-", f"{name}.")))
            for folder, name in places
        )

    return own


def _outside(root: Path, name: str, follow: bool) -> str | None:
    """Why the manifest's entry ``name`` is not read, if it leads outside ``root``: never
    when absolute or climbing (``../``), as a manifest describes its own folder; through a
    symbolic link, only with ``follow``."""
    if Path(name).is_absolute() or ".." in Path(name).parts:
        return f"listed in {MANIFEST}, but outside the folder; not read"
    target = (root / name).resolve()
    if not follow and (root / name).exists() and not target.is_relative_to(root.resolve()):
        link = f"a symbolic link to {target}, outside the folder, {NOT_FOLLOWED}"
        return f"listed in {MANIFEST}, but {link}"
    return None


def _walk(
    root: Path, follow: bool, unlisted: dict[str, str], skipped: dict[str, str], other: Counter
) -> list[Path]:
    """Every file with a known suffix under ``root``, hidden names skipped; see :func:`scan`.

    Walked from the top down on an explicit stack: Python 3.11's :func:`os.walk` recurses
    once per level, so a tree deeper than about 1,000 folders raised ``RecursionError``.
    """
    real_root = root.resolve()

    def rel(p: Path) -> str:
        return name_text(p.relative_to(root).as_posix())

    files: list[Path] = []
    seen: set[Path] = set()
    stack = [root]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as listing:
                entries = [(entry.name, _is_dir(entry)) for entry in listing]
        except OSError as err:
            unlisted[rel(here)] = err.strerror or str(err)
            continue
        if follow:  # a link loop would walk forever
            real = here.resolve()
            if real in seen:
                continue
            seen.add(real)
        folders = []
        for name in sorted(n for n, folder in entries if folder and not n.startswith(".")):
            if not follow and (here / name).is_symlink():
                skipped[rel(here / name)] = f"a symlinked folder, {NOT_FOLLOWED}"
            else:
                folders.append(here / name)
        stack += reversed(folders)
        for name in (n for n, folder in entries if not folder):
            file = here / name
            if name.startswith(".") or file.suffix.lower() not in SUFFIXES:
                other[name_text(file.suffix.lower())] += not name.startswith(".")
                continue
            if file.is_symlink():
                target = file.resolve()
                if not target.exists():
                    skipped[rel(file)] = f"a broken symbolic link (to {target})"
                    continue
                if not follow and not target.is_relative_to(real_root):
                    why = f"a symbolic link to {target}, outside the folder, {NOT_FOLLOWED}"
                    skipped[rel(file)] = why
                    continue
            if file.is_file():
                files.append(file)
    return files


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _sources(root: Path, files: Sequence[Path], sums: dict[str, str]) -> list[Source]:
    sources: list[Source] = []
    first: dict[str, str] = {}
    for file in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        path = name_text(file.relative_to(root).as_posix())
        doc_id = path.rsplit(".", 1)[0]
        if doc_id in first:
            # The later file keeps its full path as id, so its failure has a row of its own.
            sources.append(Source(path, path, file, clash=first[doc_id]))
        else:
            first[doc_id] = path
            sources.append(Source(doc_id, path, file, expected=sums.get(path)))
    return sources


def read(source: Source, options: PdfOptions | None = None) -> tuple[Document, str]:
    """The document in ``source`` and the sha256 of its bytes; raise :class:`Unreadable`.

    Titled by Markdown's first ``# `` line, a PDF's metadata title, else the file name.
    """
    got = read_source(source, options)
    return got.document, got.sha256


def read_source(source: Source, options: PdfOptions | None = None) -> Read:
    """:func:`read`, with what the reader knows of a PDF (:class:`Read`); ``options`` for PDFs.

    Any exception while reading one file fails that file (``cannot be read: <the error>``),
    never the folder: the file's bytes are all that reading depends on. What a PDF library
    warns of is kept (:attr:`Read.warnings`), or, when the file fails, ends its reason.
    """
    with pdf.library_warnings() as said:
        try:
            got = _read_source(source, options)
        except Unreadable as err:
            if not said:
                raise
            heard = f"{err.reason}; the reader warned: {warned(said)}"
            raise Unreadable(heard, err.sha256) from None
        except Exception as err:
            words = " ".join(str(err).split())
            heard = f"; the reader warned: {warned(said)}" if said else ""
            raise Unreadable(f"cannot be read: {type(err).__name__}: {words}{heard}") from err
    return dataclasses.replace(got, warnings=got.warnings + tuple(said))


LISTED_WARNINGS = 3
"""Distinct warnings a line names before "and N more"."""


def warned(warnings: Sequence[str]) -> str:
    """What a file's reader warned of, in one line: each distinct warning once (with its
    count when repeated), the first :data:`LISTED_WARNINGS` of them, and how many more.

    >>> warned(["pypdf: a", "pypdf: b", "pypdf: a"])
    'pypdf: a (×2); pypdf: b'
    """
    parts = [w if n == 1 else f"{w} (×{n})" for w, n in Counter(warnings).items()]
    more = len(parts) - LISTED_WARNINGS
    return "; ".join(parts[:LISTED_WARNINGS]) + (f"; and {more} more" if more > 0 else "")


def _read_source(source: Source, options: PdfOptions | None) -> Read:
    if source.clash:
        raise Unreadable(f"same document id as {source.clash}; rename one of them")
    is_pdf = source.file.suffix.lower() in PDF_SUFFIXES
    limit = MAX_PDF_BYTES if is_pdf else MAX_BYTES
    try:
        size = source.file.stat().st_size
        if size > limit:
            raise Unreadable(f"too large: {size:,} bytes, over the {limit:,}-byte limit")
        data = source.file.read_bytes()
    except OSError as err:
        raise Unreadable(f"unreadable: {err.strerror or err}") from None
    digest = sha256_bytes(data)
    if source.expected is not None and digest != source.expected:
        raise Unreadable(f"sha256 {digest}, {MANIFEST} says {source.expected}", digest)
    if not data:
        raise Unreadable("empty file", digest)
    if is_pdf:
        return _read_pdf(source, digest, options or PdfOptions())
    if wide := wide_encoding(data):
        raise Unreadable(f"{wide}: save it as UTF-8", digest)
    if b"\0" in data:
        raise Unreadable(f"binary: a NUL byte at byte {data.index(0)}", digest)
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")  # a BOM would hide the title
    except UnicodeDecodeError as err:
        raise Unreadable(f"not UTF-8: {err.reason} at byte {err.start}", digest) from None
    if not text.strip():
        raise Unreadable(f"only whitespace ({len(data):,} bytes)", digest)
    stem = Path(source.path).stem
    if reader := READERS.get(source.file.suffix.lower()):
        got = reader(text)
        doc = Document(source.id, got.title or stem, got.text, source.file)
        return Read(doc, digest, warnings=got.warnings)
    if source.file.suffix.lower() in TEXT_SUFFIXES:
        return Read(Document(source.id, stem, text, source.file, format="plain"), digest)
    return Read(Document(source.id, title_of(text, stem), text, source.file), digest)


def _read_pdf(source: Source, digest: str, options: PdfOptions) -> Read:
    """A PDF as ``plain`` text (it has no Markdown headings); each failure says why."""
    try:
        got = pdf.read_pdf(
            source.file,
            extractor=options.extractor,
            keep_running_lines=options.keep_running_lines,
            use_ocr=options.ocr,
            ocr_min_confidence=options.ocr_min_confidence,
        )
    except pdf.OcrUnavailable as err:
        raise Unreadable(f"{pdf.NO_TEXT}, and OCR is unavailable: {err}", digest) from None
    except pdf.PdfError as err:
        raise Unreadable(err.reason, digest) from None
    except ImportError as err:  # the pdf extra is not installed: the file's not at fault
        raise Unreadable(
            f"cannot read PDFs: the {err.name or 'PDF'} package is missing "
            "(pip install 'rag_lab[pdf]')",
            digest,
        ) from None
    if got.removed and not any(page.strip() for page in got.pages):
        raise Unreadable(
            f"nothing to index: all its {len(got.removed)} lines are running headers or "
            "footers (repeated at the top or bottom of most pages), removed "
            f"{RUNNING_LINES_HINT}",
            digest,
        )
    doc = Document(source.id, got.title, got.text, source.file, format="plain")
    return Read(doc, digest, got)


def unchanged_scan(source: Source, options: PdfOptions, reading: str, sha256: str) -> bool:
    """Is ``source`` a scan OCRed before as ``reading`` (what these ``options`` would give,
    :func:`~rag_lab.sources.pdf.document.ocr_reading`), its bytes still ``sha256``? Then OCRing
    it again (seconds a page) would give the same text. False when that cannot be told."""
    if not options.ocr or source.file.suffix.lower() not in PDF_SUFFIXES or source.clash:
        return False
    if source.expected is not None and source.expected != sha256:  # read_source says why
        return False
    try:
        expected = pdf.ocr_reading(
            options.extractor, options.keep_running_lines, options.ocr_min_confidence
        )
        return expected == reading and sha256_bytes(source.file.read_bytes()) == sha256
    except (pdf.OcrUnavailable, ImportError, OSError):
        return False


def load_folder(folder: str | os.PathLike) -> list[Document]:
    """Every document of ``folder``, or :class:`IngestError` listing each file that fails.

    For evaluation, where a corpus is all or nothing: a file that cannot be read is an
    error, and a ``SHA256SUMS`` manifest must match every file it lists.
    """
    root = Path(folder)
    if not root.is_dir():
        raise IngestError([f"{root}: not a folder"])
    docs, problems = [], []
    found = scan(root)
    # All or nothing: a manifest entry that leads outside the folder is an error here.
    problems += [f"{root / name}: {why}" for name, why in found.skipped.items() if MANIFEST in why]
    for source in found.sources:
        try:
            got = read_source(source)
        except Unreadable as err:
            problems.append(f"{source.file}: {err.reason}")
            continue
        docs.append(got.document)
        if got.warnings:
            print(f"warning: {source.file}: {warned(got.warnings)}", file=sys.stderr)
    if (root / MANIFEST).is_file():
        for name in _manifest(root / MANIFEST):
            if Path(name).suffix.lower() not in SUFFIXES or name in found.skipped:
                continue
            if not (root / name).is_file():  # a listed file that differs fails to read
                problems.append(f"{root / name}: listed in {MANIFEST} but missing")
    if not docs and not problems:
        problems.append(f"{root}: no {', '.join(SUFFIXES[:-1])} or {SUFFIXES[-1]} files")
    if problems:
        raise IngestError(problems)
    return docs


def check_manifest(folder: str | os.PathLike) -> None:
    """Raise :class:`IngestError` if ``folder`` holds a ``SHA256SUMS`` that cannot be read: the
    folder cannot be indexed at all, so a caller checks it before it creates anything."""
    manifest = Path(folder) / MANIFEST
    if manifest.is_file():
        _manifest(manifest)


def _manifest(path: Path) -> dict[str, str]:
    try:
        return read_manifest(path)
    except ManifestError as err:
        raise IngestError([str(err)]) from None
