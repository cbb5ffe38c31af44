"""Notebook 08: a stamped index through a day of its life (:func:`run`), and the half-migrated
index of :mod:`rag_lab.evaluation.migration` built for real, with stamps (:func:`stamped_index`).

Both drive the application (:mod:`rag_lab.app`), which the evaluation library may not import."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rag_lab.app import index, ingest
from rag_lab.app.index import STRATEGY, IndexStatus, StaleIndexError
from rag_lab.app.ingest import IngestReport
from rag_lab.app.store import Store
from rag_lab.chunking import chunk_document
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation.ledger import Entry, fixed_entry
from rag_lab.evaluation.migration import StampCheck
from rag_lab.pipeline import Answer, Refusal, answer
from rag_lab.search import TextEncoder

HEADLINE = ("failed-visible", "counts-recorded", "stale-refused", "migration-confident-nonsense")
EXPORT = "# Wiki export\n\nThe café's notes.\n"
# An export from an old editor, in Latin-1 (é is byte 0xE9), and a file that is empty; the
# export is fixed by saving it again as UTF-8, what a user does after reading the failure.
BAD_FILES = {"21-wiki-export.md": EXPORT.encode("latin-1"), "22-placeholder.md": b""}
UPGRADE_EDIT = "\nA paragraph added on upgrade day.\n"
FOLDER = "<folder>"  # how a temporary folder's path is shown: a machine path means nothing


@dataclass(frozen=True)
class Hygiene:
    """Each step of :func:`run` (``first run``, ``upgrade``, ``rebuild``, ``retry``): what it
    did, and the index's status after it, its folder shown as :data:`FOLDER`."""

    reports: dict[str, IngestReport]
    statuses: dict[str, IndexStatus]
    answers: dict[str, Answer | Refusal]  # the question after the first run and the rebuild
    refusals: dict[str, str]  # after the upgrade: pipeline version → why a query was refused
    counts_agree: bool  # the recorded chunk counts equal a fresh chunking


def _refusal(store: Store, encoder, pipeline=index.PIPELINE_VERSION) -> StaleIndexError | None:
    """Why the index refuses a search with ``pipeline``, or None if it searches."""
    try:
        index.retriever(store, encoder, pipeline)
    except StaleIndexError as refusal:
        return refusal
    return None


def run(
    docs: Sequence[Document],
    encoder: TextEncoder,
    *,
    question: str,
    cutoff: float,
    upgraded_pipeline: str,
    edited_document: str,
) -> Hygiene:
    """In a temporary folder: index ``docs`` and :data:`BAD_FILES`, ask ``question``; upgrade
    while ``edited_document`` changes and ask with both pipelines; rebuild, ask; fix, retry."""
    reports, statuses, answers, refusals = {}, {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve() / "docs"
        folder.mkdir()
        for d in docs:
            shutil.copy(d.path, folder / d.path.name)
        for name, data in BAD_FILES.items():
            (folder / name).write_bytes(data)
        store = index.open_index(Path(tmp) / "index.sqlite")

        def step(name: str, pipeline: str, report: IngestReport) -> None:
            reports[name] = report
            st = index.status(store, index.current_stamp(encoder.fingerprint, pipeline))
            statuses[name] = replace(st, folder=FOLDER)

        def indexing(**options) -> IngestReport:
            return ingest.index_folder(folder, store, encoder, progress=False, **options)

        v1, v2 = index.PIPELINE_VERSION, upgraded_pipeline
        try:
            step("first run", v1, indexing())
            by_id = {d.id: d for d in docs}
            agree = all(
                r.chunk_count == len(chunk_document(by_id[r.id], STRATEGY))
                for r in store.documents()
                if r.id in by_id
            )
            answers["first run"] = answer(question, index.retriever(store, encoder, v1), cutoff)
            edited = folder / edited_document
            edited.write_text(edited.read_text(encoding="utf-8") + UPGRADE_EDIT, encoding="utf-8")
            step("upgrade", v2, indexing(pipeline_version=v2))
            for pipeline in (v2, v1):
                if (refusal := _refusal(store, encoder, pipeline)) is not None:
                    refusals[pipeline] = str(refusal).replace(str(folder), FOLDER)
            step("rebuild", v2, indexing(pipeline_version=v2, rebuild=True))
            answers["rebuild"] = answer(question, index.retriever(store, encoder, v2), cutoff)
            (folder / "21-wiki-export.md").write_text(EXPORT, encoding="utf-8")
            step("retry", v2, ingest.retry(store, encoder, pipeline_version=v2, progress=False))
        finally:
            store.close()
    return Hygiene(reports, statuses, answers, refusals, agree)


def entries(h: Hygiene) -> list[Entry]:
    """The chapter's index-hygiene claims, each checked on this run by breaking it on purpose."""
    at = {"notebook": "08", "benchmark": "d2l", "verdict": Verdict.BY_CONSTRUCTION}
    failed = h.reports["first run"].failed
    checks = {
        "failed-visible": (
            bool(failed),
            "ingestion records a failed document with its reason instead of skipping it; the "
            "run fails some on purpose",
            f"{len(failed)} failed, each with its reason",
        ),
        "counts-recorded": (
            h.counts_agree,
            "the indexer stores each document's chunk count as it writes it; checked against "
            "a fresh chunking",
            "equal" if h.counts_agree else "differ",
        ),
        "stale-refused": (
            bool(h.refusals),
            "every document carries the stamp of what built it, and a search refuses when "
            "they differ; the run upgrades on purpose",
            f"{len(h.refusals)} refused",
        ),
    }
    return [fixed_entry(c, **at, holds=ok, reason=r, here=x) for c, (ok, r, x) in checks.items()]


def stamped_index(docs, stale: frozenset[str], old, current) -> StampCheck:
    """In a temporary folder: index the ``stale`` documents' files with ``old``, then the whole
    folder with ``current`` (the unchanged stale files keep their vectors and are marked
    stale, as an interrupted migration leaves them), and search it with ``current``."""
    with tempfile.TemporaryDirectory() as tmp:
        files = Path(tmp).resolve() / "corpus"
        files.mkdir()
        store = index.open_index(files.parent / "index.sqlite")
        try:
            for encoder, batch in ((old, stale), (current, {d.id for d in docs} - stale)):
                for d in docs:
                    if d.id in batch:
                        shutil.copy(d.path, files / d.path.name)
                ingest.index_folder(files, store, encoder, progress=False)
            refusal, documents = _refusal(store, current), len(store.documents())
        finally:
            store.close()
    if refusal is None:
        return StampCheck(documents, None, frozenset())
    text = str(refusal).replace(str(files), FOLDER)
    return StampCheck(documents, text, frozenset(r.id for r in refusal.stale))
