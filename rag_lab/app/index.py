"""A persistent index stamped by what built it, and the one way to search it.

Vectors from two models, or from two chunkings, are not comparable: a distance between
them is a number with no meaning, and a half-migrated index returns confident nonsense.
So every document records the :class:`~rag_lab.app.store.Stamp` of its vectors, and
:func:`retriever` refuses to search when any document's stamp differs from the stamp
the query would be embedded with: it names the stale documents and says how to rebuild.
The encoder (one of :data:`~rag_lab.models.encoder.ENCODERS`) and its backend (torch, ONNX
fp32 or int8: different fingerprints, so different stamps) are recorded in the index's
``meta``, so that a query is embedded by the encoder that built the index; one rule chooses
them for every command (:func:`resolve_encoder`, :func:`resolve_backend`).

Failed documents hold no vectors and never block a search; :func:`status` lists them with
their reasons. Storage is behind :class:`~rag_lab.app.store.Store`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab import dense
from rag_lab.app.store import (
    BUSY_SECONDS,
    DocumentRecord,
    MilvusLocation,
    MilvusStore,
    Pages,
    SQLiteStore,
    Stamp,
    Status,
    Store,
)
from rag_lab.chunking import OVERLAP, TARGET
from rag_lab.citations import Hit, Paged
from rag_lab.environ import lock_seconds
from rag_lab.errors import BadInput, UnusableIndex
from rag_lab.models.encoder import BACKENDS, DEFAULT_ENCODER, ENCODERS, ONLY_BACKEND
from rag_lab.models.encoder import DEFAULT_BACKEND as ENCODER_DEFAULT
from rag_lab.models.minilm import Fingerprint
from rag_lab.search import TextEncoder
from rag_lab.sources.folder import READER_VERSION, PdfOptions
from rag_lab.sources.pdf.extract import EXTRACTORS

STRATEGY = "E"
"""Chunking of the persistent index: boundaries + header, the chapter's best."""
PIPELINE_VERSION = f"chunk={STRATEGY}/{TARGET}/{OVERLAP};embed=minilm;v1"
"""Bump the trailing ``v1`` whenever chunking or embedding changes what a text's vector is."""
DEFAULT_PATH = Path(".rag_lab") / "index.sqlite"
INDEX_ENV = "RAG_LAB_INDEX"
LISTED = 10
"""Stale documents named in a refusal before "… and N more"."""
DEFAULT_BACKEND = ENCODER_DEFAULT
"""The backend of a new index: the lab's (ONNX fp32, torch's vectors to float32 rounding, so
the chapter's cutoff means what it measured). ``--backend onnx-int8`` is faster, but moves
distances by up to about 0.05, enough to flip a chunk near the cutoff."""
LEGACY_BACKEND = "torch"
"""The backend of an index that records none and whose stamps match no backend here."""
BACKEND_KEY = "backend"
"""The ``meta`` key that records the backend the index's vectors were embedded with."""
ENCODER_KEY = "encoder"
"""The ``meta`` key that records the encoder (one of :data:`ENCODERS`) of the index's vectors."""
PDF_OPTIONS_KEY = "pdf_options"
"""The ``meta`` key holding the :class:`~rag_lab.sources.folder.PdfOptions` of the last
``index`` run, as JSON, so that ``retry`` reads the failed PDFs as that run did."""


class EmptyIndexError(UnusableIndex, RuntimeError):
    """No document is indexed (the command line says what to run)."""


class StaleIndexError(UnusableIndex, RuntimeError):
    """Some documents were embedded with another stamp than the query would be."""

    def __init__(
        self, stale: Sequence[DocumentRecord], current: Stamp, total: int, folder: str | None
    ) -> None:
        self.stale = list(stale)
        names = ", ".join(r.id for r in self.stale[:LISTED])
        if len(self.stale) > LISTED:
            names += f" … and {len(self.stale) - LISTED} more (rag-lab status lists them)"
        changes = sorted({d for r in self.stale if r.stamp for d in r.stamp.differences(current)})
        verb = "is" if len(self.stale) == 1 else "are"
        super().__init__(
            f"refusing to search: {len(self.stale)} of {total} documents {verb} stale, embedded "
            f"with another stamp than this query ({'; '.join(changes)}), and vectors of "
            f"different stamps are not comparable. Stale: {names}. "
            f"Rebuild them: rag-lab index {folder or 'DIR'} --rebuild"
        )


