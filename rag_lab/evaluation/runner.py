"""Running ``rag-lab evaluate``: the suites on a corpus and its questions, as an evaluation.

:func:`evaluate` runs the suites on a corpus with needle questions (chunking, dense retrieval
over the six chunkings, dense / BM25 / hybrid on strategy E, the refusal gate when there are
negatives, a cutoff calibrated on unanswerable twins whether or not there are);
:func:`evaluate_spans` runs the span suite on questions answered by excerpts (Chroma's format);
:func:`evaluate_index` asks the question file of a built index. Each returns an
:class:`~rag_lab.evaluation.report.Evaluation`: the records, and where they came from.
:func:`run` loads the corpus and the question file, evaluates and writes the report
(:func:`rag_lab.evaluation.report.write`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_lab import gate
from rag_lab.documents import Document
from rag_lab.evaluation import chunking as chunking_suite
from rag_lab.evaluation import deploy, power, spans
from rag_lab.evaluation import refusal as refusal_suite
from rag_lab.evaluation import retrieval as retrieval_suite
from rag_lab.evaluation import served as served_suite
from rag_lab.evaluation import trec as trec_files
from rag_lab.evaluation import twins as twins_suite
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.report import Evaluation, Written, write
from rag_lab.evaluation.sections import GateSkipped
from rag_lab.progress import bar
from rag_lab.questions import QuestionSet
from rag_lab.search import TextEncoder
from rag_lab.spans import SpanQuestion

GATE_STRATEGY = "E"
"""The chunking the systems and the gate are measured on: the application's."""

NO_GATE = GateSkipped(
    "no negatives in the question file, so the refusal gate (notebook 06) was not measured: "
    "add questions the corpus cannot answer under negatives to measure it"
)
TOO_FEW_FOR_TWINS = GateSkipped(
    "fewer than 2 questions, so no cutoff was calibrated on unanswerable twins: it is chosen "
    "on one half of the questions and scored on the other",
    "twins",
    "A cutoff calibrated on unanswerable twins, strategy E (notebook 06)",
)


def evaluate(
    docs: Sequence[Document],
    qset: QuestionSet,
    encoder: TextEncoder,
    *,
    title: str = "corpus",
    tokenizer: str = "ascii",
    progress: bool | None = None,
    strategy: str = GATE_STRATEGY,
    cutoff: float = gate.CUTOFF,
    questions_file: str | os.PathLike | None = None,
    trec: str | os.PathLike | None = None,
) -> Evaluation:
    """Chunking, dense retrieval, dense / BM25 / hybrid on E, the gate if there are
    negatives, the twin-calibrated cutoff (:mod:`rag_lab.evaluation.twins`), which needs
    none, the deployed configuration (dense on ``strategy``, the gate at ``cutoff``) per
    query, and the power of the question file. ``tokenizer`` is BM25's (the chapter's
    ``"ascii"``, or ``"unicode"``); ``questions_file`` is hashed into the stamps. With
    ``trec``, the rankings scored are also written there as TREC runs and qrels
    (:func:`rag_lab.evaluation.trec.write`)."""
    lab = Lab.of(docs, qset, encoder, tokenizer=tokenizer)
    with bar(4, "evaluate", "stage", show=progress) as stages:
        stages.update(0, "chunking")
        chunks = chunking_suite.measure(lab.chunks_by, qset.questions)
        stages.update(1, "dense retrieval over six chunkings")
        dense = retrieval_suite.strategies(lab, chunks.destroyed)
        stages.update(1, "dense, BM25 and hybrid")
        systems = retrieval_suite.systems(lab, GATE_STRATEGY)
        stages.update(1, "gate sweep and twins")
        gated = refusal_suite.refusal(lab, GATE_STRATEGY) if qset.negatives else NO_GATE
        calibrated = (
            twins_suite.calibration(lab, strategy)
            if len(qset.questions) >= 2
            else TOO_FEW_FOR_TWINS
        )
        stages.update(1)
    deployed = deploy.measure(lab, strategy, cutoff)
    if trec is not None:
        trec_files.write(lab, trec, GATE_STRATEGY)
    powered = power.power(dense.ranks, dense.clusters, deployed.ks)
    queries = [q.id for q in lab.queries]
    bm25 = {"bm25 tokenizer": tokenizer}
    corpus, stamps = _needles(docs, qset, queries, questions_file, strategy, encoder, cutoff, bm25)
    extra = {"queries": queries, **bm25, "stamps": stamps}
    results = (chunks, dense, systems, gated, calibrated, deployed, powered)
    return Evaluation(title, corpus, _encoder(encoder), results, extra=extra)


