"""What an index records of how it was built, beside its documents, in its ``meta``: the
encoder and its backend, chosen for every command by one rule (:func:`resolve_encoder`,
:func:`resolve_backend`), and the PDF options of its last ``index`` run.

An index's vectors are comparable with a query's only when the same encoder and backend made
both, so a command embeds with what the index records; asking for another is refused unless
the command rebuilds the index. A value this version does not write is a damaged index.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from rag_lab.app.store import Store
from rag_lab.errors import BadInput, UnusableIndex
from rag_lab.models.encoder import BACKENDS, DEFAULT_ENCODER, ENCODERS, ONLY_BACKEND
from rag_lab.models.encoder import DEFAULT_BACKEND as ENCODER_DEFAULT
from rag_lab.sources.folder import PdfOptions
from rag_lab.sources.pdf.extract import EXTRACTORS

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
