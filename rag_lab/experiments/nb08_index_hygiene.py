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
from rag_lab.evaluation import ledger
from rag_lab.evaluation.ledger import Entry, construction_entry

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


def entries(first: IngestReport, counts_agree: bool, refused: Sequence[str]) -> list[Entry]:
    """The chapter's index-hygiene claims, each true by how the index is built and checked
    on this run: this notebook's part of the ledger."""
    at = {"notebook": "08", "benchmark": "d2l"}
    return [
        construction_entry(
            **at,
            holds=bool(first.failed),
            claim="failed-visible",
            statement="failed documents are visible, with reasons",
            reason="ingestion records a failed document with its reason instead of skipping it; "
            "the run fails some on purpose",
            metric="documents failed, each with a reason",
            here=f"{len(first.failed)} failed, each with its reason",
        ),
        construction_entry(
            **at,
            holds=counts_agree,
            claim="counts-recorded",
            statement="counts are recorded by the indexer",
            reason="the indexer stores each document's chunk count as it writes it; checked "
            "against a fresh chunking",
            metric="recorded chunk counts against a fresh chunking",
            here="equal" if counts_agree else "differ",
        ),
        construction_entry(
            **at,
            holds=bool(refused),
            claim="stale-refused",
            statement="a stale index refuses mixed queries",
            reason="every document carries the stamp of what built it, and a search refuses "
            "when they differ; the run upgrades on purpose",
            metric="pipeline versions refused during the upgrade",
            here=f"{len(refused)} refused",
        ),
    ]


def reading(
    first: IngestReport, counts_agree: bool, refused: Sequence[str], final: IndexStatus
) -> str:
    """The chapter's index-hygiene claims, judged on what this run's index did."""
    failed = ", ".join(f"{d} ({r})" for d, r in first.failed.items()) or "none"
    total = sum(final.counts.values())
    claims = ledger.markdown(entries(first, counts_agree, refused))
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
