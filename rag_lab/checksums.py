"""sha256 digests, ``sha256sum`` manifests, and the checks of files against them.

The one place the lab hashes bytes: corpora, model weights and user files are all checked
with these functions, and every manifest is parsed by :func:`read_manifest`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from rag_lab.errors import BadEnvironment, BadInput

BLOCK = 1 << 20
"""Bytes read per step when hashing a file (model weights are hundreds of MB)."""


class VerificationError(BadEnvironment):
    """Files failed a check (missing, undownloadable, wrong sha256); the message names each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class ManifestError(BadInput, ValueError):
    """A manifest line is not ``<sha256>  <name>``; the message gives the file and line."""


def sha256_bytes(data: bytes) -> str:
    """The hex sha256 of ``data``.

    >>> sha256_bytes(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` encoded as UTF-8 (the key of every cached vector)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file, read in :data:`BLOCK`-sized steps."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(path: Path) -> dict[str, str]:
    """Map each name listed in a ``sha256sum`` file to its hex digest.

    Lines are ``<64 hex digits> <space> <space or *> <name>``; blank lines are skipped.
    Raises :class:`ManifestError` naming the file and line of anything else.
    """
    manifest: dict[str, str] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        line = err.object[: err.start].count(b"\n") + 1
        raise ManifestError(
            f"{path}:{line}: not UTF-8 ({err.reason} at byte {err.start})"
        ) from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        digest, _, name = line.partition(" ")
        name = name.lstrip(" *").strip()
        if len(digest) != 64 or not name or any(c not in "0123456789abcdefABCDEF" for c in digest):
            raise ManifestError(f"{path}:{lineno}: not a '<sha256>  <name>' line: {line!r}")
        manifest[name] = digest.lower()
    return manifest


def mismatch(name: str, expected: str, actual: str) -> str:
    """The report line for a file whose sha256 differs from the manifest."""
    return f"{name}: sha256 mismatch (expected {expected}, got {actual})"


def compare(
    actual: Mapping[str, str | None],
    expected: Mapping[str, str],
    *,
    missing: str = "missing",
    extra_allowed: bool = True,
) -> list[str]:
    """Every difference between the digests found and a manifest's, one line each.

    ``actual`` maps each name looked at to its hex sha256, or None when it is not there.
    A name the manifest lists but ``actual`` lacks (or maps to None) is ``missing``; a name
    found but not listed is reported unless ``extra_allowed``. The one wording of every
    manifest check of the lab (corpora, benchmark, weights).

    >>> compare({"a": "00", "b": None, "c": "11"}, {"a": "01", "b": "02"}, extra_allowed=False)
    ['a: sha256 mismatch (expected 01, got 00)', 'b: missing', 'c: not in the manifest']
    """
    problems = []
    for name, want in expected.items():
        got = actual.get(name)
        if got is None:
            problems.append(f"{name}: {missing}")
        elif got != want:
            problems.append(mismatch(name, want, got))
    if not extra_allowed:
        problems += [f"{name}: not in the manifest" for name in actual if name not in expected]
    return problems


def verify_files(root: Path, manifest: Mapping[str, str]) -> int:
    """Check every file of ``manifest`` under ``root``; return how many were checked.

    Raises :class:`VerificationError` listing every missing file and every sha256
    mismatch, with the expected and the actual digest.
    """
    digests = {n: sha256_file(root / n) if (root / n).is_file() else None for n in manifest}
    problems = compare(digests, manifest, missing=f"missing from {root}")
    if problems:
        raise VerificationError(problems)
    return len(manifest)
