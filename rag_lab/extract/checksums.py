"""sha256 manifests (``sha256sum`` format) and the checks of files against them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path


class VerificationError(Exception):
    """Files failed a check (missing, undownloadable, wrong sha256); the message names each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def read_manifest(path: Path) -> dict[str, str]:
    """Map each relative path listed in a ``sha256sum`` file to its hex digest."""
    manifest: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            manifest[name.lstrip("*")] = digest
    return manifest


def sha256_bytes(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def mismatch(name: str, expected: str, actual: str) -> str:
    """The report line for a file whose sha256 differs from the manifest."""
    return f"{name}: sha256 mismatch (expected {expected}, got {actual})"


def verify_files(root: Path, manifest: Mapping[str, str]) -> int:
    """Check every file of ``manifest`` under ``root``; return how many were checked.

    Raises :class:`VerificationError` listing every missing file and every sha256
    mismatch, with the expected and the actual digest.
    """
    problems = []
    for name, expected in manifest.items():
        path = root / name
        if not path.is_file():
            problems.append(f"{name}: missing from {root}")
            continue
        actual = sha256_bytes(path.read_bytes())
        if actual != expected:
            problems.append(mismatch(name, expected, actual))
    if problems:
        raise VerificationError(problems)
    return len(manifest)
