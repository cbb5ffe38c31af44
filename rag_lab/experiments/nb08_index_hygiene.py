"""Notebook 08: the stamped index on a copy of the corpus with two bad files beside it.

:func:`run` takes the index through a day of its life in a temporary folder (index a folder
with two bad files, upgrade the pipeline while a document changes, refuse the mixed index,
rebuild, retry the fixed file) and returns a :class:`Hygiene` record of every step; the
rest of the module lays that record out in tables and judges the claims on it.

The upgrade there changes a version string only, so the vectors on both sides of the stamp
are the same. The half-migrated index of :mod:`rag_lab.evaluation.migration` shows what the
refusal prevents: half the corpus embedded by an older pipeline (CLS pooling of the same
model), searched by the current one. :func:`migration_entries` judges it;
:func:`migration_recall`, :func:`distances_table`, :func:`bluffs_table`,
:func:`stamp_check_table` and :func:`shown_refusal` lay it out.
"""

from __future__ import annotations

import shutil
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab.app import index, ingest
from rag_lab.app.index import STRATEGY, IndexStatus
from rag_lab.app.ingest import IngestReport
from rag_lab.app.store import DocumentRecord, Status
from rag_lab.chunking import chunk_document
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import migration
from rag_lab.evaluation.ledger import Entry, fixed_entry
from rag_lab.evaluation.migration import CURRENT, MIXED, Migration
from rag_lab.experiments.migration import StampCheck, refusal_entry
from rag_lab.experiments.present import Table
from rag_lab.pipeline import Answer, Refusal, answer
from rag_lab.search import TextEncoder

HEADLINE = ("failed-visible", "counts-recorded", "stale-refused", "migration-confident-nonsense")
"""The claims this notebook opens with: the three true by how the index is built and checked
on this run, and the half-migrated index's answers without the answer, which the stamps
exist to prevent."""

BAD_FILES = {
    # An export from an old editor, in Latin-1 (é is byte 0xE9), and a file that is empty.
    "21-wiki-export.md": "# Wiki export\n\nThe café's notes.\n".encode("latin-1"),
    "22-placeholder.md": b"",
}
FIXED_EXPORT = "# Wiki export\n\nThe café's notes.\n"
"""The Latin-1 export, saved again as UTF-8: what a user does after reading the failure."""
UPGRADE_EDIT = "\nA paragraph added on upgrade day.\n"
"""What the edited document gains while the upgrade is rolled out."""
FOLDER = "<folder>"
"""How the temporary folder's path is shown: a machine path means nothing to a reader."""


def make_folder(docs: Sequence[Document], folder: Path) -> Path:
    """Copy the corpus into ``folder`` (the lab's own files are never touched) and add
    :data:`BAD_FILES`; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for d in docs:
        shutil.copy(d.path, folder / d.path.name)
    for name, data in BAD_FILES.items():
        (folder / name).write_bytes(data)
    return folder


def recount(records: Sequence[DocumentRecord], docs: Sequence[Document]) -> tuple[bool, int]:
    """Do the recorded chunk counts equal a fresh chunking? And how many chunks in all."""
    by_id = {d.id: d for d in docs}
    fresh = {r.id: len(chunk_document(by_id[r.id], STRATEGY)) for r in records if r.id in by_id}
    recorded = {r.id: r.chunk_count for r in records}
    return all(recorded[i] == n for i, n in fresh.items()), sum(fresh.values())


@dataclass(frozen=True)
class Searched:
    """One query against the index: how many chunks were searched, and the answer."""

    chunks: int
    result: Answer | Refusal


@dataclass(frozen=True)
class Hygiene:
    """Every step of :func:`run`, as it stood when the step was done."""

    files: int
    """Files in the folder: the corpus and :data:`BAD_FILES`."""
    first: IngestReport
    records: list[DocumentRecord]
    """The index's documents after the first run."""
    counts_agree: bool
    """The recorded chunk counts equal a fresh chunking of every document."""
    fresh_chunks: int
    first_status: IndexStatus
    first_search: Searched
    upgrade: IngestReport
    upgrade_status: IndexStatus
    refusals: dict[str, str]
    """Pipeline version → why a query with it was refused (the folder shown as :data:`FOLDER`)."""
    rebuild: IngestReport
    rebuilt_search: Searched
    retry: IngestReport
    final: IndexStatus

    def describe(self, st: IndexStatus) -> str:
        """What ``rag-lab status`` prints for ``st``, the folder shown as :data:`FOLDER`."""
        return index.describe(st).replace(st.folder or FOLDER, FOLDER)


