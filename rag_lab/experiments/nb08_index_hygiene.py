"""Notebook 08: the stamped index on a copy of the corpus with two bad files beside it.

:func:`run` takes the index through a day of its life in a temporary folder (index a folder
with two bad files, upgrade the pipeline while a document changes, refuse the mixed index,
rebuild, retry the fixed file) and returns a :class:`Hygiene` record of every step; the
rest of the module lays that record out in tables and reads it against the ledger.

The upgrade there changes a version string only, so the vectors on both sides of the stamp
are the same. The half-migrated index of :mod:`rag_lab.evaluation.migration` shows what the
refusal prevents: half the corpus embedded by an older pipeline (CLS pooling of the same
model), searched by the current one. :func:`migration_entries`, :func:`migration_recall`,
:func:`bluffs_table`, :func:`shown_refusal` and :func:`migration_reading` lay it out.
"""

from __future__ import annotations

import shutil
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab.app import index, ingest
from rag_lab.app.index import STRATEGY, IndexStatus
from rag_lab.app.ingest import IngestReport
from rag_lab.app.store import DocumentRecord, Status
from rag_lab.chunking import chunk_document
from rag_lab.documents import Document
from rag_lab.evaluation import migration
from rag_lab.evaluation.ledger import Entry, construction_entry
from rag_lab.evaluation.migration import CURRENT, MIXED, Migration
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.experiments.migration import StampCheck, refusal_entry
from rag_lab.experiments.present import Table
from rag_lab.pipeline import Answer, Refusal, answer
from rag_lab.search import TextEncoder
from rag_lab.text import counted

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
    return Table(
        frame,
        caption=f"{len(cited)} sources from {searched.chunks} chunks searched; distance: cosine",
        shorten={"section": 50},
    )


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


# --- the ledger and the reading -------------------------------------------------------------


def entries(h: Hygiene) -> list[Entry]:
    """The chapter's index-hygiene claims, each true by how the index is built and checked
    on this run: this notebook's part of the ledger."""
    at = {"notebook": "08", "benchmark": "d2l"}
    return [
        construction_entry(
            **at,
            holds=bool(h.first.failed),
            claim="failed-visible",
            statement="failed documents are visible, with reasons",
            reason="ingestion records a failed document with its reason instead of skipping it; "
            "the run fails some on purpose",
            metric="documents failed, each with a reason",
            here=f"{len(h.first.failed)} failed, each with its reason",
        ),
        construction_entry(
            **at,
            holds=h.counts_agree,
            claim="counts-recorded",
            statement="counts are recorded by the indexer",
            reason="the indexer stores each document's chunk count as it writes it; checked "
            "against a fresh chunking",
            metric="recorded chunk counts against a fresh chunking",
            here="equal" if h.counts_agree else "differ",
        ),
        construction_entry(
            **at,
            holds=bool(h.refusals),
            claim="stale-refused",
            statement="a stale index refuses mixed queries",
            reason="every document carries the stamp of what built it, and a search refuses "
            "when they differ; the run upgrades on purpose",
            metric="pipeline versions refused during the upgrade",
            here=f"{len(h.refusals)} refused",
        ),
    ]


def reading(h: Hygiene) -> str:
    """What the findings rest on, one bullet per claim and one for the way back, worded by
    the ledger's verdicts (:func:`entries`)."""
    verdict = {e.claim: e.verdict.label for e in entries(h)}
    failed = ", ".join(f"{d} ({r})" for d, r in h.first.failed.items()) or "none"
    final, total = h.final, sum(h.final.counts.values())
    stale = h.upgrade_status.counts[Status.STALE.value]
    return "\n".join(
        [
            f"- **Failed documents are visible** ({verdict['failed-visible']}). The first run "
            f"indexed {len(h.first.indexed)} documents and failed {len(h.first.failed)}, each "
            f"with its reason: {failed}. Nothing was dropped silently, and the failures did "
            "not stop the others from being searched.",
            f"- **Counts recorded by the indexer** ({verdict['counts-recorded']}). The chunk "
            "counts in the index "
            + ("equal" if h.counts_agree else "differ from")
            + f" a fresh chunking of every document ({h.fresh_chunks} chunks in all).",
            f"- **A stamped index refuses mixed vectors** ({verdict['stale-refused']}). During "
            f"the upgrade {stale} of {sum(h.upgrade_status.counts.values())} documents were "
            f"stale, and queries with {len(h.refusals)} of 2 pipeline versions were refused, "
            "each naming the stale documents and the command that rebuilds them.",
            f"- **Rebuild and retry.** After `--rebuild` and `retry`: "
            f"{final.counts[Status.INDEXED.value]} of {total} documents indexed, "
            f"{final.counts[Status.FAILED.value]} failed, {final.counts[Status.STALE.value]} "
            f"stale; {counted(len(final.stamps), 'stamp')} in the index.",
        ]
    )


# --- the half-migrated index ------------------------------------------------------------------


def migration_entries(m: Migration, check: StampCheck) -> list[Entry]:
    """The half-migrated index's claims (:func:`rag_lab.evaluation.migration.entries`) and
    the stamps' refusal of the real index half built by each pipeline."""
    return [*migration.entries(m), refusal_entry(check, m.stale)]


