"""Notebook 08: a stamped index through a day of its life (:func:`run`), and the half-migrated
index of :mod:`rag_lab.evaluation.migration` built for real, with stamps (:func:`stamped_index`)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab.app import index, ingest
from rag_lab.app.index import STRATEGY, IndexStatus, StaleIndexError
from rag_lab.app.ingest import IngestReport
from rag_lab.app.store import Status, Store
from rag_lab.chunking import chunk_document
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import migration
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.migration import CURRENT, MIXED, Migration
from rag_lab.experiments.present import Table
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
class Searched:
    """One query against the index: how many chunks were searched, and the answer."""

    chunks: int
    result: Answer | Refusal


@dataclass(frozen=True)
class Hygiene:
    """Every step of :func:`run`, as it stood when the step was done."""

    first: IngestReport
    counts_agree: bool  # the recorded chunk counts equal a fresh chunking
    first_status: IndexStatus
    first_search: Searched
    upgrade: IngestReport
    upgrade_status: IndexStatus
    refusals: dict[str, str]  # pipeline version → why a query with it was refused
    rebuild: IngestReport
    rebuilt_search: Searched
    retry: IngestReport
    final: IndexStatus

    def describe(self, st: IndexStatus) -> str:
        """What ``rag-lab status`` prints for ``st``, the folder shown as :data:`FOLDER`."""
        return index.describe(st).replace(st.folder or FOLDER, FOLDER)


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
    """In a temporary folder: index ``docs`` and :data:`BAD_FILES`, query; upgrade while
    ``edited_document`` changes, query with both pipelines; rebuild, query; fix, retry."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp).resolve() / "docs"
        folder.mkdir()
        for d in docs:
            shutil.copy(d.path, folder / d.path.name)
        for name, data in BAD_FILES.items():
            (folder / name).write_bytes(data)
        store = index.open_index(Path(tmp) / "index.sqlite")
        upgraded = index.current_stamp(encoder.fingerprint, upgraded_pipeline)

        def indexing(**options) -> IngestReport:
            return ingest.index_folder(folder, store, encoder, progress=False, **options)

        def search(pipeline: str = index.PIPELINE_VERSION) -> Searched:
            retriever = index.retriever(store, encoder, pipeline)
            return Searched(retriever.size, answer(question, retriever, cutoff))

        try:
            first = indexing()
            by_id = {d.id: d for d in docs}
            agree = all(
                r.chunk_count == len(chunk_document(by_id[r.id], STRATEGY))
                for r in store.documents()
                if r.id in by_id
            )
            first_status = index.status(store, index.current_stamp(encoder.fingerprint))
            first_search = search()
            edited = folder / edited_document
            edited.write_text(edited.read_text(encoding="utf-8") + UPGRADE_EDIT, encoding="utf-8")
            upgrade = indexing(pipeline_version=upgraded_pipeline)
            upgrade_status = index.status(store, upgraded)
            refusals = {}
            for pipeline in (upgraded_pipeline, index.PIPELINE_VERSION):
                if (refusal := _refusal(store, encoder, pipeline)) is not None:
                    refusals[pipeline] = str(refusal).replace(str(folder), FOLDER)
            rebuild = indexing(pipeline_version=upgraded_pipeline, rebuild=True)
            rebuilt_search = search(upgraded_pipeline)
            (folder / "21-wiki-export.md").write_text(EXPORT, encoding="utf-8")
            retry = ingest.retry(store, encoder, pipeline_version=upgraded_pipeline, progress=False)
            final = index.status(store, upgraded)
        finally:
            store.close()
    return Hygiene(
        first,
        agree,
        first_status,
        first_search,
        upgrade,
        upgrade_status,
        refusals,
        rebuild,
        rebuilt_search,
        retry,
        final,
    )


# --- tables -----------------------------------------------------------------------------------


def runs_table(reports: Mapping[str, IngestReport]) -> Table:
    """What each indexing run did, in documents: the counts ``rag-lab index`` prints."""
    rows = {
        run: [len(r.indexed), len(r.skipped), len(r.failed), len(r.stale), len(r.removed)]
        for run, r in reports.items()
    }
    columns = ["indexed", "unchanged", "failed", "stale", "removed"]
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("run")
    return Table(frame, caption="What the run did, in documents")


