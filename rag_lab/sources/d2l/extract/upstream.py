"""The upstream d2l-en sources at the pinned commit: from a local mirror or downloaded, verified."""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from rag_lab.checksums import VerificationError, mismatch, read_manifest, sha256_bytes, verify_files
from rag_lab.paths import MIRROR_CORPUS, cache_dir
from rag_lab.progress import track

RAW_MANIFEST = Path(__file__).with_name("RAW-SHA256SUMS")
"""Every input file (relative to the repository root) and its sha256."""

RAW_COMMIT = Path(__file__).with_name("RAW-COMMIT")
"""The pinned upstream commit, as ``d2l-ai/d2l-en commit <sha>``."""

MIRROR_ENV = "RAG_LAB_MIRROR"
UPSTREAM_URL_ENV = "RAG_LAB_UPSTREAM_URL"
DEFAULT_MIRROR = MIRROR_CORPUS / "raw"
DEFAULT_UPSTREAM_URL = "https://raw.githubusercontent.com/d2l-ai/d2l-en"
"""Files are fetched from ``<base>/<commit>/<path>``."""

_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Sources:
    """Verified input files: where they are and where they came from."""

    root: Path
    origin: str
    """``mirror DIR`` or ``download URL``, for the log."""
    verified: int
    """How many files were checked against the raw manifest."""


def pinned_commit() -> str:
    """The upstream commit the raw manifest describes."""
    text = RAW_COMMIT.read_text(encoding="utf-8")
    commit = re.search(r"\b[0-9a-f]{40}\b", text)
    if commit is None:
        raise ValueError(f"no commit hash in {RAW_COMMIT}")
    return commit.group()


def configured_mirror(mirror: Path | None = None) -> Path | None:
    """The mirror to read, or None to download.

    ``mirror`` if given, else ``$RAG_LAB_MIRROR``, else :data:`DEFAULT_MIRROR`
    when that folder exists.
    """
    if mirror is not None:
        return mirror
    if os.environ.get(MIRROR_ENV):
        return Path(os.environ[MIRROR_ENV])
    return DEFAULT_MIRROR if DEFAULT_MIRROR.is_dir() else None


def locate_sources(mirror: Path | None = None, progress: bool = False) -> Sources:
    """Find or fetch every input of the raw manifest and verify its sha256.

    The mirror is chosen by :func:`configured_mirror`; one that was asked for
    must exist. Without a mirror, the files are downloaded from
    ``$RAG_LAB_UPSTREAM_URL`` (default :data:`DEFAULT_UPSTREAM_URL`) into the
    cache, where verified files are kept for the next run.
    Raises :class:`VerificationError` naming each file that failed.
    """
    manifest = read_manifest(RAW_MANIFEST)
    chosen = configured_mirror(mirror)
    if chosen is not None:
        if not chosen.is_dir():
            raise VerificationError([f"mirror {chosen} is not a directory"])
        return Sources(chosen, f"mirror {chosen}", verify_files(chosen, manifest))
    base_url = os.environ.get(UPSTREAM_URL_ENV, DEFAULT_UPSTREAM_URL).rstrip("/")
    commit = pinned_commit()
    root = cache_dir() / "d2l-en" / commit
    download(f"{base_url}/{commit}", manifest, root, progress)
    return Sources(root, f"download {base_url} (commit {commit})", len(manifest))


def download(
    base_url: str, manifest: Mapping[str, str], dest: Path, progress: bool = False
) -> None:
    """Fetch every file of ``manifest`` from ``<base_url>/<path>`` into ``dest``, verified.

    A file already in ``dest`` with the right sha256 is not fetched again. A
    file is written only once its sha256 matches, so ``dest`` never holds a
    bad copy. Raises :class:`VerificationError` listing every file that could
    not be fetched (with the HTTP status) or whose sha256 differs.
    """
    problems: list[str] = []
    for name, expected in track(manifest.items(), "downloading", "file", show=progress):
        path = dest / name
        if path.is_file() and sha256_bytes(path.read_bytes()) == expected:
            continue
        url = f"{base_url}/{quote(name)}"
        try:
            with urllib.request.urlopen(url, timeout=_TIMEOUT_SECONDS) as response:
                data = response.read()
        except urllib.error.HTTPError as error:
            problems.append(f"{name}: download failed, HTTP {error.code} from {url}")
            continue
        except urllib.error.URLError as error:
            # Unreachable host: every other file would fail the same way.
            raise VerificationError(
                [f"{name}: download failed ({error.reason}) from {url}"]
            ) from error
        actual = sha256_bytes(data)
        if actual != expected:
            problems.append(mismatch(name, expected, actual) + f", downloaded from {url}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".part")
        partial.write_bytes(data)
        partial.replace(path)
    if problems:
        raise VerificationError(problems)