def _questions(m: Migration, mask: np.ndarray) -> int:
    return len({c for c, keep in zip(m.clusters, mask, strict=True) if keep})


def migration_recall(m: Migration) -> Table:
    """Recall@k of the whole index and the half-migrated one, on each half's questions; the
    questions and queries per half in the caption."""
    frame = migration.recall_table(m)
    halves = {
        half: (_questions(m, mask), int(mask.sum()))
        for half, mask in (("stale half", m.query_stale), ("current half", ~m.query_stale))
    }
    sizes = {n for n in halves.values()}
    if len(sizes) == 1:
        ((questions, queries),) = sizes
        each = f"{questions} questions each, both phrasings ({queries} queries)"
    else:
        each = "; ".join(f"{h}: {q} questions ({n} queries)" for h, (q, n) in halves.items())
    return Table(
        frame.drop(columns="queries").reset_index(level="k"),
        caption=f"Recall@k, whole index (current) and half-migrated, by half: {each}",
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


def _recall(m: Migration, which: str, mask: np.ndarray) -> float:
    ranks = m.ranks(which)
    hits = [r is not None and r <= migration.K for r, keep in zip(ranks, mask, strict=True) if keep]
    return float(np.mean(hits))


def migration_reading(m: Migration, check: StampCheck) -> str:
    """One bullet per claim of :func:`migration_entries`, worded by the ledger's verdicts,
    with the distances that explain them."""
    by = {e.claim: e for e in migration_entries(m, check)}
    lost, fresh = by["migration-loses-stale@R5"], by["migration-current-half@R5"]
    nonsense, refused = by["migration-confident-nonsense"], by["migration-refused"]
    d = migration.nearest_distances(m)
    old, new = d["stale chunks (older pipeline)"], d["current chunks"]
    stale, k, cut = m.query_stale, migration.K, f"{m.cutoff:g}"
    top = m.top_is_stale()
    far = np.median(old) > np.median(new)
    where = "The older pipeline's CLS vectors sit " + (
        "far from the queries" if far else "no farther from the queries than the current ones"
    )
    side = "beyond" if np.median(old) > m.cutoff else "within"
    found = (
        "The current pipeline's queries all but never reach the older vectors: the stale half "
        "is not found, and what the search returns for its questions comes from the other half."
        if top[stale].mean() < 0.25
        else "The older vectors are still found first for many of the stale half's queries."
    )
    answered = int(((m.mixed[0].min(axis=1) <= m.cutoff) & stale).sum())
    a_mixed = int(m.answered_without_needle(MIXED)[stale].sum())
    a_current = int(m.answered_without_needle(CURRENT)[stale].sum())
    n_stale, n_all = int(stale.sum()), len(stale)
    survives = {
        Verdict.REPRODUCES: "the interval lies within the margin.",
        Verdict.CONTRADICTED: "the question-level test finds a difference.",
    }.get(
        fresh.verdict,
        f"the interval reaches beyond the margin: {_questions(m, ~stale)} questions cannot show "
        "the halves the same, which is not evidence of a difference.",
    )
    if fresh.estimate is not None and fresh.estimate < 0:
        survives += (
            " If anything the half-migrated index is ahead here: the stale chunks, far from "
            "every query, no longer compete for the top places."
        )
    return "\n".join(
        [
            f"- **A half-migrated index loses the stale half** ({lost.verdict_text}). Recall@{k} "
            f"on the stale half's questions: {_recall(m, CURRENT, stale):.3f} in the whole index, "
            f"{_recall(m, MIXED, stale):.3f} in the half-migrated one; by question {lost.interval} "
            f"({lost.here}). {where}: the nearest stale chunk is at a median cosine distance of "
            f"{np.median(old):.3f}, {side} the cutoff {cut}, the nearest current one at "
            f"{np.median(new):.3f}; {int((old <= m.cutoff).sum())} of {n_all} queries have a "
            f"stale chunk within the cutoff, and the nearest chunk is stale for {int(top.sum())} "
            f"of {n_all} ({int(top[stale].sum())} of the stale half's own {n_stale}). {found}",
            f"- **The current half's answers survive** ({fresh.verdict_text}). Recall@{k} on "
            f"the other half's questions: {_recall(m, CURRENT, ~stale):.3f} in the whole index, "
            f"{_recall(m, MIXED, ~stale):.3f} in the half-migrated one; by question "
            f"{fresh.interval} ({fresh.here}): {survives}",
            f"- **Answers without the answer, and no error** ({nonsense.verdict_text}). Of the "
            f"stale half's {n_stale} queries, the half-migrated index lets {answered} through "
            f"the cutoff {cut}, {a_mixed} of them with no needle in the top {k} (the whole "
            f"index: {a_current}); by question {nonsense.interval}. The current half's chunks "
            "answer the stale half's questions, close enough to pass the gate, and the search "
            "raises nothing.",
            f"- **The stamps refuse the mixed index** ({refused.verdict_text}). The SQLite index "
            f"half built by each pipeline refused the current pipeline's query and named "
            f"{len(check.refused)} of its {check.documents} documents, "
            + ("exactly" if check.refused == m.stale else "not exactly")
            + f" the {len(m.stale)} embedded by the older pipeline.",
        ]
    )
