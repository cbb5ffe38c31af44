"""The body of each ``rag-lab`` subcommand: it takes the parsed arguments
(:mod:`rag_lab.app.arguments`), calls the application (:mod:`rag_lab.app.lifecycle` to open
or rebuild the index, :mod:`rag_lab.app.index`, :mod:`rag_lab.app.ingest`,
:mod:`rag_lab.pipeline`, :mod:`rag_lab.evaluation`), words the result
(:mod:`rag_lab.app.output`) and returns its exit status (:mod:`rag_lab.app.exits`).
:mod:`rag_lab.app.cli` dispatches to them and words their errors.

- :mod:`.indexing`: ``index`` (``--rebuild`` included) and ``retry``, which write the index.
- :mod:`.status`: ``status`` and ``status --check``.
- :mod:`.ask`: ``ask``.
- :mod:`.evaluate`: ``evaluate``, the one command that hands over to the evaluation library.
- :mod:`.questions`: ``questions check``, a question file against a corpus, no index.

Here, what they share: :class:`UsageError` and the encoder (:func:`encoder_for`,
:func:`index_encoder`).
"""

from __future__ import annotations

from importlib import metadata

from rag_lab.app.index import resolve_encoder
from rag_lab.app.store import Store
from rag_lab.errors import BadInput
from rag_lab.models import paraphrase_minilm
from rag_lab.models.encoder import DEFAULT_ENCODER, Encoder


class UsageError(BadInput, ValueError):
    """Arguments that parse but do not go together."""


EXTRAS = {"paraphrase-MiniLM-L3-v2": ("paraphrase", paraphrase_minilm.PACKAGE)}
"""An encoder that is not a base dependency: rag_lab's extra that installs it, and its package."""


def encoder_for(name: str, backend: str) -> Encoder:
    """The encoder ``name`` on ``backend``; a missing ONNX Runtime, or the missing package
    of an encoder's extra (:data:`EXTRAS`), is a usage error, not a crash. A library that is
    installed but cannot be mapped into memory (``ulimit -v``) is a :class:`MemoryError`."""
    if name in EXTRAS:
        extra, package = EXTRAS[name]
        try:
            metadata.distribution(package)
        except metadata.PackageNotFoundError:
            raise UsageError(
                f"--encoder {name} needs the package {package}, which is not installed: "
                f"pip install 'rag_lab[{extra}]', or choose another --encoder"
            ) from None
    try:
        if name == DEFAULT_ENCODER:  # Encoder's default: named only when it is another one
            return Encoder(backend=backend)
        return Encoder(name=name, backend=backend)
    except ImportError as err:
        if "failed to map segment" in str(err):  # dlopen's ENOMEM: installed, no memory
            raise MemoryError(f"loading {err.name}: {err}") from None
        raise UsageError(
            f"the {backend} backend needs {err.name or 'a package'} ({err}); reinstall "
            "rag_lab (pip install rag_lab: it is a base dependency), or choose another --backend"
        ) from None


def index_encoder(store: Store, name: str | None = None, backend: str | None = None) -> Encoder:
    """The encoder that embeds queries for the index ``store``: its own
    (:func:`~rag_lab.app.index.resolve_encoder`; ``name`` or ``backend`` asked for must be it)."""
    return encoder_for(*resolve_encoder(name, backend, store))
