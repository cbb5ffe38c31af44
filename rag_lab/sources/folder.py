"""Read a folder of Markdown, plain-text and PDF files into documents, one reason per failure.

Which files: every ``.md``, ``.markdown``, ``.txt`` and ``.pdf`` file under the folder, hidden
folders skipped; when the folder holds a ``SHA256SUMS`` manifest, only the files it lists
(as in the lab's corpus, whose folder also holds notes and licences). A document's id is
its path relative to the folder without the suffix, e.g. ``guides/setup``. A name that is
not UTF-8 (legal on Linux) is read through its own bytes and named by :func:`name_text`:
each byte that is not UTF-8 written ``\\xNN`` (``caf\\xe9``), so that the index, its
listings and its citations hold text.

Symbolic links are followed only when they stay inside the folder (or with
``follow_symlinks``); the others, and symlinked folders, are reported by :func:`scan`
with the reason, as are subfolders that cannot be listed, so a caller never mistakes a
file it could not see for a file that is gone. A UTF-8 byte-order mark is dropped.

A file that cannot become a document (unreadable, empty, only whitespace, binary, UTF-16
or UTF-32 rather than UTF-8, not UTF-8, too large) raises :class:`Unreadable` with the
reason an index records. :func:`load_folder` is the
all-or-nothing reading an evaluation needs; :mod:`rag_lab.app.ingest` reads file by file.

A PDF is read by :func:`rag_lab.sources.pdf.document.read_pdf` (PDFium by default, running
headers and footers removed; :class:`PdfOptions`) into ``plain`` text whose pages are
joined by a page break and a newline (a paragraph may run on over a page);
:func:`read_source` also returns the :class:`~rag_lab.sources.pdf.document.PdfDocument`
(page starts, extractor, OCR confidences) that the index keeps. It fails with the parser's
reason (``encrypted: …``, ``malformed: …``), or ``no text layer (scanned?)`` unless OCR is
asked, or says that every line it had was a running header or footer.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_lab.checksums import ManifestError, read_manifest, sha256_bytes
from rag_lab.documents import Document, title_of
from rag_lab.errors import BadInput
from rag_lab.sources.pdf import document as pdf

READER_VERSION = "1"
"""Bump whenever :func:`read` could turn the same bytes into another document."""

MAX_BYTES = 5 * 1024 * 1024
"""Larger files fail as ``too large``: 5 MB of text is a book, likely not meant for one index."""
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt",)
PDF_SUFFIXES = (".pdf",)
SUFFIXES = MARKDOWN_SUFFIXES + TEXT_SUFFIXES + PDF_SUFFIXES
MAX_PDF_BYTES = 100 * 1024 * 1024
"""PDFs carry fonts and images besides their text, so their limit is higher: 100 MB."""
MANIFEST = "SHA256SUMS"
RUNNING_LINES_HINT = "(rag-lab index --keep-running-lines keeps them)"


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
    """What the PDF library warned of while reading it (``pypdf: incorrect startxref
    pointer(1)``), in order (:func:`warned` says them in one line)."""

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
    files beside it that its lifecycle writes (``<index>-journal``, ``<index>.lock``,
    ``<index>.rebuild``…: its name followed by ``-`` or ``.``), whatever their suffix, are
    never read: the index would index itself. Said once, in :attr:`Scan.skipped`.
    """
    root = Path(folder)
    manifest = root / MANIFEST
    unlisted: dict[str, str] = {}
    skipped: dict[str, str] = {}
    sums: dict[str, str] = {}
    if manifest.is_file():
        sums = _manifest(manifest)
        files = []
        for name in (n for n in sums if Path(n).suffix.lower() in SUFFIXES):
            outside = _outside(root, name, follow_symlinks)
            if outside:
                skipped[name] = outside
            elif (root / name).is_file():
                files.append(root / name)
    else:
        files = _walk(root, follow_symlinks, unlisted, skipped)
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
    return Scan(_sources(root, files, sums), unlisted, skipped)


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
    """Why the manifest's entry ``name`` is not read, if it leads outside ``root``.

    An absolute name or one that climbs (``../``) is never read: a manifest describes its
    own folder. A name that reaches outside through a symbolic link is held to the rule of
    links (followed only with ``follow``).
    """
    if Path(name).is_absolute() or ".." in Path(name).parts:
        return f"listed in {MANIFEST}, but outside the folder; not read"
    target = (root / name).resolve()
    if not follow and (root / name).exists() and not target.is_relative_to(root.resolve()):
        return (
            f"listed in {MANIFEST}, but a symbolic link to {target}, outside the folder, not "
            "followed (--follow-symlinks follows it)"
        )
    return None