def run(
    docs: Sequence[Document],
    encoder: TextEncoder,
    *,
    question: str,
    cutoff: float,
    upgraded_pipeline: str,
    edited_document: str,
) -> Hygiene:
    """Index a copy of ``docs`` with :data:`BAD_FILES` in a temporary folder, query it,
    upgrade to ``upgraded_pipeline`` while ``edited_document`` changes, query with both
    pipelines (each refused while the index mixes stamps), rebuild, query again, fix the
    Latin-1 file and retry. The folder and its index are deleted on return."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_folder(docs, Path(tmp).resolve() / "docs")
        store = index.open_index(Path(tmp) / "index.sqlite")
        try:
            first = ingest.index_folder(folder, store, encoder, progress=False)
            records = store.documents()
            agree, fresh = recount(records, docs)
            first_status = index.status(store, index.current_stamp(encoder.fingerprint))
            first_search = _search(index.retriever(store, encoder), question, cutoff)

            edited = folder / edited_document
            edited.write_text(edited.read_text(encoding="utf-8") + UPGRADE_EDIT, encoding="utf-8")
            upgrade = ingest.index_folder(
                folder, store, encoder, pipeline_version=upgraded_pipeline, progress=False
            )
            upgraded = index.current_stamp(encoder.fingerprint, upgraded_pipeline)
            upgrade_status = index.status(store, upgraded)
            refusals = {}
            for pipeline in (upgraded_pipeline, index.PIPELINE_VERSION):
                try:
                    index.retriever(store, encoder, pipeline)
                except index.StaleIndexError as refusal:
                    refusals[pipeline] = str(refusal).replace(str(folder), FOLDER)

            rebuild = ingest.index_folder(
                folder,
                store,
                encoder,
                pipeline_version=upgraded_pipeline,
                rebuild=True,
                progress=False,
            )
            rebuilt = _search(index.retriever(store, encoder, upgraded_pipeline), question, cutoff)
            (folder / "21-wiki-export.md").write_text(FIXED_EXPORT, encoding="utf-8")
            retried = ingest.retry(
                store, encoder, pipeline_version=upgraded_pipeline, progress=False
            )
            final = index.status(store, upgraded)
        finally:
            store.close()
    return Hygiene(
        files=len(docs) + len(BAD_FILES),
        first=first,
        records=records,
        counts_agree=agree,
        fresh_chunks=fresh,
        first_status=first_status,
        first_search=first_search,
        upgrade=upgrade,
        upgrade_status=upgrade_status,
        refusals=refusals,
        rebuild=rebuild,
        rebuilt_search=rebuilt,
        retry=retried,
        final=final,
    )


def _search(retriever: index.StoredRetriever, question: str, cutoff: float) -> Searched:
    return Searched(retriever.size, answer(question, retriever, cutoff))


# --- tables -----------------------------------------------------------------------------------


def records_table(h: Hygiene) -> Table:
    """The index's documents after the first run, by status: how many, the chunks the
    indexer recorded (in all, and the fewest and most of one document), and whether they
    equal a fresh chunking."""
    rows = {}
    for status in (Status.INDEXED, Status.FAILED):
        counts = [r.chunk_count for r in h.records if r.status is status]
        known = [n for n in counts if n is not None]
        rows[status.value] = {
            "documents": len(counts),
            "chunks recorded": sum(known) if known else "–",
            "per document": f"{min(known)}–{max(known)}" if known else "–",
            "fresh chunking": ("equal" if h.counts_agree else "differs") if known else "–",
        }
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("status")
    return Table(
        frame, caption="The index after the first run; chunks as the indexer recorded them"
    )


def failures_table(report: IngestReport) -> Table:
    """Each document that failed, with the reason the indexer recorded."""
    frame = pd.DataFrame(
        {"reason": list(report.failed.values())},
        index=pd.Index(list(report.failed), name="failed document"),
    )
    return Table(frame, caption="Failed, each with its reason; the other documents are indexed")


def runs_table(reports: Mapping[str, IngestReport]) -> Table:
    """What each indexing run did (a run's name → its report), in documents: indexed,
    unchanged, failed, left stale, removed; the counts ``rag-lab index`` prints."""
    frame = pd.DataFrame(
        {
            "indexed": [len(r.indexed) for r in reports.values()],
            "unchanged": [len(r.skipped) for r in reports.values()],
            "failed": [len(r.failed) for r in reports.values()],
            "stale": [len(r.stale) for r in reports.values()],
            "removed": [len(r.removed) for r in reports.values()],
        },
        index=pd.Index(list(reports), name="run"),
    )
    return Table(frame, caption="What the run did, in documents")


def searches_table(searches: Mapping[str, Searched]) -> Table:
    """Each query against the index (when it was asked → what it got): the chunks searched,
    the sources within the cutoff and the nearest one's link."""
    cited = {
        when: s.result.citations if isinstance(s.result, Answer) else []
        for when, s in searches.items()
    }
    frame = pd.DataFrame(
        {
            "chunks searched": [s.chunks for s in searches.values()],
            "sources": [len(c) for c in cited.values()],
            "nearest": [c[0].href if c else "–" for c in cited.values()],
        },
        index=pd.Index(list(searches), name="query"),
    )
    return Table(frame, caption="The question against the index; sources: chunks within the cutoff")


def citations_table(searched: Searched) -> Table:
    """The sources of one answer: their number, cosine distance, link and section."""
    cited = searched.result.citations if isinstance(searched.result, Answer) else []
    frame = pd.DataFrame(
        {
            "distance": [c.distance for c in cited],
            "link": [c.href for c in cited],
            "section": [f"{c.document_name} — {c.locator_label}" for c in cited],
        },
        index=pd.Index([c.index for c in cited], name="[n]"),
    )
    return Table(frame, caption="The answer's sources; distance: cosine", shorten={"section": 50})


def status_table(st: IndexStatus) -> Table:
    """:func:`rag_lab.app.index.status` by status: documents, searchable chunks, and which
    documents (every name in HTML, cut in plain text)."""
    named = {
        Status.FAILED.value: ", ".join(r.path for r in st.failed),
        Status.STALE.value: ", ".join(r.path for r in st.stale),
    }
    frame = pd.DataFrame(
        {
            "documents": list(st.counts.values()),
            "chunks searchable": [st.chunks if s == Status.INDEXED.value else 0 for s in st.counts],
            "which": [named.get(s, "") for s in st.counts],
        },
        index=pd.Index(list(st.counts), name="status"),
    )
    return Table(
        frame, caption="Documents by status, as rag-lab status counts them", shorten={"which": 56}
    )


def stamps_table(st: IndexStatus) -> Table:
    """The stamps in the index, one row each: how many documents carry it, the pipeline and
    reader versions, and whether it is the stamp of the code asking. A field every stamp
    shares (the model, here) is said once, in the caption."""
    stamps = list(st.stamps)
    models = {(s.model_name, s.model_key, s.dimensions) for s in stamps}
    frame = pd.DataFrame(
        {
            "documents": list(st.stamps.values()),
            "pipeline": [s.pipeline_version for s in stamps],
            "reader": [s.reader_version for s in stamps],
            "current": ["yes" if s == st.current else "" for s in stamps],
        }
    )
    if len(models) == 1:
        ((name, key, dims),) = models
        caption = f"Stamps, all by {name} (fingerprint {key}, {dims} dims)"
    else:
        frame.insert(1, "model", [f"{s.model_name} ({s.model_key})" for s in stamps])
        caption = "Stamps in the index"
    return Table(frame, caption=caption, shorten={"model": 30})


# --- the ledger -------------------------------------------------------------------------


def entries(h: Hygiene) -> list[Entry]:
    """The chapter's index-hygiene claims, each true by how the index is built and checked
    on this run: this notebook's part of the ledger."""
    at = {"notebook": "08", "benchmark": "d2l"}
    return [
        fixed_entry(
            "failed-visible",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=bool(h.first.failed),
            reason="ingestion records a failed document with its reason instead of skipping it; "
            "the run fails some on purpose",
            here=f"{len(h.first.failed)} failed, each with its reason",
        ),
        fixed_entry(
            "counts-recorded",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=h.counts_agree,
            reason="the indexer stores each document's chunk count as it writes it; checked "
            "against a fresh chunking",
            here="equal" if h.counts_agree else "differ",
        ),
        fixed_entry(
            "stale-refused",
            **at,
            verdict=Verdict.BY_CONSTRUCTION,
            holds=bool(h.refusals),
            reason="every document carries the stamp of what built it, and a search refuses "
            "when they differ; the run upgrades on purpose",
            here=f"{len(h.refusals)} refused",
        ),
    ]


# --- the half-migrated index ------------------------------------------------------------------


def migration_entries(m: Migration, check: StampCheck) -> list[Entry]:
    """The half-migrated index's claims (:func:`rag_lab.evaluation.migration.entries`) and
    the stamps' refusal of the real index half built by each pipeline."""
    return [*migration.entries(m), refusal_entry(check, m.stale)]


def _questions(m: Migration, mask: np.ndarray) -> int:
    return len({c for c, keep in zip(m.clusters, mask, strict=True) if keep})


def migration_recall(m: Migration) -> Table:
    """Recall@k of the whole index and the half-migrated one, on the questions whose needle
    lies in each half, with the questions and queries of each half."""
    frame = migration.recall_table(m).reset_index(level="k")
    sizes = {
        half: _questions(m, mask)
        for half, mask in (("stale half", m.query_stale), ("current half", ~m.query_stale))
    }
    frame["questions"] = [sizes[h] for h in frame.index]
    frame = frame[["k", CURRENT, MIXED, "questions", "queries"]].rename_axis("needle in")
    return Table(
        frame,
        caption="Recall@k, whole index (current) and half-migrated, by the half the needle lies "
        "in; queries: each question's phrasings",
    )


def distances_table(m: Migration) -> Table:
    """The distances behind :func:`rag_lab.evaluation.migration.distance_figure`, as
    numbers: for each kind of nearest chunk, how many queries, the median cosine distance and
    how many lie within the cutoff."""
    found = migration.nearest_distances(m)
    frame = pd.DataFrame(
        {
            "queries": [len(d) for d in found.values()],
            "median distance": [float(np.median(d)) for d in found.values()],
            "within the cutoff": [int((d <= m.cutoff).sum()) for d in found.values()],
        },
        index=pd.Index(list(found), name="nearest"),
    )
    return Table(
        frame,
        caption=f"Each query's nearest chunk of a kind, cosine distance; cutoff {m.cutoff:g}. "
        "Stale and current: the half-migrated index; needle and negatives: the whole one",
    )


def bluffs_table(m: Migration) -> Table:
    """At the chapter's cutoff: how many of the stale half's queries each index answers
    (nearest chunk within the cutoff), how many of those lack the needle in the prompt's
    top k, how often the half-migrated index's nearest chunk is stale, and the negatives
    answered."""
    stale = m.query_stale
    answered = {
        w: int(((d[0].min(axis=1) <= m.cutoff) & stale).sum())
        for w, d in ((CURRENT, m.current), (MIXED, m.mixed))
    }
    nonsense = {w: int(m.answered_without_needle(w)[stale].sum()) for w in (CURRENT, MIXED)}
    negatives = {w: int(m.negatives_answered(w).sum()) for w in (CURRENT, MIXED)}
    top = m.top_is_stale()
    of = {"stale": f"{int(stale.sum())} queries", "all": f"{len(top)} queries"}
    rows = {
        "stale half: answered": {**answered, "of": of["stale"]},
        f"… needle not in top {migration.K}": {**nonsense, "of": of["stale"]},
        "nearest chunk is stale": {CURRENT: "–", MIXED: int(top.sum()), "of": of["all"]},
        "… for the stale half's queries": {
            CURRENT: "–",
            MIXED: int(top[stale].sum()),
            "of": of["stale"],
        },
        "negatives answered": {**negatives, "of": f"{len(m.mixed[1])} negatives"},
    }
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("at the cutoff")
    return Table(
        frame,
        caption=f"Answered: nearest chunk within the chapter's cutoff {m.cutoff:g} "
        "(cosine distance); counts of queries",
    )


def shown_refusal(check: StampCheck, folder: str | Path, width: int = 100) -> str:
    """The refusal of :func:`rag_lab.experiments.migration.stamped_index` run in ``folder``,
    its corpus folder shown as :data:`FOLDER`, wrapped to ``width``; or a line saying the
    search went ahead."""
    if check.refusal is None:
        return "the search went ahead: no refusal"
    text = check.refusal
    for corpus in {Path(folder) / "corpus", Path(folder).resolve() / "corpus"}:
        text = text.replace(str(corpus), FOLDER)
    return textwrap.fill(text, width, break_on_hyphens=False)


def stamp_check_table(check: StampCheck, stale: frozenset[str]) -> Table:
    """The real index half built by each pipeline: its documents, those its status calls
    stale, those the refusal names, and those the older pipeline embedded (``stale``)."""
    rows = {
        "in the index": check.documents,
        "stale by the index's status": len(check.stale),
        "named stale by the refusal": len(check.refused),
        "embedded by the older pipeline": len(stale),
    }
    frame = pd.DataFrame({"documents": list(rows.values())}, index=pd.Index(list(rows), name=""))
    return Table(frame, caption="The stamped copy, searched with the current pipeline")
