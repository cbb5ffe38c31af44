"""Second-stage scoring: rerank the top n of a first-stage ranking with a cross-encoder.

Nogueira & Cho (2019), *Passage Re-ranking with BERT*: a cheap retriever proposes a short
list, and a BERT that reads the query and one passage together (``[CLS] q [SEP] p [SEP]``)
scores each pair. Only the top :data:`TOP_N` are reordered; everything below keeps its
first-stage order, so a first hit beyond rank n stays exactly where it was and Recall@k
for k > n does not change. Ties in the new scores fall back to first-stage order.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rag_lab import paths
from rag_lab.metrics import first_hit_ranks
from rag_lab.models import minilm_fingerprint, minilm_path
from rag_lab.questions import Query
from rag_lab.ranking import order
from rag_lab.retrieval import Index, Latency, Rankings, relevant_chunks, time_per_call

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder

HUB_ID = "cross-encoder/ms-marco-MiniLM-L-6-v2"
ENV_VAR = "RAG_LAB_RERANKER"
TOP_N = 25
BATCH_SIZE = 8
"""Pairs per forward pass. CrossEncoder sorts pairs by length, so batches of 8 pad little;
on 2 CPU threads one padded batch of all 25 was slower (``benchmarks/bench_rerank.py``)."""
STANDIN_MARKER = "RAG_LAB_STANDIN"
"""A file in the stand-in's folder: whoever loads that folder is told its scores are noise."""
STANDIN_LABEL = "stand-in (meaningless scores)"
_HEAD_SEED = 0

Scorer = Callable[[str, Sequence[str]], np.ndarray]
"""``(query, texts) -> scores``, one float per text, higher is better."""


class RerankerUnavailable(RuntimeError):
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


def rerank(ranking: Sequence[int], scores: Sequence[float], n: int = TOP_N) -> np.ndarray:
    """Reorder the first ``n`` ids of ``ranking`` by ``scores``; the rest keep their place.

    ``scores[i]`` belongs to ``ranking[i]`` for ``i < min(n, len(ranking))``. Higher scores
    come first; equal scores keep first-stage order (:func:`rag_lab.ranking.order`). A
    ranking shorter than ``n`` is reordered whole.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ranking = np.asarray(ranking, dtype=np.int64)
    top = ranking[:n]
    if len(scores) != len(top):
        raise ValueError(f"{len(scores)} scores for {len(top)} candidates")
    return np.concatenate([top[order(np.asarray(scores, dtype=np.float64))], ranking[n:]])


def top_texts(
    rankings: Sequence[Sequence[int]], texts: Sequence[str], n: int = TOP_N
) -> list[list[str]]:
    """The ``texts`` of each ranking's first ``n`` positions: the candidates of a second stage."""
    return [[texts[i] for i in ranking[:n]] for ranking in rankings]


def rerank_all(
    rankings: Sequence[Sequence[int]],
    queries: Sequence[Query],
    texts: Sequence[str],
    score: Scorer,
    n: int = TOP_N,
) -> list[np.ndarray]:
    """:func:`rerank` every query's ranking, scoring its top ``n`` chunk ``texts`` with ``score``.

    ``rankings[i]`` holds positions into ``texts`` for ``queries[i]``.
    """
    candidates = top_texts(rankings, texts, n)
    return [
        rerank(ranking, score(query.text, c), n)
        for ranking, query, c in zip(rankings, queries, candidates, strict=True)
    ]


def second_stage(
    index: Index,
    rankings: Rankings,
    scorers: Mapping[str, Scorer],
    n: int = TOP_N,
    base: str = "hybrid",
) -> dict[str, list[int | None]]:
    """First-hit ranks of the ``base`` system and of its top ``n`` reranked by each scorer.

    The keys are ``base`` and then the names of ``scorers``; chunks are scored on ``text``.
    """
    texts = [c.text for c in index.chunks]
    relevant = relevant_chunks(index.chunks, rankings.queries)
    first = rankings.by_system[base]
    out = {base: first_hit_ranks(first, relevant)}
    for name, score in scorers.items():
        reranked = rerank_all(first, rankings.queries, texts, score, n)
        out[name] = first_hit_ranks(reranked, relevant)
    return out


def latency(
    reranker: Reranker,
    queries: Sequence[Query],
    candidates: Sequence[Sequence[str]],
    repeats: int = 3,
) -> Latency:
    """Per query: one :meth:`Reranker.score` call on its candidates, in ms (best of ``repeats``)."""
    n = max(len(c) for c in candidates)
    return time_per_call(
        f"cross-encoder × {n} pairs, {reranker.label}",
        lambda i: reranker.score(queries[i].text, candidates[i]),
        range(len(queries)),
        repeats=repeats,
    )


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
    import torch
    from sentence_transformers import CrossEncoder
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()  # the load report would list the head as "missing"
    return CrossEncoder(name_or_path, device="cpu", activation_fn=torch.nn.Identity())


def _build_standin(folder: Path) -> None:
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
    partial = folder.with_name(folder.name + ".partial")
    for leftover in (partial, folder):  # an interrupted build, or a folder without its marker
        shutil.rmtree(leftover, ignore_errors=True)
    model.save_pretrained(partial)
    AutoTokenizer.from_pretrained(str(minilm_path())).save_pretrained(partial)
    # The marker goes in last and the folder is renamed into place, so a half-written
    # stand-in is never taken for a finished one.
    note = _STANDIN_NOTE.format(seed=_HEAD_SEED, label=STANDIN_LABEL)
    (partial / STANDIN_MARKER).write_text(note, encoding="utf-8")
    partial.replace(folder)


def _first_line(err: BaseException) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
