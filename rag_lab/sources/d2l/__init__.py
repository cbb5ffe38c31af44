"""The lab's corpus, *Dive into Deep Learning* chapters 2–4: one :class:`Document` per file.

``load_corpus`` reads and verifies the 20 ``NN-*.md`` documents; :mod:`.extract` rebuilds
them from the book's upstream sources (``python -m rag_lab.sources.d2l.extract``), and
``python -m rag_lab.sources.d2l`` says which corpus the lab would read.

Where the corpus is looked for, first match wins:

1. the ``path`` argument;
2. ``$RAG_LAB_CORPUS``;
3. ``data/corpus/`` in the repo, built from the upstream sources by ``make data``;
4. ``../shared/corpus/d2l-en`` beside the repo (the prepared mirror).

The lab's own corpus (cases 2–4) is checked against the checksums the project
carries; a folder passed explicitly is checked against its own ``SHA256SUMS``
when it has one. The corpus text is never part of the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

from rag_lab import paths
from rag_lab.checksums import ManifestError, compare, read_manifest, sha256_bytes
from rag_lab.documents import Document, title_of
from rag_lab.errors import BadEnvironment

GLOB = "[0-9][0-9]-*.md"
PINNED_SUMS = Path(__file__).resolve().parent / "extract" / "SHA256SUMS"
"""Checksums of the 20 documents of *Dive into Deep Learning* chapters 2–4."""

_HOW_TO_FIX = (
    "Point the lab at a corpus with RAG_LAB_CORPUS=/path/to/d2l-en, "
    "or build it from the upstream sources with `make data`."
)


class CorpusError(BadEnvironment, RuntimeError):
    """The corpus is missing, unreadable or not the one the checksums describe."""


def load_corpus(path: str | os.PathLike | None = None) -> list[Document]:
    """Load and verify the corpus; raise :class:`CorpusError` saying what is wrong and where."""
    folder, manifest, looked = _locate(path)
    files = sorted(folder.glob(GLOB))
    if not files:
        raise CorpusError(f"No {GLOB} files in {folder}. {_HOW_TO_FIX}")
    data = {f.name: f.read_bytes() for f in files}
    if manifest is not None:
        problems = verify(data, manifest)
        if problems:
            listing = "\n  ".join(problems)
            raise CorpusError(
                f"The corpus at {folder} ({looked}) does not match {manifest}:\n  {listing}\n"
                f"{_HOW_TO_FIX}"
            )
    return [_document(f, data[f.name]) for f in files]


def corpus_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder :func:`load_corpus` would read."""
    return _locate(path)[0]


def verify(data: dict[str, bytes], manifest: Path) -> list[str]:
    """Every difference between the files read and a checksum manifest, one line each."""
    try:
        listed = read_manifest(manifest)
    except ManifestError as err:
        raise CorpusError(str(err)) from None
    expected = {n: d for n, d in sorted(listed.items()) if Path(n).match(GLOB)}
    actual = {name: sha256_bytes(data[name]) for name in sorted(data)}
    return compare(actual, expected, extra_allowed=False)


def _locate(path: str | os.PathLike | None) -> tuple[Path, Path | None, str]:
    """(folder, manifest to check against or None, how the folder was chosen)."""
    if path is not None:
        folder = Path(path).expanduser().resolve()
        if not folder.is_dir():
            raise CorpusError(f"Corpus folder {folder} does not exist. {_HOW_TO_FIX}")
        own = folder / "SHA256SUMS"
        return folder, own if own.is_file() else None, "given as an argument"
    candidates = []
    if env := os.environ.get("RAG_LAB_CORPUS"):
        candidates.append((Path(env).expanduser().resolve(), "$RAG_LAB_CORPUS"))
    else:
        candidates += [
            (paths.BUILT_CORPUS, "built by `make data`"),
            (paths.MIRROR_CORPUS.resolve(), "the mirror beside the repo"),
        ]
    for folder, how in candidates:
        if folder.is_dir() and any(folder.glob(GLOB)):
            return folder, PINNED_SUMS, how
    looked = "; ".join(f"{folder} ({how})" for folder, how in candidates)
    raise CorpusError(f"No corpus found. Looked in: {looked}. {_HOW_TO_FIX}")


def _document(file: Path, data: bytes) -> Document:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CorpusError(f"{file}: not UTF-8 at byte {err.start}: {err.reason}") from None
    return Document(id=file.stem, title=title_of(text, file.stem), text=text, path=file)