def _needles(
    docs: Sequence[Document],
    qset: QuestionSet,
    queries: Sequence[str],
    questions_file: str | os.PathLike | None,
    strategy: str,
    encoder: TextEncoder,
    cutoff: float,
    stamped: dict[str, str],
) -> tuple[dict[str, int], dict[str, Any]]:
    """What a needle evaluation was measured on (:attr:`Evaluation.corpus`: documents,
    characters, questions, queries, negatives by kind) and its stamps, ``stamped`` added."""
    kinds = {k: sum(n.kind == k for n in qset.negatives) for k in ("uncovered", "offtopic")}
    corpus = {
        "documents": len(docs),
        "characters": sum(len(d.text) for d in docs),
        "questions": len(qset.questions),
        "queries": len(queries),
        "negatives": len(qset.negatives),
        **{f"{k} negatives": n for k, n in kinds.items()},
    }
    sha = deploy.questions_sha256(questions_file, qset)
    return corpus, deploy.stamps(docs, sha, strategy, encoder, cutoff, **stamped)


def evaluate_index(
    docs: Sequence[Document],
    qset: QuestionSet,
    retriever: Any,
    *,
    index: str,
    failed: Sequence[str],
    strategy: str,
    title: str = "index",
    cutoff: float = gate.CUTOFF,
    questions_file: str | os.PathLike | None = None,
    served: dict[str, str] | None = None,
) -> Evaluation:
    """The question file asked of a built index (:mod:`rag_lab.evaluation.served`): its
    Recall@k and MRR, and the deployed configuration per query, stamped with the corpus,
    the question file, the indexer's chunker, the encoder, the cutoff and the search, so
    that ``--baseline`` pairs two deploys. ``docs``, the corpus the index was built from,
    validate the questions and stamp the corpus; nothing of them is chunked or embedded.
    ``strategy``: the chunking the indexer used, for the stamps; ``served``: more stamps
    (``rag-lab evaluate``'s: the retriever and where the cutoff came from)."""
    served_run, deployed = served_suite.measure(
        retriever, qset, index=index, failed=failed, strategy=strategy, cutoff=cutoff
    )
    encoder, queries = retriever.encoder, list(served_run.queries)
    search = {"search": served_run.search, **(served or {})}
    corpus, stamps = _needles(
        docs, qset, queries, questions_file, strategy, encoder, cutoff, search
    )
    extra = {"queries": queries, "stamps": stamps}
    return Evaluation(title, corpus, _encoder(encoder), (served_run, deployed), extra=extra)


def evaluate_spans(
    docs: Sequence[Document],
    questions: Sequence[SpanQuestion],
    encoder: TextEncoder,
    *,
    title: str = "corpus",
    strategy: str = GATE_STRATEGY,
    cutoff: float = gate.CUTOFF,
    questions_file: str | os.PathLike | None = None,
) -> Evaluation:
    """The span suite on ``docs`` (its six chunkings; BM25 with the chapter's tokenizer),
    the deployed configuration per question and the power of the question file."""
    bench = spans.bench_of(docs, questions, encoder, sweep=False)
    measured = spans.measure(bench)
    deployed = deploy.measure_spans(bench, strategy, cutoff)
    powered = power.power(measured.strategies.ranks, measured.strategies.clusters, deployed.ks)
    corpus = {
        "documents": len(docs),
        "characters": sum(len(d.text) for d in docs),
        "questions": measured.questions,
        "excerpts": measured.excerpts,
    }
    sha = deploy.questions_sha256(questions_file) if questions_file else _sha_of(questions)
    stamps = deploy.stamps(docs, sha, strategy, encoder, cutoff)
    extra = {"questions": [q.id for q in questions], "stamps": stamps}
    results = (measured, deployed, powered)
    return Evaluation(title, corpus, _encoder(encoder), results, kind="spans", extra=extra)