def _walk(
    root: Path, follow: bool, unlisted: dict[str, str], skipped: dict[str, str]
) -> list[Path]:
    """Every file with a known suffix under ``root``, hidden names skipped; see :func:`scan`."""
    real_root = root.resolve()

    def rel(p: str | Path) -> str:
        return name_text(Path(p).relative_to(root).as_posix())

    def unlistable(err: OSError) -> None:
        unlisted[rel(err.filename)] = err.strerror or str(err)

    files: list[Path] = []
    seen: set[Path] = set()
    for dirpath, dirnames, filenames in _tree(root, unlistable, follow):
        here = Path(dirpath)
        if follow:  # a link loop would walk forever
            real = here.resolve()
            if real in seen:
                dirnames[:] = []
                continue
            seen.add(real)
        kept = []
        for name in sorted(dirnames):
            sub = here / name
            if name.startswith("."):
                continue
            if sub.is_symlink() and not follow:
                skipped[rel(sub)] = (
                    "a symlinked folder, not followed (--follow-symlinks follows it)"
                )
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            file = here / name
            if name.startswith(".") or file.suffix.lower() not in SUFFIXES:
                continue
            if file.is_symlink():
                target = file.resolve()
                if not target.exists():
                    skipped[rel(file)] = f"a broken symbolic link (to {target})"
                    continue
                if not follow and not target.is_relative_to(real_root):
                    skipped[rel(file)] = (
                        f"a symbolic link to {target}, outside the folder, not followed "
                        "(--follow-symlinks follows it)"
                    )
                    continue
            if file.is_file():
                files.append(file)
    return files


def _tree(
    root: Path, onerror: Callable[[OSError], None], follow: bool
) -> Iterator[tuple[str, list[str], list[str]]]:
    """:func:`os.walk` from the top down, on an explicit stack: a tree of any depth.

    Python 3.11's ``os.walk`` recurses once per level, so a tree deeper than about 1,000
    folders raised ``RecursionError``. As there, each folder gives (its path, its
    subfolders, its other names); the caller may prune the subfolders in place; a folder
    that cannot be listed goes to ``onerror``; a symlinked folder is entered only with
    ``follow``. Subfolders come in the order the caller leaves them.
    """
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        dirnames: list[str] = []
        filenames: list[str] = []
        try:
            with os.scandir(top) as entries:
                for entry in entries:
                    try:
                        folder = entry.is_dir()
                    except OSError:
                        folder = False
                    (dirnames if folder else filenames).append(entry.name)
        except OSError as err:
            onerror(err)
            continue
        yield top, dirnames, filenames
        for name in reversed(dirnames):
            sub = os.path.join(top, name)
            if follow or not os.path.islink(sub):
                stack.append(sub)


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

    Markdown gets its title from the first ``# `` line (as the corpus loader does); plain
    text is titled by its file name; a PDF by its metadata title, else its file name.
    """
    got = read_source(source, options)
    return got.document, got.sha256


def read_source(source: Source, options: PdfOptions | None = None) -> Read:
    """:func:`read`, with what the reader knows of a PDF (:class:`Read`); ``options`` for PDFs.

    Any exception while reading one file is that file's :class:`Unreadable`: the file's
    bytes are all that reading depends on, so a reader's unforeseen error (a PDF library's
    own, a decoder's) fails this file with ``cannot be read: <the error>`` and never the
    folder. Only Ctrl-C and the like (not :class:`Exception`) pass.

    What a PDF library warns of while reading the file is kept with it
    (:attr:`Read.warnings`), or, when the file fails, ends its reason.
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
    return dataclasses.replace(got, warnings=tuple(said))


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
    wide = _wide_encoding(data)
    if wide:
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
    if source.file.suffix.lower() in TEXT_SUFFIXES:
        return Read(Document(source.id, stem, text, source.file, format="plain"), digest)
    return Read(Document(source.id, title_of(text, stem), text, source.file), digest)


