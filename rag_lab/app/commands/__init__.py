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

Here, what they share: :class:`UsageError` and the encoder (:func:`encoder_for`).
"""

from __future__ import annotations

from rag_lab.errors import BadInput
from rag_lab.models.encoder import Encoder


class UsageError(BadInput, ValueError):
    """Arguments that parse but do not go together."""


def encoder_for(backend: str) -> Encoder:
    """The encoder for ``backend``; a missing ONNX Runtime is a usage error, not a crash."""
    try:
        return Encoder(backend=backend)
    except ImportError as err:
        raise UsageError(
            f"the {backend} backend needs {err.name or 'a package'} ({err}); reinstall "
            "rag_lab (pip install rag_lab: it is a base dependency), or choose another --backend"
        ) from None
