"""One setup call for every notebook: the lab's corpus, its questions, the encoder."""

from __future__ import annotations

import os

import pandas as pd

from rag_lab import paths
from rag_lab.evaluation.lab import Lab
from rag_lab.questions import CHAPTER_DESIGN, load_questions
from rag_lab.search import TextEncoder
from rag_lab.sources.d2l import load_corpus


def setup(
    corpus_dir: str | os.PathLike | None = None,
    questions_path: str | os.PathLike | None = None,
    *,
    encoder: TextEncoder | None = None,
) -> Lab:
    """The lab's verified corpus (:func:`rag_lab.sources.d2l.load_corpus`), its questions
    (``data/questions.yaml`` by default) checked against the chapter's design, the packaged
    encoder and the six chunkings; notebook tables as wide as a row of Recall@k intervals."""
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", 120)
    docs = load_corpus(corpus_dir)
    qset = load_questions(questions_path or paths.QUESTIONS, docs, CHAPTER_DESIGN)
    if encoder is None:
        from rag_lab.models.encoder import Encoder

        encoder = Encoder()
    return Lab.of(docs, qset, encoder)