def _cited(s: Searched) -> list:
    return s.result.citations if isinstance(s.result, Answer) else []


def searches_table(searches: Mapping[str, Searched]) -> Table:
    """Each query: the chunks searched, the sources within the cutoff, the nearest one."""
    rows = {}
    for query, s in searches.items():
        cited = _cited(s)
        rows[query] = [s.chunks, len(cited), cited[0].href if cited else "–"]
    columns = ["chunks searched", "sources", "nearest"]
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("query")
    return Table(frame, caption="The question against the index; sources: chunks within the cutoff")


def citations_table(searched: Searched) -> Table:
    cited = _cited(searched)
    frame = pd.DataFrame(
        [[c.distance, c.href, f"{c.document_name} — {c.locator_label}"] for c in cited],
        columns=["distance", "link", "section"],
        index=pd.Index([c.index for c in cited], name="[n]"),
    )
    return Table(frame, caption="The answer's sources; distance: cosine", shorten={"section": 50})


def status_tables(st: IndexStatus) -> tuple[Table, Table]:
    """:func:`rag_lab.app.index.status` in two: documents by status, then the stamps (a model
    every stamp shares is named once, in the caption)."""
    named = {Status.FAILED.value: st.failed, Status.STALE.value: st.stale}
    frame = pd.DataFrame({"documents": st.counts}).rename_axis("status")
    frame["chunks searchable"] = [st.chunks if s == Status.INDEXED.value else 0 for s in st.counts]
    frame["which"] = [", ".join(r.path for r in named.get(s, [])) for s in st.counts]
    caption = "Documents by status, as rag-lab status counts them"
    statuses = Table(frame, caption=caption, shorten={"which": 56})
    stamps = pd.DataFrame(
        [
            [n, s.pipeline_version, s.reader_version, "yes" if s == st.current else ""]
            for s, n in st.stamps.items()
        ],
        columns=["documents", "pipeline", "reader", "current"],
    )
    models = {(s.model_name, s.model_key, s.dimensions) for s in st.stamps}
    if len(models) > 1:
        stamps.insert(1, "model", [f"{s.model_name} ({s.model_key})" for s in st.stamps])
        return statuses, Table(stamps, caption="Stamps in the index", shorten={"model": 30})
    ((name, key, dims),) = models
    return statuses, Table(
        stamps, caption=f"Stamps, all by {name} (fingerprint {key}, {dims} dims)"
    )


# --- the ledger -------------------------------------------------------------------------


def entries(h: Hygiene) -> list[Entry]:
    """The chapter's index-hygiene claims, each checked on this run by breaking it on purpose."""
    at = {"notebook": "08", "benchmark": "d2l", "verdict": Verdict.BY_CONSTRUCTION}
    return [
        fixed_entry(
            "failed-visible",
            **at,
            holds=bool(h.first.failed),
            reason="ingestion records a failed document with its reason instead of skipping it; "
            "the run fails some on purpose",
            here=f"{len(h.first.failed)} failed, each with its reason",
        ),
        fixed_entry(
            "counts-recorded",
            **at,
            holds=h.counts_agree,
            reason="the indexer stores each document's chunk count as it writes it; checked "
            "against a fresh chunking",
            here="equal" if h.counts_agree else "differ",
        ),
        fixed_entry(
            "stale-refused",
            **at,
            holds=bool(h.refusals),
            reason="every document carries the stamp of what built it, and a search refuses "
            "when they differ; the run upgrades on purpose",
            here=f"{len(h.refusals)} refused",
        ),
    ]


# --- the half-migrated index ------------------------------------------------------------------


@dataclass(frozen=True)
class StampCheck:
    """A real SQLite index half built by each pipeline, asked by the current one."""

    documents: int
    stale: frozenset[str]  # as the index's status calls them, seen with the current stamp
    refusal: str | None  # its folder shown as FOLDER; None if the search went ahead
    refused: frozenset[str]  # the documents the refusal names as stale