class UnknownBackend(UnusableIndex, RuntimeError):
    """The index records an encoder backend this version does not know."""

    key, what, known = BACKEND_KEY, "encoder backend", BACKENDS
    """The ``meta`` key, its words, and the values this version knows."""

    def __init__(self, backend: str, folder: str | None) -> None:
        super().__init__(
            f"the index records the {self.what} {backend!r}, which this rag_lab does not "
            f"know (it knows {', '.join(self.known)})"
        )
        self.backend, self.folder = backend, folder


class UnknownEncoder(UnknownBackend):
    """The index records an encoder this version does not know (``backend`` holds it)."""

    key, what, known = ENCODER_KEY, "encoder", ENCODERS


class BackendMismatch(BadInput, ValueError):
    """A backend was asked for that differs from the one the index's vectors were made by."""

    option, what, kinds = "backend", "encoder backend", "backends"
    """What differs: its ``meta`` key (and option), its words, and their plural."""

    def __init__(self, held: str, requested: str, folder: str | None) -> None:
        super().__init__(
            f"the index was built with the {held} {self.what}, not {requested}: vectors "
            f"of two {self.kinds} are not comparable"
        )
        self.held, self.requested, self.folder = held, requested, folder


class EncoderMismatch(BackendMismatch):
    """An encoder was asked for that differs from the one the index's vectors were made by."""

    option, what, kinds = "encoder", "encoder", "encoders"


class OneBackend(BadInput, ValueError):
    """Another backend than the one an encoder of :data:`ONLY_BACKEND` runs on."""

    why = "runs on sentence-transformers (torch) only"

    def __init__(self, encoder: str, backend: str) -> None:
        only = ONLY_BACKEND[encoder]
        super().__init__(f"{encoder} {self.why}: its backend is {only}, not {backend}")
        self.encoder, self.backend = encoder, backend


class OnnxOnly(OneBackend):
    """Another backend than ``onnx`` for an encoder that ships as one ONNX graph."""

    why = "ships as one ONNX graph"


class DamagedMeta(UnusableIndex, ValueError):
    """A value of the index's ``meta`` that is not one this version writes (``key``, and
    ``what`` is wrong with it); ``folder`` is the folder the index holds, if it says."""

    def __init__(self, key: str, what: str, folder: str | None) -> None:
        super().__init__(f"the index's recorded {key} is damaged ({what})")
        self.key, self.what, self.folder = key, what, folder


def default_path() -> Path:
    """``$RAG_LAB_INDEX``, else ``.rag_lab/index.sqlite`` under the current directory."""
    return Path(os.environ.get(INDEX_ENV) or DEFAULT_PATH)


Location = Path | MilvusLocation
"""Where an index lives: a SQLite file, or an index name on Milvus (Lite or a server)."""


def open_index(where: Location | str | None = None, *, readonly: bool = False) -> Store:
    """The index at ``where`` (default :func:`default_path`), created if missing: a SQLite
    file, or a :class:`~rag_lab.app.store.MilvusLocation` (Milvus Lite or a server).

    ``readonly``: opened read-only and never created (for status and queries).
    """
    if isinstance(where, MilvusLocation):
        return MilvusStore(where, readonly=readonly, wait=lock_seconds(BUSY_SECONDS))
    return SQLiteStore(Path(where) if where is not None else default_path(), readonly=readonly)


def current_stamp(fingerprint: Fingerprint, pipeline_version: str = PIPELINE_VERSION) -> Stamp:
    """The stamp that vectors made now, by this model and pipeline, carry."""
    fp = fingerprint
    return Stamp(fp.name, fp.key, fp.dimensions, pipeline_version, READER_VERSION)


