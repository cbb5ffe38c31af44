"""What an index serves: its chunking strategy, its retriever and its refusal cutoff.

An index records the strategy it was chunked with (:data:`STRATEGY_KEY`; an index that records
none was built before strategies could be chosen, so it holds the indexer's
:data:`~rag_lab.app.index.STRATEGY`) and the cutoff a team deploys with, beside the evidence for
it (:data:`CUTOFF_KEY`: given at ``index --cutoff``, or calibrated by ``evaluate --calibrate``).
The strategy is part of the pipeline version of the stamps (:func:`pipeline_version`), so an
index asked with another strategy than it holds is stale.

Retrievers: ``dense`` is :func:`rag_lab.app.index.retriever`; ``bm25`` and ``hybrid`` rank
every indexed chunk exactly as the lab does (:func:`rag_lab.search.rank_one`, which the lab's
``rank_all`` calls: BM25 with the tokenizer ``evaluate`` uses on a user's corpus
(:data:`rag_lab.search.SERVED_TOKENIZER`) over each chunk's embedded text, RRF with the
lab's k over dense's full ranking and the chunks BM25 retrieved). Their refusal is the gate's
question-level rule: a question is refused when its dense nearest distance is not strictly
under the cutoff (what ``evaluate`` measures as each query's ``nearest``); an answered one gets
the top ``k`` chunks of the ranking, whatever their own distances.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag_lab import dense
from rag_lab.app.index import STRATEGY, DamagedMeta, StoredRetriever, retriever
from rag_lab.app.store import Status, Store
from rag_lab.checksums import sha256_bytes
from rag_lab.chunking import OVERLAP, STRATEGIES, TARGET
from rag_lab.citations import Hit
from rag_lab.gate import CUTOFF
from rag_lab.search import RRF_K, SERVED_TOKENIZER, ChunkIndex, TextEncoder, rank_one
from rag_lab.sources.folder import discover

STRATEGY_KEY = "strategy"
"""The ``meta`` key that records the chunking strategy of the index's chunks."""
CUTOFF_KEY = "cutoff"
"""The ``meta`` key holding the deployed cutoff and its evidence, as a JSON object."""
RETRIEVERS = ("dense", "bm25", "hybrid")
SYSTEMS = {"bm25": "BM25", "hybrid": "hybrid"}
"""A ranked retriever's name among :func:`rag_lab.search.rank_one`'s rankings."""
TOKENIZER = SERVED_TOKENIZER
"""BM25's tokenizer: the one ``evaluate --corpus`` measures a user's corpus with."""


def pipeline_version(strategy: str) -> str:
    """The pipeline version of vectors chunked by ``strategy`` (E's is
    :data:`~rag_lab.app.index.PIPELINE_VERSION`, byte for byte)."""
    return f"chunk={strategy}/{TARGET}/{OVERLAP};embed=minilm;v1"


def recorded_strategy(store: Store) -> str:
    """The strategy the index's chunks were made by; :data:`~rag_lab.app.index.STRATEGY` when
    it records none. Raises :class:`~rag_lab.app.index.DamagedMeta` for an unknown one."""
    return held_strategy(store) or STRATEGY


def held_strategy(store: Store) -> str | None:
    """:func:`recorded_strategy`, or None for an index that holds no document and records
    no strategy (a new one: any strategy may fill it)."""
    held = store.meta(STRATEGY_KEY)
    if held is None:
        return STRATEGY if store.documents() else None
    if held not in STRATEGIES:
        raise DamagedMeta(STRATEGY_KEY, f"{held!r} is not one of A-F", store.meta("folder"))
    return held


# --- the cutoff ------------------------------------------------------------------------------


def stored_cutoff(store: Store) -> dict[str, Any] | None:
    """The cutoff record of the index (``{"cutoff": X, "source": ..., evidence}``), or None;
    raises :class:`~rag_lab.app.index.DamagedMeta` for one :func:`store_cutoff` does not write."""
    raw = store.meta(CUTOFF_KEY)
    if raw is None:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        record = None
    value = record.get("cutoff") if isinstance(record, dict) else None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or not 0 <= value <= 2:
        what = "not a JSON object with a cutoff from 0 to 2"
        raise DamagedMeta(CUTOFF_KEY, what, store.meta("folder"))
    return record


def store_cutoff(store: Store, cutoff: float, source: str, **evidence: Any) -> dict[str, Any]:
    """Record ``cutoff`` and its evidence in the open (writable) ``store``; the record."""
    record = {"cutoff": float(cutoff), "source": source, **evidence}
    store.set_meta(CUTOFF_KEY, json.dumps(record, allow_nan=False))
    return record


@dataclass(frozen=True)
class Cutoff:
    """The cutoff a run uses and where it came from."""

    value: float
    source: str
    """``given`` (``--cutoff``), ``stored`` (the index's) or ``default`` (the chapter's)."""
    record: dict[str, Any] | None = None
    """The index's record, when stored: how it was set."""

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source, "stored": self.record}

    def describe(self) -> str:
        if self.source == "stored" and self.record is not None:
            how = self.record.get("method", self.record.get("source"))
            when = f", {self.record['date']}" if "date" in self.record else ""
            return f"cutoff {self.value:g} (stored in the index: {how}{when})"
        return f"cutoff {self.value:g} ({self.source})"


