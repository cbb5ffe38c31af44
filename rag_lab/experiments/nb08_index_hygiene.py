"""Notebook 08: the stamped index on a copy of the corpus with two bad files beside it."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rag_lab.app.index import STRATEGY, IndexStatus
from rag_lab.app.ingest import IngestReport
from rag_lab.app.store import DocumentRecord
from rag_lab.chunking import chunk_document
from rag_lab.documents import Document
from rag_lab.evaluation.verdicts import Claim, Verdict, claims_markdown

BAD_FILES = {
    # An export from an old editor, in Latin-1 (é is byte 0xE9), and a file that is empty.
    "21-wiki-export.md": "# Wiki export\n\nThe café's notes.\n".encode("latin-1"),
    "22-placeholder.md": b"",
}
FIXED_EXPORT = "# Wiki export\n\nThe café's notes.\n"
"""The Latin-1 export, saved again as UTF-8: what a user does after reading the failure."""


def make_folder(docs: Sequence[Document], folder: Path) -> Path:
    """Copy the corpus into ``folder`` (the lab's own files are never touched) and add
    :data:`BAD_FILES`; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for d in docs:
        shutil.copy(d.path, folder / d.path.name)
    for name, data in BAD_FILES.items():
        (folder / name).write_bytes(data)
    return folder


def status_table(records: Sequence[DocumentRecord]) -> pd.DataFrame:
    """One row per document: status, chunks the indexer recorded, and the failure reason."""
    return pd.DataFrame(
        {
            "status": [r.status.value for r in records],
            "chunks recorded": pd.array([r.chunk_count for r in records], dtype="Int64"),
            "reason": [r.reason or "" for r in records],
        },
        index=pd.Index([r.id for r in records], name="document"),
    )


def recount(records: Sequence[DocumentRecord], docs: Sequence[Document]) -> tuple[bool, int]:
    """Do the recorded chunk counts equal a fresh chunking? And how many chunks in all."""
    by_id = {d.id: d for d in docs}
    fresh = {r.id: len(chunk_document(by_id[r.id], STRATEGY)) for r in records if r.id in by_id}
    recorded = {r.id: r.chunk_count for r in records}
    return all(recorded[i] == n for i, n in fresh.items()), sum(fresh.values())


def reading(
    first: IngestReport, counts_agree: bool, refused: Sequence[str], final: IndexStatus
) -> str:
    """The chapter's index-hygiene claims, judged on what this run's index did."""
    failed = ", ".join(f"{d} ({r})" for d, r in first.failed.items()) or "none"
    total = sum(final.counts.values())
    claims = claims_markdown(
        [
            Claim(
                "failed documents are visible, with reasons",
                "–",
                f"{len(first.failed)} failed, each with its reason",
                Verdict.REPRODUCES if first.failed else Verdict.NOT_EXERCISED,
            ),
            Claim(
                "counts are recorded by the indexer",
                "–",
                "equal a fresh chunking" if counts_agree else "differ",
                Verdict.REPRODUCES if counts_agree else Verdict.NOT_REPRODUCED,
            ),
            Claim(
                "a stale index refuses mixed queries",
                "–",
                f"{len(refused)} refused",
                Verdict.REPRODUCES if refused else Verdict.NOT_REPRODUCED,
            ),
        ]
    )
    text = "\n".join(
        [
            f"- **Failed documents are visible.** The first run indexed {len(first.indexed)} "
            f"and failed {len(first.failed)}, each with its reason: {failed}. Nothing was "
            "dropped silently.",
            "- **Counts recorded by the indexer.** The chunk counts in the index "
            + (
                "equal a fresh chunking of every document."
                if counts_agree
                else "differ from a fresh chunking."
            ),
            f"- **A stamped index refuses mixed vectors.** During the upgrade, queries with "
            f"{len(refused)} pipeline version(s) were refused, naming the stale documents: "
            + ("the claim **reproduces**." if refused else "nothing was refused."),
            f"- **Rebuild and retry.** After `--rebuild` and `retry`: {final.counts['indexed']} "
            f"of {total} documents indexed, {final.counts['failed']} failed, "
            f"{final.counts['stale']} stale.",
        ]
    )
    return text + "\n\n" + claims