def is_stale(record: DocumentRecord, current: Stamp) -> bool:
    """Does ``record`` hold vectors that were not made with ``current``?

    The stamp decides, not the stored status: that is the view of whoever indexed last,
    and the code asking may run another model or pipeline version.
    """
    return record.status is not Status.FAILED and record.stamp != current


def retriever(
    store: Store, encoder: TextEncoder, pipeline_version: str = PIPELINE_VERSION
) -> StoredRetriever:
    """Dense retrieval over every indexed document; refuses a stale or empty index.

    Reads the vectors once, in one query, and a hit's text only when it is returned, so
    the store must stay open while the retriever is used. Raises :class:`StaleIndexError`
    if any document's stamp differs from the encoder's and ``pipeline_version``;
    :class:`EmptyIndexError` if nothing is indexed.
    """
    current = current_stamp(encoder.fingerprint, pipeline_version)
    records = store.documents()
    stale = [r for r in records if is_stale(r, current)]
    if stale:
        raise StaleIndexError(stale, current, len(records), store.meta("folder"))
    ids = [r.id for r in records if r.status is Status.INDEXED]
    if not ids:
        raise EmptyIndexError("nothing is indexed yet")
    search = store.engine_search(ids)
    if search is None:  # the store has no vector search of its own: scan every vector
        search = ExactScan(*store.vectors(ids))
    titles = {r.id: r.title for r in records}
    paged = {r.id: paged_of(r.path, r.pages) for r in records if r.pages is not None}
    return StoredRetriever(store, search, encoder, titles, paged)


@dataclass(frozen=True)
class ExactScan:
    """Every vector in memory, scanned exactly (:func:`rag_lab.dense.nearest`): how a SQLite
    index is searched, and what the chapter measured."""

    keys: list[tuple[str, int]]
    """``(document id, position)`` of each row of :attr:`vectors`."""
    vectors: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)

    label = "exact scan (every vector, float32)"

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[tuple[str, int], float]]:
        return [(self.keys[i], d) for i, d in dense.nearest(vector, self.vectors, k)]


def paged_of(path: str, pages: Pages) -> Paged:
    """How a PDF's chunks are cited: its file, page starts, and its flagged OCR pages."""
    doubtful = []
    for n in pages.flagged:
        c = pages.confidences[n - 1]
        why = f"OCR mean word confidence {c:.0f}, under {pages.min_confidence:g}"
        doubtful.append((n, "OCR found no words" if math.isnan(c) else why))
    return Paged(path, pages.starts, tuple(doubtful))


@dataclass(frozen=True)
class StoredRetriever:
    """Cosine search over an index's vectors; the texts of the hits are read from the store.

    Ranks as :class:`~rag_lab.search.DenseRetriever` does (ties in document id, then
    position order), without holding every chunk's text in memory. ``search`` is an
    :class:`ExactScan` for SQLite, the engine's own (approximate) search for Milvus.
    """

    store: Store
    search: ExactScan | Any
    """Has ``nearest(vector, k)`` → ``[((document id, position), distance)]`` and ``len()``."""
    encoder: TextEncoder
    titles: dict[str, str]
    """Document id → document name, for citations."""
    paged: dict[str, Paged] = field(default_factory=dict)
    """Document id → its pages, for PDFs (their citations name the file and the page)."""

    @property
    def size(self) -> int:
        """The chunks searched."""
        return len(self.search)

    def nearest(self, question: str, k: int) -> list[Hit]:
        top = self.search.nearest(self.encoder.encode([question])[0], k)
        chunks = self.store.chunks_at([key for key, _ in top])
        return [
            Hit(c, self.titles[c.doc_id], d, self.paged.get(c.doc_id))
            for c, (_, d) in zip(chunks, top, strict=True)
        ]


def record_pdf_options(store: Store, options: PdfOptions) -> None:
    """Record how this run reads PDFs (:data:`PDF_OPTIONS_KEY`)."""
    store.set_meta(PDF_OPTIONS_KEY, json.dumps(dataclasses.asdict(options)))