def resolve_cutoff(given: float | None, store: Store) -> Cutoff:
    """``--cutoff`` when given, else the index's stored cutoff, else the chapter's."""
    if given is not None:
        return Cutoff(given, "given")
    record = stored_cutoff(store)
    if record is not None:
        return Cutoff(float(record["cutoff"]), "stored", record)
    return Cutoff(CUTOFF, "default")


# --- the retrievers --------------------------------------------------------------------------


@dataclass(frozen=True)
class Fused:
    """How a ranked retriever searches (``label``) and the chunks it ranks (``len``)."""

    label: str
    size: int

    def __len__(self) -> int:
        return self.size


@dataclass(frozen=True)
class RankedRetriever:
    """BM25 or hybrid over every indexed chunk, in memory, ranked as the lab ranks them."""

    base: StoredRetriever
    system: str
    """``BM25`` or ``hybrid``."""
    index: ChunkIndex
    keys: list[tuple[str, int]]

    @property
    def store(self) -> Store:
        return self.base.store

    @property
    def encoder(self) -> TextEncoder:
        return self.base.encoder

    @property
    def titles(self) -> dict[str, str]:
        return self.base.titles

    @property
    def size(self) -> int:
        return len(self.keys)

    @property
    def search(self) -> Fused:
        lexical = f"BM25 ({TOKENIZER} tokenizer) over every chunk's text"
        label = (
            lexical
            if self.system == "BM25"
            else f"RRF (k={RRF_K}) of dense (exact scan, every vector) and {lexical}"
        )
        return Fused(label, self.size)

    def ranked(self, question: str, k: int) -> tuple[list[Hit], float]:
        """The top ``k`` chunks of the ranking, and the dense nearest distance (the gate's)."""
        vector = self.encoder.encode([question])[0]
        distances = dense.cosine_distance_matrix(vector[None, :], self.index.vectors)[0]
        top = [int(i) for i in rank_one(self.index, question, distances)[self.system][:k]]
        chunks = self.store.chunks_at([self.keys[i] for i in top])
        paged = self.base.paged
        hits = [
            Hit(c, self.titles[c.doc_id], float(distances[i]), paged.get(c.doc_id))
            for c, i in zip(chunks, top, strict=True)
        ]
        return hits, float(distances.min())

    def nearest(self, question: str, k: int) -> list[Hit]:
        return self.ranked(question, k)[0]


def serving(
    store: Store, encoder: TextEncoder, kind: str, strategy: str
) -> StoredRetriever | RankedRetriever:
    """The retriever ``kind`` (:data:`RETRIEVERS`) over the index, which holds ``strategy``;
    refuses a stale or empty index as :func:`~rag_lab.app.index.retriever` does."""
    base = retriever(store, encoder, pipeline_version(strategy))
    if kind == "dense":
        return base
    ids = [r.id for r in store.documents() if r.status is Status.INDEXED]
    chunks, vectors = store.chunks(ids)
    index = ChunkIndex(chunks, np.ascontiguousarray(vectors), tokenizer=TOKENIZER)
    return RankedRetriever(base, SYSTEMS[kind], index, [(c.doc_id, c.index) for c in chunks])


# --- the corpus an index is measured against -------------------------------------------------


@dataclass(frozen=True)
class CorpusMatch:
    """An index's documents against a folder's files, by document id and sha256 of the bytes
    (as ``index`` would find them in the folder)."""

    documents: int
    """The index's documents (failed ones included: they record their bytes' sha256)."""
    same: int
    """Documents of the index whose file in the folder has the same bytes."""
    changed: int
    """In both, with other bytes (or a file that cannot be read now)."""
    only_index: int
    only_folder: int

    @property
    def differ(self) -> int:
        """Documents in one and not the other with the same bytes."""
        return self.changed + self.only_index + self.only_folder


def corpus_match(store: Store, folder: str | os.PathLike) -> CorpusMatch:
    """How the documents of ``store`` stand against the files of ``folder``: whether the
    folder is the one the index was built from, as it was then."""
    held = {r.id: r.sha256 for r in store.documents()}
    files: dict[str, str | None] = {}
    for source in discover(folder):
        try:
            files[source.id] = sha256_bytes(source.file.read_bytes())
        except OSError:  # the evaluation's own read of the corpus says why
            files[source.id] = None
    both = held.keys() & files.keys()
    same = sum(held[i] is not None and held[i] == files[i] for i in both)
    return CorpusMatch(
        len(held), same, len(both) - same, len(held.keys() - both), len(files.keys() - both)
    )


def contents(store: Store) -> dict[str, object]:
    """What a built index holds, as stamps: its documents (searchable, failed), their chunks,
    and a sha256 over every document's id, file digest, status and chunk count, so that two
    reports are said to have the same stamps only when their indexes hold the same."""
    records = sorted(store.documents(), key=lambda r: r.id)
    digest = hashlib.sha256()
    for r in records:
        digest.update(json.dumps([r.id, r.sha256, r.status.value, r.chunk_count]).encode())
        digest.update(b"\n")
    served = [r for r in records if r.status is not Status.FAILED]
    return {
        "index documents": len(served),
        "index failed": len(records) - len(served),
        "index chunks": sum(r.chunk_count or 0 for r in served),
        "index sha256": digest.hexdigest(),
    }
