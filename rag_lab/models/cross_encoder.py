"""The cross-encoder of the second stage, loaded from where the user keeps it, never faked.

Nogueira & Cho (2019), *Passage Re-ranking with BERT*: a BERT that reads the query and one
passage together (``[CLS] q [SEP] p [SEP]``) scores each pair; :mod:`rag_lab.rerank`
reorders the first stage's top n by those scores.

The cross-encoder is ``cross-encoder/ms-marco-MiniLM-L-6-v2``, found by
``$RAG_LAB_RERANKER`` (a local folder) or by hub id in the Hugging Face cache. When
neither has it, :func:`load_reranker` raises :class:`RerankerUnavailable`; no other model
is ever put in its place. :func:`load_standin` builds a model of the same architecture
from the packaged MiniLM weights with an untrained head: it times like the real one, and
its scores mean nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rag_lab import paths
from rag_lab.errors import BadEnvironment
from rag_lab.models.minilm import minilm_fingerprint, minilm_path, sentence_transformers

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder

HUB_ID = "cross-encoder/ms-marco-MiniLM-L-6-v2"
ENV_VAR = "RAG_LAB_RERANKER"
BATCH_SIZE = 8
"""Pairs per forward pass. CrossEncoder sorts pairs by length, so batches of 8 pad little;
on 2 CPU threads one padded batch of all 25 was slower (``benchmarks/bench_rerank.py``)."""
STANDIN_MARKER = "RAG_LAB_STANDIN"
"""A file in the stand-in's folder: whoever loads that folder is told its scores are noise."""
STANDIN_LABEL = "stand-in (meaningless scores)"
_HEAD_SEED = 0


class RerankerUnavailable(BadEnvironment, RuntimeError):
    """The cross-encoder's weights are neither at ``$RAG_LAB_RERANKER`` nor in the HF cache."""


@dataclass(frozen=True)
class Reranker:
    """A loaded ``sentence_transformers.CrossEncoder`` and where it came from."""

    model: CrossEncoder
    source: str
    """The hub id or the folder it was loaded from."""
    standin: bool
    """True when the folder carries :data:`STANDIN_MARKER`: an untrained head."""

    @property
    def label(self) -> str:
        return STANDIN_LABEL if self.standin else HUB_ID.split("/")[-1]

    def score(self, query: str, texts: Sequence[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Raw logits for the pairs ``(query, text)``, float64, in ``texts`` order.

        The sigmoid that CrossEncoder may apply is switched off: it is monotone, so the
        order is the same, and logits do not saturate into ties.
        """
        if not texts:
            return np.zeros(0)
        pairs = [(query, t) for t in texts]
        scores = self.model.predict(
            pairs, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True
        )
        return np.asarray(scores, dtype=np.float64).reshape(len(texts))


def load_reranker(source: str | os.PathLike | None = None) -> Reranker:
    """The cross-encoder from ``source``, else ``$RAG_LAB_RERANKER``, else the hub id.

    A folder must hold ``config.json`` and the weights. A hub id is looked up with the
    ordinary ``CrossEncoder(hub_id)`` call: with ``HF_HUB_OFFLINE=1`` it reads the local
    cache and fails fast when the model is not there. Raises :class:`RerankerUnavailable`
    with the way to provide the weights; never falls back to another model.
    """
    source = str(source or os.environ.get(ENV_VAR) or HUB_ID)
    folder = None if source == HUB_ID else Path(source).expanduser()
    if folder is not None and not (folder / "config.json").is_file():
        raise RerankerUnavailable(f"{folder} holds no config.json. {_HOW_TO_PROVIDE}")
    try:
        model = _cross_encoder(source if folder is None else str(folder))
    except OSError as err:
        raise RerankerUnavailable(
            f"Cannot load the cross-encoder {source} ({_first_line(err)}). {_HOW_TO_PROVIDE}"
        ) from err
    standin = folder is not None and (folder / STANDIN_MARKER).is_file()
    return Reranker(model, source, standin)


def standin_path(root: Path | None = None) -> Path:
    """The stand-in's folder, built on first use (about 90 MB, a few seconds).

    The folder is keyed by the packaged model's fingerprint, so other weights are never
    reused under the same name.
    """
    folder = (root or paths.cache_dir() / "reranker-standin") / minilm_fingerprint().key
    if not (folder / STANDIN_MARKER).is_file():
        _build_standin(folder)
    return folder


def load_standin(root: Path | None = None) -> Reranker:
    """The stand-in cross-encoder: MiniLM-L6 with a fresh one-output head. For timing only."""
    return load_reranker(standin_path(root))


_HOW_TO_PROVIDE = (
    f"Set {ENV_VAR}=/path/to/ms-marco-MiniLM-L-6-v2 (a folder with config.json and weights), "
    f"or put {HUB_ID} in the Hugging Face cache."
)

_STANDIN_NOTE = """\
This is NOT cross-encoder/ms-marco-MiniLM-L-6-v2.

It is the packaged all-MiniLM-L6-v2 encoder (the same 6-layer, 384-wide BERT) with a
freshly initialised one-output classification head (normal(0, 0.02), seed {seed}).
It has the architecture, and so the latency, of the real reranker; its scores are
meaningless. rag_lab labels it "{label}" wherever it appears.
"""


def _cross_encoder(name_or_path: str):
    CrossEncoder = sentence_transformers().CrossEncoder  # first: it imports tqdm quietly
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()  # the load report would list the head as "missing"
    return CrossEncoder(name_or_path, device="cpu", activation_fn=torch.nn.Identity())


def _build_standin(folder: Path) -> None:
    sentence_transformers()  # imports tqdm quietly before transformers does
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    model = BertForSequenceClassification.from_pretrained(str(minilm_path()), num_labels=1)
    # The head is drawn here from its own generator, so the stand-in is the same on every
    # machine whatever transformers does with the global seed.
    generator = torch.Generator().manual_seed(_HEAD_SEED)
    with torch.no_grad():
        model.classifier.weight.normal_(0.0, 0.02, generator=generator)
        model.classifier.bias.zero_()
    # Built in a folder of this process's own (two processes may build it at once: a
    # notebook and a test), then renamed into place; the marker goes in last, so a
    # half-written stand-in is never taken for a finished one.
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=folder.name + ".partial-", dir=folder.parent))
    try:
        model.save_pretrained(partial)
        AutoTokenizer.from_pretrained(str(minilm_path())).save_pretrained(partial)
        note = _STANDIN_NOTE.format(seed=_HEAD_SEED, label=STANDIN_LABEL)
        (partial / STANDIN_MARKER).write_text(note, encoding="utf-8")
        if (folder / STANDIN_MARKER).is_file():
            return  # another process finished first: the same weights (the head is seeded)
        shutil.rmtree(folder, ignore_errors=True)  # a folder without its marker
        try:
            partial.rename(folder)
        except OSError:
            if not (folder / STANDIN_MARKER).is_file():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _first_line(err: BaseException) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