def recorded_pdf_options(store: Store) -> PdfOptions:
    """How the last ``index`` run read PDFs: the defaults when it recorded none; raises
    :class:`DamagedMeta` for a value that :func:`record_pdf_options` does not write."""
    raw = store.meta(PDF_OPTIONS_KEY)
    if raw is None:
        return PdfOptions()

    def damaged(what: str) -> DamagedMeta:
        return DamagedMeta(PDF_OPTIONS_KEY, what, store.meta("folder"))

    try:
        values = json.loads(raw)
    except ValueError as err:
        raise damaged(f"not JSON: {' '.join(str(err).split())}") from None
    if not isinstance(values, dict):
        raise damaged(f"a JSON {type(values).__name__}, not an object")
    defaults = dataclasses.asdict(PdfOptions())
    for key in values.keys() - defaults.keys():
        raise damaged(f"{key!r} is not an option")
    for key, value in values.items():
        default = defaults[key]
        kind = type(value) is type(default) or (type(default) is float and type(value) is int)
        if not kind:
            raise damaged(f"{key}: {value!r} is not a {type(default).__name__}")
    if values.get("extractor", PdfOptions.extractor) not in EXTRACTORS:
        raise damaged(f"extractor: {values['extractor']!r} is not one of {', '.join(EXTRACTORS)}")
    if not 0 <= values.get("ocr_min_confidence", PdfOptions.ocr_min_confidence) <= 100:
        raise damaged(f"ocr_min_confidence: {values['ocr_min_confidence']!r} is not 0 to 100")
    return PdfOptions(**values)


def recorded_backend(store: Store) -> str | None:
    """The encoder backend the index was built with (None: no vectors yet); for an index from
    before backends were recorded, the one its stamps carry (:func:`stamped_backend`)."""
    return _recorded(store, UnknownBackend, stamped_backend)


def recorded_encoder(store: Store) -> str | None:
    """The encoder the index was built with (None: no vectors yet); for an index from before
    encoders were recorded, all-MiniLM-L6-v2 (the only one then)."""
    return _recorded(store, UnknownEncoder, lambda _: DEFAULT_ENCODER)


def _recorded(
    store: Store, unknown: type[UnknownBackend], legacy: Callable[[set[str]], str]
) -> str | None:
    """``meta[unknown.key]``, one of ``unknown.known`` (else raises ``unknown``); when the index
    records none, ``legacy`` of its stamps' model keys (None if it has no stamp)."""
    held = store.meta(unknown.key)
    if held is None:
        keys = {r.stamp.model_key for r in store.documents() if r.stamp is not None}
        return legacy(keys) if keys else None
    if held not in unknown.known:
        raise unknown(held, store.meta("folder"))
    return held


def resolve_backend(requested: str | None, store: Store | None, *, rebuild: bool = False) -> str:
    """The encoder backend of a run on ``store``, by one rule for every command: ``requested``
    (``--backend``), else the index's (:func:`recorded_backend`), else :data:`DEFAULT_BACKEND`.

    One that differs from the index's raises :class:`BackendMismatch` (what it embeds would not
    be comparable with the vectors held), and one the index records that this version does not
    know, :class:`UnknownBackend`; unless ``rebuild``, which re-embeds every document.
    """
    return _chosen(requested, store, rebuild, recorded_backend, BackendMismatch) or DEFAULT_BACKEND


def resolve_encoder(
    requested: str | None, backend: str | None, store: Store | None, *, rebuild: bool = False
) -> tuple[str, str]:
    """The encoder and its backend of a run on ``store``: the encoder by
    :func:`resolve_backend`'s rule (``requested``, else :func:`recorded_encoder`, else
    :data:`DEFAULT_ENCODER`; :class:`EncoderMismatch`, :class:`UnknownEncoder`); its backend
    the one an encoder of :data:`ONLY_BACKEND` runs on (another ``backend`` raises
    :class:`OneBackend`), else :func:`resolve_backend`'s."""
    chosen = _chosen(requested, store, rebuild, recorded_encoder, EncoderMismatch)
    encoder = chosen or DEFAULT_ENCODER
    only = ONLY_BACKEND.get(encoder)
    if only is None:
        return encoder, resolve_backend(backend, store, rebuild=rebuild)
    if backend not in (None, only):
        raise (OnnxOnly if only == "onnx" else OneBackend)(encoder, backend)
    return encoder, only


