"""Chroma's chunking benchmark: five corpora and 472 questions answered by excerpts.

B. Smith and A. Troynikov, *Evaluating Chunking Strategies for Retrieval*, Chroma
technical report, July 2024; data from github.com/brandonstarxel/chunking_evaluation
(MIT licence) at commit :data:`COMMIT`, folder
``chunking_evaluation/evaluation_framework/general_evaluation_data/``.

:func:`load` returns one :class:`Document` per corpus (``chatlogs``, ``finance``,
``pubmed``, ``state_of_the_union``, ``wikitexts``) and the questions as
:class:`SpanQuestion` records; ``python -m rag_lab.sources.chroma`` says which copy the
lab would read, and ``python -m rag_lab.sources.chroma --fetch`` downloads one.

Where the benchmark is looked for, first match wins:

1. the ``path`` argument;
2. ``$RAG_LAB_CHROMA``;
3. ``../shared/benchmarks/chroma`` beside the repo (the prepared mirror);
4. the cache, where :func:`fetch` puts it by default.

Whichever copy is read, every file is checked against the checksums the project carries
(:data:`PINNED_SUMS`), since the benchmark's numbers are only comparable on its own bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

from rag_lab import paths
from rag_lab.checksums import VerificationError, compare, read_manifest, sha256_bytes
from rag_lab.documents import Document
from rag_lab.errors import BadEnvironment
from rag_lab.questions import QuestionsError
from rag_lab.sources.chroma.questions import load_chroma_questions
from rag_lab.spans import SpanQuestion

COMMIT = "d451fc4cf56e417b755994b4ca5212fd5057c0d2"
"""The upstream commit of brandonstarxel/chunking_evaluation the checksums describe."""

PINNED_SUMS = Path(__file__).resolve().parent / "SHA256SUMS"
"""sha256 of ``questions_df.csv``, the five ``corpora/*.md`` and ``LICENSE``."""

QUESTIONS = "questions_df.csv"
CORPORA = "corpora"
ENV = "RAG_LAB_CHROMA"
DEFAULT_URL = "https://raw.githubusercontent.com/brandonstarxel/chunking_evaluation"
"""Files are fetched from ``<base>/<commit>/<upstream path>``."""
DATA_PATH = "chunking_evaluation/evaluation_framework/general_evaluation_data"
"""Where the data files live in the upstream repository; ``LICENSE`` is at its root."""

_HOW_TO_FIX = (
    "Point the lab at a copy with RAG_LAB_CHROMA=/path/to/chroma, "
    "or download one with `python -m rag_lab.sources.chroma --fetch`."
)


class BenchmarkError(BadEnvironment, RuntimeError):
    """The benchmark is missing, unreadable or not the one the checksums describe."""


def load(path: str | os.PathLike | None = None) -> tuple[list[Document], list[SpanQuestion]]:
    """The five corpora and the 472 questions, verified; raise :class:`BenchmarkError`.

    Documents are in corpus-id order, with ``id`` and ``title`` the corpus id.
    """
    folder, how = _locate(path)
    data = _verified(folder, how)
    docs = [
        _document(folder / name, data[name])
        for name in sorted(data)
        if name.startswith(f"{CORPORA}/") and name.endswith(".md")
    ]
    try:
        questions = load_chroma_questions(folder / QUESTIONS, docs)
    except QuestionsError as err:
        raise BenchmarkError(str(err)) from None
    return docs, questions


def benchmark_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder :func:`load` would read."""
    return _locate(path)[0]


def default_dest() -> Path:
    """Where :func:`fetch` writes by default: ``<cache>/chroma/<commit>``."""
    return paths.cache_dir() / "chroma" / COMMIT


def fetch(dest: str | os.PathLike | None = None, base_url: str = DEFAULT_URL) -> Path:
    """Download the benchmark at :data:`COMMIT` into ``dest``, verified; return ``dest``.

    Files already in ``dest`` with the right sha256 are not fetched again; a file is
    written only once its sha256 matches. Raises :class:`VerificationError` naming every
    file that could not be fetched (with the HTTP status) or whose sha256 differs.
    """
    # Imported here: loading a local copy never needs the downloader.
    from rag_lab.sources.d2l.extract.upstream import download

    folder = Path(dest) if dest is not None else default_dest()
    manifest = read_manifest(PINNED_SUMS)
    root = f"{base_url.rstrip('/')}/{COMMIT}"
    data = {n: d for n, d in manifest.items() if n != "LICENSE"}
    problems: list[str] = []
    for base, part in ((f"{root}/{DATA_PATH}", data), (root, {"LICENSE": manifest["LICENSE"]})):
        try:
            download(base, part, folder)
        except VerificationError as err:
            problems += err.problems
            if "download failed (" in err.problems[-1]:  # unreachable host: stop here
                break
    if problems:
        raise VerificationError(problems)
    (folder / "COMMIT").write_text(COMMIT + "\n", encoding="utf-8")
    return folder


# --- private helpers ---------------------------------------------------------------


def _locate(path: str | os.PathLike | None) -> tuple[Path, str]:
    """(folder, how it was chosen)."""
    if path is not None:
        folder = Path(path).expanduser().resolve()
        if not folder.is_dir():
            raise BenchmarkError(f"Benchmark folder {folder} does not exist. {_HOW_TO_FIX}")
        return folder, "given as an argument"
    if env := os.environ.get(ENV):
        candidates = [(Path(env).expanduser().resolve(), f"${ENV}")]
    else:
        candidates = [
            (paths.MIRROR_CHROMA.resolve(), "the mirror beside the repo"),
            (default_dest(), "fetched into the cache"),
        ]
    for folder, how in candidates:
        if (folder / QUESTIONS).is_file():
            return folder, how
    looked = "; ".join(f"{folder} ({how})" for folder, how in candidates)
    raise BenchmarkError(f"No Chroma benchmark found. Looked in: {looked}. {_HOW_TO_FIX}")


def _verified(folder: Path, how: str) -> dict[str, bytes]:
    """Every file of the pinned manifest, read and checked; all problems raised at once."""
    expected = read_manifest(PINNED_SUMS)
    data = {name: (folder / name).read_bytes() for name in expected if (folder / name).is_file()}
    corpora = sorted(f"{CORPORA}/{f.name}" for f in (folder / CORPORA).glob("*.md") if f.is_file())
    # A corpus file the manifest does not list would be read as a sixth corpus: report it.
    actual = {name: sha256_bytes(b) for name, b in data.items()}
    actual |= {name: "unlisted" for name in corpora if name not in expected}
    problems = compare(actual, expected, extra_allowed=False)
    if problems:
        listing = "\n  ".join(problems)
        raise BenchmarkError(
            f"The benchmark at {folder} ({how}) does not match {PINNED_SUMS}:\n  {listing}\n"
            f"{_HOW_TO_FIX}"
        )
    return data


def _document(file: Path, data: bytes) -> Document:
    # "plain": the corpora are not Markdown (a chat log printed as a Python list, SEC
    # filings, PubMed articles, a speech, WikiText's " = Title = " lines) and have no
    # headings. As "markdown", a line that happens to start with "#" would become a
    # heading, and heading lines belong to no chunk body: the excerpts on them could
    # never be retrieved. As "plain", every character of the corpus is chunked.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BenchmarkError(f"{file}: not UTF-8 at byte {err.start}: {err.reason}") from None
    return Document(id=file.stem, title=file.stem, text=text, path=file, format="plain")
