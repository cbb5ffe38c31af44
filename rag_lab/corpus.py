"""Load the corpus: one :class:`Document` per ``NN-*.md`` file, verified by checksum.

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

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab import paths
from rag_lab.markdown import MarkdownDoc

GLOB = "[0-9][0-9]-*.md"
PINNED_SUMS = Path(__file__).resolve().parent / "extract" / "SHA256SUMS"
"""Checksums of the 20 documents of *Dive into Deep Learning* chapters 2–4."""

_HOW_TO_FIX = (
    "Point the lab at a corpus with RAG_LAB_CORPUS=/path/to/d2l-en, "
    "or build it from the upstream sources with `make data`."
)


class CorpusError(RuntimeError):
    """The corpus is missing, unreadable or not the one the checksums describe."""


@dataclass(frozen=True)
class Document:
    """One source document; ``text`` is the file exactly as read (UTF-8)."""

    id: str
    """The file stem, e.g. ``03-linear-algebra``."""
    title: str
    """The text of the first ``# `` line (the id if the file has none)."""
    text: str
    path: Path | None = field(default=None, compare=False, repr=False)


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


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_sums(manifest: Path) -> dict[str, str]:
    """Parse a ``sha256sum``-style file: ``<hex>  <name>`` per line."""
    sums = {}
    for lineno, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise CorpusError(f"{manifest}:{lineno}: not a '<sha256>  <name>' line: {line!r}")
        sums[name.strip()] = digest
    return sums


def verify(data: dict[str, bytes], manifest: Path) -> list[str]:
    """Every difference between the files read and a checksum manifest, one line each."""
    expected = {n: d for n, d in read_sums(manifest).items() if Path(n).match(GLOB)}
    problems = [f"{name}: missing" for name in sorted(expected.keys() - data.keys())]
    problems += [f"{name}: not in the manifest" for name in sorted(data.keys() - expected.keys())]
    for name in sorted(expected.keys() & data.keys()):
        actual = sha256(data[name])
        if actual != expected[name]:
            problems.append(f"{name}: sha256 {actual}, expected {expected[name]}")
    return problems


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
    title = next((h.title for h in MarkdownDoc(text).headings if h.level == 1), file.stem)
    return Document(id=file.stem, title=title, text=text, path=file)


def _main() -> int:
    """``python -m rag_lab.corpus``: say which corpus the lab would read, or why none."""
    try:
        docs = load_corpus()
    except CorpusError as err:
        print(err)
        return 1
    chars = sum(len(d.text) for d in docs)
    print(f"corpus: {len(docs)} documents, {chars:,} characters, verified, at {corpus_dir()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