def stamped_index(docs, stale: frozenset[str], old, current, folder) -> StampCheck:
    """Index the ``stale`` documents' files with ``old``, then the whole folder with
    ``current`` (the unchanged stale files keep their vectors and are marked stale, as an
    interrupted migration leaves them), and search it with the current encoder."""
    files = Path(folder).resolve() / "corpus"
    files.mkdir(parents=True, exist_ok=True)
    store = index.open_index(files.parent / "index.sqlite")
    try:
        for encoder, batch in ((old, stale), (current, {d.id for d in docs} - stale)):
            for d in docs:
                if d.id in batch:
                    shutil.copy(d.path, files / d.path.name)
            ingest.index_folder(files, store, encoder, progress=False)
        status = index.status(store, index.current_stamp(current.fingerprint))
        refusal = _refusal(store, current)
        return StampCheck(
            len(store.documents()),
            frozenset(r.id for r in status.stale),
            None if refusal is None else str(refusal).replace(str(files), FOLDER),
            frozenset() if refusal is None else frozenset(r.id for r in refusal.stale),
        )
    finally:
        store.close()


def migration_entries(m: Migration, check: StampCheck) -> list[Entry]:
    """The half-migrated index's claims, and the stamps' refusal naming its stale documents."""
    refused = count_entry(
        "migration-refused",
        notebook="08",
        benchmark="d2l",
        holds=check.refusal is not None and check.refused == m.stale,
        here=f"{len(check.refused)} of {check.documents} named, {len(m.stale)} stale",
    )
    return [*migration.entries(m), refused]


def migration_recall(m: Migration) -> Table:
    """Recall@k of the whole and the half-migrated index, by the half the needle lies in."""
    frame = migration.recall_table(m).reset_index(level="k")
    halves = {"stale half": m.query_stale, "current half": ~m.query_stale}
    frame["questions"] = [pd.Series(m.clusters)[halves[h]].nunique() for h in frame.index]
    frame = frame[["k", CURRENT, MIXED, "questions", "queries"]].rename_axis("needle in")
    caption = (
        "Recall@k, whole index (current) and half-migrated, by the half the needle lies in; "
        "queries: each question's phrasings"
    )
    return Table(frame, caption=caption)


def distances_table(m: Migration) -> Table:
    """:func:`rag_lab.evaluation.migration.distance_figure` in numbers."""
    found = migration.nearest_distances(m)
    frame = pd.DataFrame(
        [[len(d), np.median(d), (d <= m.cutoff).sum()] for d in found.values()],
        columns=["queries", "median distance", "within the cutoff"],
        index=pd.Index(list(found), name="nearest"),
    )
    caption = (
        f"Each query's nearest chunk of a kind, cosine distance; cutoff {m.cutoff:g}. "
        "Stale and current: the half-migrated index; needle and negatives: the whole one"
    )
    return Table(frame, caption=caption)


def bluffs_table(m: Migration) -> Table:
    """At the chapter's cutoff, in each index: queries answered, with and without the needle;
    how often the nearest chunk is stale; negatives answered."""
    stale, top = m.query_stale, m.top_is_stale()
    queries = f"{stale.sum()} queries"
    answered = [((d[0].min(axis=1) <= m.cutoff) & stale).sum() for d in (m.current, m.mixed)]
    blind = [m.answered_without_needle(w)[stale].sum() for w in (CURRENT, MIXED)]
    bluffs = [m.negatives_answered(w).sum() for w in (CURRENT, MIXED)]
    rows = {
        "stale half: answered": [*answered, queries],
        f"… needle not in top {migration.K}": [*blind, queries],
        "nearest chunk is stale": ["–", top.sum(), f"{len(top)} queries"],
        "… for the stale half's queries": ["–", top[stale].sum(), queries],
        "negatives answered": [*bluffs, f"{len(m.mixed[1])} negatives"],
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=[CURRENT, MIXED, "of"])
    caption = (
        f"Answered: nearest chunk within the chapter's cutoff {m.cutoff:g} (cosine distance); "
        "counts of queries"
    )
    return Table(frame.rename_axis("at the cutoff"), caption=caption)