def _chosen(
    requested: str | None,
    store: Store | None,
    rebuild: bool,
    recorded: Callable[[Store], str | None],
    mismatch: type[BackendMismatch],
) -> str | None:
    """``requested``, else what ``store`` records (``recorded``), else None; see
    :func:`resolve_backend` for what raises, and what ``rebuild`` allows."""
    try:
        held = recorded(store) if store is not None else None
    except UnknownBackend:  # and UnknownEncoder
        if not rebuild:
            raise
        held = None
    if requested is not None and held is not None and requested != held and not rebuild:
        raise mismatch(held, requested, store.meta("folder"))
    return requested or held


def stamped_backend(keys: set[str]) -> str:
    """The backend whose fingerprint key is among ``keys`` (torch first, then exported graphs);
    :data:`LEGACY_BACKEND` when none is: the index is then stale, and the stale check says so."""
    from rag_lab.models.minilm import minilm_fingerprint
    from rag_lab.models.onnx_minilm import ONNX_BACKENDS, exported_fingerprint

    if minilm_fingerprint().key in keys:
        return "torch"
    for backend in ONNX_BACKENDS:
        fingerprint = exported_fingerprint(backend)
        if fingerprint is not None and fingerprint.key in keys:
            return backend
    return LEGACY_BACKEND