def _sha_of(questions: Sequence[SpanQuestion]) -> str:
    import hashlib

    return hashlib.sha256(repr(list(questions)).encode("utf-8")).hexdigest()


def _encoder(encoder: TextEncoder) -> dict[str, Any]:
    fp = encoder.fingerprint
    return {**fp.fields(), "key": fp.key}


def run(
    corpus: str | os.PathLike | None,
    questions: str | os.PathLike,
    out: str | os.PathLike,
    *,
    encoder: TextEncoder | None = None,
    progress: bool | None = None,
    strategy: str = GATE_STRATEGY,
    cutoff: float = gate.CUTOFF,
    trec: str | os.PathLike | None = None,
) -> tuple[Evaluation, Written]:
    """Load, evaluate, write. ``corpus=None`` is the lab's own verified corpus; ``strategy``
    and ``cutoff`` are the deployed configuration the regression gate compares; ``trec``, a
    folder for the rankings as TREC runs and qrels (:mod:`rag_lab.evaluation.trec`).

    A folder is read with :func:`rag_lab.sources.folder.load_folder` (every file must read); the
    question file is validated against it with any counts. A question file in Chroma's CSV
    format (detected by content) gets the span suite, with the files read as plain text.
    Raises :class:`~rag_lab.sources.folder.IngestError`, :class:`~rag_lab.sources.d2l.CorpusError`
    or :class:`~rag_lab.questions.QuestionsError`, each naming the file and the problem;
    :class:`~rag_lab.evaluation.trec.TrecError` for ``trec`` with Chroma's format.
    """
    from rag_lab.questions import QuestionsError, Violation, load_questions
    from rag_lab.sources.chroma.questions import load_chroma_questions, questions_kind
    from rag_lab.sources.d2l import load_corpus
    from rag_lab.sources.folder import load_folder

    docs = load_corpus() if corpus is None else load_folder(corpus)
    if encoder is None:
        from rag_lab.models.encoder import Encoder

        encoder = Encoder()
    if questions_kind(questions) == "chroma-csv":
        if corpus is None:
            need = "Chroma's question format needs the corpus it points into (--corpus DIR)"
            raise QuestionsError(questions, [Violation(None, None, None, need)])
        if trec is not None:
            raise trec_files.TrecError(
                f"{questions}: Chroma's format judges a ranking by excerpts covered across "
                "chunks, which a qrels file (one judgement per chunk) cannot hold: no TREC files"
            )
        # Chroma's offsets count every character: read the files as plain text (no headings).
        docs = [dataclasses.replace(d, format="plain") for d in docs]
        span_questions = load_chroma_questions(questions, docs)
        name = Path(corpus).resolve().name
        evaluation = evaluate_spans(
            docs,
            span_questions,
            encoder,
            title=name,
            strategy=strategy,
            cutoff=cutoff,
            questions_file=questions,
        )
        return evaluation, write(evaluation, out)
    qset = load_questions(questions, docs, expected=None)
    name = Path(corpus).resolve().name if corpus is not None else "the lab's corpus"
    # The chapter's ASCII tokenizer reproduces the chapter; any other corpus gets Unicode words.
    tokenizer = "ascii" if corpus is None else "unicode"
    evaluation = evaluate(
        docs,
        qset,
        encoder,
        title=name,
        tokenizer=tokenizer,
        progress=progress,
        strategy=strategy,
        cutoff=cutoff,
        questions_file=questions,
        trec=trec,
    )
    return evaluation, write(evaluation, out)