_BOMS = (  # UTF-32's first: its little-endian mark begins with UTF-16's
    (b"\xff\xfe\x00\x00", "utf-32", "UTF-32 text (little-endian, with a byte-order mark)"),
    (b"\x00\x00\xfe\xff", "utf-32", "UTF-32 text (big-endian, with a byte-order mark)"),
    (b"\xff\xfe", "utf-16", "UTF-16 text (little-endian, with a byte-order mark)"),
    (b"\xfe\xff", "utf-16", "UTF-16 text (big-endian, with a byte-order mark)"),
)


def _wide_encoding(data: bytes) -> str | None:
    """What ``data`` is, if it is text in UTF-16 or UTF-32 (what Windows' Notepad and
    PowerShell write as "Unicode"), not a binary file: it decodes so, and says so by its
    byte-order mark or, without one, by a NUL in every other byte of its start and in none
    of the others (ASCII text in UTF-16)."""
    for mark, codec, what in _BOMS:
        if data.startswith(mark):
            return what if len(data) > len(mark) and _decodes(data, codec) else None
    start = data[:4096]
    for parity, codec, order in ((1, "utf-16-le", "little"), (0, "utf-16-be", "big")):
        zeros, others = start[parity::2], start[1 - parity :: 2]
        looks = len(start) >= 4 and zeros.count(0) * 2 >= len(zeros) and 0 not in others
        if looks and _decodes(data, codec):
            return f"UTF-16 text ({order}-endian, without a byte-order mark)"
    return None


def _decodes(data: bytes, codec: str) -> bool:
    try:
        data.decode(codec)
    except UnicodeDecodeError:
        return False
    return True


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
            f"cannot read PDFs: the {err.name or 'PDF'} package is missing (pip install -e .[pdf])",
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
    """Is ``source`` a scan read before by OCR as ``reading``, with the bytes ``sha256``?

    True when OCR is asked, the reading these ``options`` would give a scan is ``reading``
    (:func:`~rag_lab.sources.pdf.document.ocr_reading`) and the file's bytes are the same:
    then OCRing it again (seconds a page) would give the same text. False when any of this
    does not hold or cannot be told (no Tesseract, an unreadable file): then it is read.
    """
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
    error, and a ``SHA256SUMS`` manifest, if present, must match every file it lists. What
    a PDF library warned of while reading a file is one line on stderr naming the file.
    """
    root = Path(folder)
    if not root.is_dir():
        raise IngestError([f"{root}: not a folder"])
    docs, problems, sums = [], [], {}
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
        sums[source.path] = got.sha256
        if got.warnings:
            print(f"warning: {source.file}: {warned(got.warnings)}", file=sys.stderr)
    if (root / MANIFEST).is_file():
        for name, expected in _manifest(root / MANIFEST).items():
            if Path(name).suffix.lower() not in SUFFIXES or name in found.skipped:
                continue
            if not (root / name).is_file():
                problems.append(f"{root / name}: listed in {MANIFEST} but missing")
            elif name in sums and sums[name] != expected:
                problems.append(f"{root / name}: sha256 {sums[name]}, {MANIFEST} says {expected}")
    if not docs and not problems:
        problems.append(f"{root}: no .md, .markdown, .txt or .pdf files")
    if problems:
        raise IngestError(problems)
    return docs


def check_manifest(folder: str | os.PathLike) -> None:
    """Raise :class:`IngestError` if ``folder`` holds a ``SHA256SUMS`` that cannot be read
    (not UTF-8, a line that is not ``<sha256>  <name>``): the folder cannot be indexed at
    all, so a caller checks it before it creates anything for it."""
    manifest = Path(folder) / MANIFEST
    if manifest.is_file():
        _manifest(manifest)


def _manifest(path: Path) -> dict[str, str]:
    try:
        return read_manifest(path)
    except ManifestError as err:
        raise IngestError([str(err)]) from None