@dataclass(frozen=True)
class IndexStatus:
    """What the index holds, seen with the stamp of the code asking."""

    counts: dict[str, int]
    """Documents per status (``indexed``, ``failed``, ``stale``), all three present."""
    chunks: int
    """Chunks of the indexed (searchable) documents, as the indexer recorded them."""
    failed: list[DocumentRecord]
    stale: list[DocumentRecord]
    stamps: dict[Stamp, int]
    """Documents per stamp, failed documents (which have none) left out."""
    current: Stamp
    folder: str | None
    flagged: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Path of an OCRed PDF → its pages under the confidence threshold."""
    pdfs: int = 0
    """Indexed PDF documents."""
    running_lines: int = 0
    """Running header and footer lines removed from them."""


def status(store: Store, current: Stamp) -> IndexStatus:
    """Counts by status, failures, stale documents and stamps; a stamp mismatch counts as stale."""
    records = store.documents()
    stale = [r for r in records if is_stale(r, current)]
    failed = [r for r in records if r.status is Status.FAILED]
    indexed = [r for r in records if r.status is not Status.FAILED and not is_stale(r, current)]
    counts = {
        Status.INDEXED.value: len(indexed),
        Status.FAILED.value: len(failed),
        Status.STALE.value: len(stale),
    }
    stamps = Counter(r.stamp for r in records if r.stamp is not None)
    return IndexStatus(
        counts=counts,
        chunks=sum(r.chunk_count or 0 for r in indexed),
        failed=failed,
        stale=stale,
        stamps=dict(sorted(stamps.items(), key=lambda kv: (-kv[1], str(kv[0])))),
        current=current,
        folder=store.meta("folder"),
        flagged={r.path: r.pages.flagged for r in indexed if r.pages and r.pages.flagged},
        pdfs=sum(r.pages is not None for r in indexed),
        running_lines=sum(r.pages.running_lines_removed for r in indexed if r.pages),
    )


WIDTH = 100
"""The width :func:`describe` keeps to: a terminal's, and a notebook's page."""


def describe(st: IndexStatus, where: str = "") -> str:
    """:func:`status` as lines of text: counts, each failure with its reason, the stamps;
    each line fits :data:`WIDTH` characters for the usual names (a stamp takes two).
    ``where``: what the rebuild command adds to act on this index (`` --store URI``)."""
    total = sum(st.counts.values())
    lines = [
        f"{total} documents: "
        + ", ".join(f"{n} {name}" for name, n in st.counts.items())
        + f"; {st.chunks} chunks searchable"
    ]
    if st.failed:
        lines.append("failed (rag-lab retry re-attempts them):")
        lines += [f"  {r.path}: {r.reason}" for r in st.failed]
    if st.stale:
        lines.append(
            f"stale: {len(st.stale)} documents embedded with another stamp; queries are refused "
            "until they are rebuilt:"
        )
        lines.append(f"  rag-lab index {st.folder or 'DIR'} --rebuild{where}")
        lines += [f"  {r.path}" for r in st.stale]
    if st.pdfs:
        lines.append(
            f"{st.pdfs} PDF{'s' * (st.pdfs != 1)}, {st.running_lines} running header and "
            "footer lines removed"
        )
        lines.append("  (rag-lab index --keep-running-lines keeps them)")
    if st.flagged:
        lines.append(
            "OCR pages of low confidence (their text may be wrong; their citations are marked):"
        )
        lines += [f"  {path}: {pages_label(pages)}" for path, pages in st.flagged.items()]
    lines.append("stamps:")
    for stamp, n in st.stamps.items():
        mark = " (current)" if stamp == st.current else ""
        lines += _stamp_lines(f"  {n} × ", stamp, mark)
    if st.current not in st.stamps:
        lines += _stamp_lines("  current: ", st.current, "")
    return "\n".join(lines)


def _stamp_lines(head: str, stamp: Stamp, mark: str) -> list[str]:
    """A stamp in two lines: the model, then the pipeline and reader, under the same indent."""
    return [
        f"{head}{stamp.model_name} (fingerprint {stamp.model_key}, {stamp.dimensions} dims)",
        f"{' ' * len(head)}pipeline {stamp.pipeline_version}, reader {stamp.reader_version}{mark}",
    ]


def _pages_sound(pages: Pages) -> bool:
    """Page starts from 0, increasing; OCR confidences, if any, one per page."""
    s = pages.starts
    ordered = bool(s) and s[0] == 0 and all(a < b for a, b in itertools.pairwise(s))
    return ordered and len(pages.confidences) in (0, len(s))


def pages_label(pages: Sequence[int]) -> str:
    """``p. 3`` or ``pp. 2, 5``."""
    return ("p. " if len(pages) == 1 else "pp. ") + ", ".join(map(str, pages))


def check(store: Store) -> list[str]:
    """Every problem of the index file, one line each; empty when it is sound.

    The store's integrity check first (when it fails, the tables cannot be trusted); then
    the ``meta`` values, each document's chunk count, vector dimensions and page starts
    against what it records, and chunks of no document.
    """
    problems = [f"{store.engine} integrity check: {line}" for line in store.integrity()]
    if problems:
        return problems
    for key, read in (
        (BACKEND_KEY, recorded_backend),
        (ENCODER_KEY, recorded_encoder),
        (PDF_OPTIONS_KEY, recorded_pdf_options),
    ):
        try:
            read(store)
        except UnknownBackend as err:
            problems.append(f"meta {key}: {err}")
        except DamagedMeta as err:
            problems.append(f"meta {key}: {err.what}")
    stats = store.chunk_stats()
    records = {r.id: r for r in store.documents()}
    for r in records.values():
        n, sizes = stats.get(r.id, (0, set()))
        if r.status is Status.FAILED:
            if n:
                problems.append(f"{r.id}: failed, yet {n} chunks are stored")
            continue
        if r.stamp is None:
            problems.append(f"{r.id}: {r.status.value} without a stamp")
            continue
        if r.chunk_count != n:
            problems.append(f"{r.id}: {r.chunk_count} chunks recorded, {n} stored")
        if r.pages is not None and not _pages_sound(r.pages):
            problems.append(
                f"{r.id}: its page starts {list(r.pages.starts)[:5]}… do not start at 0 and "
                "increase, or its OCR confidences are not one per page"
            )
        wrong = sorted(size // 4 for size in sizes if size != 4 * r.stamp.dimensions)
        if wrong:
            dims, said = ", ".join(map(str, wrong)), r.stamp.dimensions
            problems.append(f"{r.id}: vectors of {dims} dimensions, its stamp says {said}")
    for doc_id in sorted(stats.keys() - records.keys()):
        problems.append(f"{doc_id}: {stats[doc_id][0]} chunks of a document not in the index")
    return problems
