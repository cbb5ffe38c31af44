"""The half-migrated index of :mod:`rag_lab.evaluation.migration`, built for real in SQLite.

The measurement shows what mixed vectors do to a search that cannot tell; this shows the
stamps telling: the index is built by the lab's own indexer, half by the older pipeline and
half by the current one, and :func:`rag_lab.app.index.retriever` is asked to search it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_lab.evaluation.ledger import Entry


@dataclass(frozen=True)
class StampCheck:
    """A real SQLite index half-built by each pipeline, asked by the current one."""

    documents: int
    stale: frozenset[str]
    """Documents the index's own status calls stale, seen with the current stamp."""
    refusal: str | None
    """The message of the refusal, or None if the search went ahead."""
    refused: frozenset[str]
    """The documents the refusal names as stale."""


def stamped_index(docs, stale: frozenset[str], old, current, folder) -> StampCheck:
    """Index the ``stale`` documents' files with ``old``, then the whole folder with
    ``current`` (the unchanged stale files keep their vectors and are marked stale, as an
    interrupted migration leaves them), and search it with the current encoder."""
    import shutil
    from pathlib import Path

    from rag_lab.app import index, ingest

    folder = Path(folder)
    files, db = folder / "corpus", folder / "index.sqlite"
    files.mkdir(parents=True, exist_ok=True)
    store = index.open_index(db)
    try:
        for d in (d for d in docs if d.id in stale):
            shutil.copy(d.path, files / d.path.name)
        ingest.index_folder(files, store, old, progress=False)
        for d in (d for d in docs if d.id not in stale):
            shutil.copy(d.path, files / d.path.name)
        ingest.index_folder(files, store, current, progress=False)
        status = index.status(store, index.current_stamp(current.fingerprint))
        try:
            index.retriever(store, current)
            refusal, refused = None, frozenset()
        except index.StaleIndexError as err:
            refusal, refused = str(err), frozenset(r.id for r in err.stale)
        return StampCheck(
            len(store.documents()), frozenset(r.id for r in status.stale), refusal, refused
        )
    finally:
        store.close()


def refusal_entry(check: StampCheck, stale: frozenset[str], notebook: str = "08") -> Entry:
    """The stamps refuse the half-migrated index, naming exactly its stale documents."""
    from rag_lab.evaluation.ledger import count_entry

    holds = check.refusal is not None and check.refused == stale
    return count_entry(
        "migration-refused",
        notebook=notebook,
        benchmark="d2l",
        holds=holds,
        here=f"{len(check.refused)} of {check.documents} named, {len(stale)} stale",
    )
