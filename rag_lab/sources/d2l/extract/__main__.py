"""``python -m rag_lab.sources.d2l.extract``: build ``data/corpus/`` from the verified sources."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rag_lab.checksums import VerificationError, read_manifest, verify_files
from rag_lab.paths import BUILT_CORPUS
from rag_lab.sources.d2l.extract import EXTRACTOR_VERSION
from rag_lab.sources.d2l.extract.attribution import NOTE_NAME, source_note
from rag_lab.sources.d2l.extract.build import OUTPUT_MANIFEST, write_corpus
from rag_lab.sources.d2l.extract.upstream import (
    DEFAULT_MIRROR,
    MIRROR_ENV,
    UPSTREAM_URL_ENV,
    locate_sources,
    pinned_commit,
)


def main(argv: list[str] | None = None) -> int:
    """Run the extraction; return the process exit status (0 on success, 1 on any failure)."""
    parser = argparse.ArgumentParser(
        prog="python -m rag_lab.sources.d2l.extract",
        description=(
            "Rebuild the d2l-en corpus from the upstream sources at the pinned commit. "
            f"Sources come from a mirror (--mirror, ${MIRROR_ENV}, or {DEFAULT_MIRROR} "
            f"if present), else are downloaded (base URL ${UPSTREAM_URL_ENV}) into the cache."
        ),
    )
    parser.add_argument(
        "--mirror", type=Path, metavar="DIR", help="folder holding the raw upstream files"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=BUILT_CORPUS,
        metavar="DIR",
        help=f"output folder (default {BUILT_CORPUS})",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="rebuild even if the output folder already holds the verified corpus",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    expected = read_manifest(OUTPUT_MANIFEST)
    if not args.force and _is_current(args.out, expected):
        print(
            f"{args.out} already holds the {len(expected)} verified documents; "
            "nothing to do (--force rebuilds)"
        )
        return 0
    try:
        sources = locate_sources(args.mirror, progress=sys.stderr.isatty())
    except (VerificationError, OSError) as error:
        return _fail("the upstream sources failed their checks", error)
    print(f"source: {sources.origin}; {sources.verified} files verified against RAW-SHA256SUMS")
    try:
        written = write_corpus(sources.root, args.out)
        (args.out / NOTE_NAME).write_text(source_note(pinned_commit()), encoding="utf-8")
    except VerificationError as error:
        return _fail(f"documents in {args.out} differ from {OUTPUT_MANIFEST.name}", error)
    except OSError as error:
        return _fail(f"cannot build the corpus in {args.out}", error)
    elapsed = time.perf_counter() - started
    print(f"{len(written)} documents written to {args.out}, verified by {OUTPUT_MANIFEST.name}")
    print(f"{NOTE_NAME} written; extractor version {EXTRACTOR_VERSION}, {elapsed:.1f} s")
    return 0


def _fail(what: str, error: Exception) -> int:
    """Report a failure on stderr and return the exit status."""
    print(f"error: {what}:\n{error}", file=sys.stderr)
    return 1


def _is_current(out: Path, expected: dict[str, str]) -> bool:
    """Whether ``out`` already holds every expected document, verified, and the SOURCE note."""
    try:
        verify_files(out, expected)
    except VerificationError:
        return False
    return (out / NOTE_NAME).is_file()


if __name__ == "__main__":
    sys.exit(main())
