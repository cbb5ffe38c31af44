"""Running ``rag-lab evaluate``: the suites on a corpus and its questions, as an evaluation.

:func:`evaluate` measures the deployed configuration on a corpus with needle questions (its
failures and what it returned instead, a cutoff calibrated on unanswerable twins, the refusal
gate when there are negatives, the power of the question file), embedding only the chunking
it serves; with ``lab=True``, the six-strategy lab (chunking, dense retrieval over the six
chunkings, dense / BM25 / hybrid on strategy E) and the chapter's claims beside them;
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
from rag_lab.dense import cosine_distance_matrix as dense_distances
from rag_lab.documents import Document
from rag_lab.evaluation import chunking as chunking_suite
from rag_lab.evaluation import deploy, power, spans
from rag_lab.evaluation import failures as failures_suite
from rag_lab.evaluation import refusal as refusal_suite
from rag_lab.evaluation import retrieval as retrieval_suite
from rag_lab.evaluation import served as served_suite
from rag_lab.evaluation import trec as trec_files
from rag_lab.evaluation import twins as twins_suite
from rag_lab.evaluation.chapter import SYSTEM_PAIRS
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.report import Evaluation, Written, write
from rag_lab.evaluation.runs import Rankings, rank_all
from rag_lab.evaluation.sections import GateSkipped
from rag_lab.progress import bar
from rag_lab.questions import QuestionSet
from rag_lab.search import SERVED_TOKENIZER, TextEncoder, rank_one
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
    retriever: str = "dense",
    lab: bool = False,
) -> Evaluation:
    """The deployed configuration measured: what ``retriever`` (``"dense"``, ``"bm25"`` or
    ``"hybrid"``, the lab's fusion) on ``strategy`` failed on and what it returned instead
    (:mod:`rag_lab.evaluation.failures`), the cutoff calibrated on unanswerable twins
    (:mod:`rag_lab.evaluation.twins`), the gate swept on the negatives when there are, the
    power of the question file (σ observed between dense, BM25 and hybrid on ``strategy``)
    and the deployment per query. Only ``strategy`` is embedded.

    With ``lab``, the six-strategy lab instead, as the chapter measures it: chunking, dense
    retrieval over the six chunkings, dense / BM25 / hybrid on E, the gate on E, the twins,
    the deployment, the power between chunkings, and the chapter's claims judged on the
    corpus; the failures of the deployment first. ``tokenizer`` is BM25's (the chapter's
    ``"ascii"``, or ``"unicode"``); ``questions_file`` is hashed into the stamps. With
    ``trec``, the rankings scored are also written there as TREC runs and qrels
    (:func:`rag_lab.evaluation.trec.write`; on the fast path, of ``strategy`` only)."""
    if retriever not in RETRIEVERS:
        raise ValueError(f"retriever must be one of {tuple(RETRIEVERS)}, not {retriever!r}")
    the_lab = Lab.of(docs, qset, encoder, tokenizer=tokenizer)
    # No total: the stages differ by minutes, so a time left from their mean would mislead.
    with bar(None, "evaluate", "stage", show=progress) as stages:
        stages.update(0, f"strategy {strategy}: dense, BM25 and hybrid")
        rankings = rank_all(the_lab.index(strategy), the_lab.queries, encoder)
        deployed = _deployed(the_lab, rankings, strategy, cutoff, retriever)
        served = failures_suite.failures(
            deployed,
            the_lab.index(strategy).chunks,
            {q.id: q.text for q in the_lab.queries},
            retriever,
        )
        stages.update(1, "gate sweep and twins")
        gate_on = GATE_STRATEGY if lab else strategy
        gated = _gate(the_lab, gate_on, deployed)
        calibrated = (
            twins_suite.calibration(the_lab, strategy)
            if len(qset.questions) >= 2
            else _too_few(strategy)
        )
        stages.update(1)
        if lab:
            stages.update(0, "chunking")
            chunks = chunking_suite.measure(the_lab.chunks_by, qset.questions)
            stages.update(1, "dense retrieval over six chunkings")
            dense = retrieval_suite.strategies(the_lab, chunks.destroyed)
            stages.update(1, "dense, BM25 and hybrid on E")
            systems = retrieval_suite.systems(the_lab, GATE_STRATEGY)
            stages.update(1)
    if trec is not None:
        if lab:
            trec_files.write(the_lab, trec, GATE_STRATEGY)
        else:
            trec_files.write(_only(the_lab, strategy), trec, strategy)
    if lab:
        powered = power.power(dense.ranks, dense.clusters, deployed.ks)
        results = (served, chunks, dense, systems, gated, calibrated, deployed, powered)
    else:
        ranks = rankings.ranks(the_lab.index(strategy))
        powered = power.power(ranks, the_lab.clusters, deployed.ks, pairs=SYSTEM_PAIRS)
        results = (served, calibrated, gated, powered, deployed)
    queries = [q.id for q in the_lab.queries]
    bm25 = {"bm25 tokenizer": tokenizer}
    stamped = bm25 if retriever == "dense" else {**bm25, "retriever": retriever}
    corpus, stamps = _needles(
        docs, qset, queries, questions_file, strategy, encoder, cutoff, stamped
    )
    extra = {"queries": queries, **bm25, "lab": lab, "stamps": stamps}
    return Evaluation(title, corpus, _encoder(encoder), results, extra=extra, judged=lab)


RETRIEVERS = {"dense": "dense", "bm25": "BM25", "hybrid": "hybrid"}
"""The deployed retrievers :func:`evaluate` measures, and their names in the lab's rankings
(:func:`rag_lab.evaluation.runs.rank_all`)."""


def _deployed(
    lab: Lab, rankings: Rankings, strategy: str, cutoff: float, retriever: str
) -> deploy.Deployment:
    """:func:`rag_lab.evaluation.deploy.measure` (dense); for another ``retriever``, its
    first-hit ranks and first chunks, each query's distance the nearest (dense) of the
    chunks it passes to the gate, which refuses when none is under the cutoff."""
    deployed = deploy.measure(lab, strategy, cutoff)
    if retriever == "dense":
        return deployed
    index = lab.index(strategy)
    name = RETRIEVERS[retriever]
    ranked = rankings.by_system[name]
    kept = [r[: gate.MAX_KEPT] for r in ranked]
    negatives = lab.negatives
    negative_nearest = deployed.negative_nearest
    if negatives:
        asked = [n.query for n in negatives]
        vectors = lab.encoder.encode(asked)
        nd = dense_distances(vectors, index.vectors)
        neg_ranked = [rank_one(index, text, row)[name] for text, row in zip(asked, nd, strict=True)]
        negative_nearest = tuple(
            float(row[r[: gate.MAX_KEPT]].min()) for row, r in zip(nd, neg_ranked, strict=True)
        )
    return dataclasses.replace(
        deployed,
        ranks=tuple(rankings.ranks(index)[name]),
        top=tuple(index.chunks[int(r[0])].id for r in ranked),
        nearest=tuple(float(row[k].min()) for row, k in zip(rankings.distances, kept, strict=True)),
        negative_nearest=negative_nearest,
    )


def _only(lab: Lab, strategy: str) -> Lab:
    """``lab`` with ``strategy``'s chunks alone (its indexes shared): what the fast path
    writes as TREC files."""
    return dataclasses.replace(lab, chunks_by={strategy: lab.chunks_by[strategy]})


def _gate(lab: Lab, strategy: str, deployed: deploy.Deployment) -> Any:
    """The refusal gate swept on ``strategy``
    (:func:`rag_lab.evaluation.refusal.refusal`), or why it was not: no negatives, or no
    chunk of the deployed strategy holding any needle whole (no distance to an answer)."""
    heading = f"Distances and the refusal gate on strategy {strategy} (notebook 06)"
    if not lab.negatives:
        return (
            NO_GATE if strategy == GATE_STRATEGY else dataclasses.replace(NO_GATE, heading=heading)
        )
    if strategy == deployed.strategy and len(deployed.destroyed) == len(deployed.questions):
        return GateSkipped(
            f"no chunk of strategy {strategy} holds a needle whole, so no answerable query "
            "has a distance to its answer for the gate to weigh against the negatives",
            heading=heading,
        )
    return refusal_suite.refusal(lab, strategy)


def _too_few(strategy: str) -> GateSkipped:
    if strategy == GATE_STRATEGY:
        return TOO_FEW_FOR_TWINS
    heading = f"A cutoff calibrated on unanswerable twins, strategy {strategy} (notebook 06)"
    return dataclasses.replace(TOO_FEW_FOR_TWINS, heading=heading)


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
    retriever: str = "dense",
    lab: bool = False,
) -> tuple[Evaluation, Written]:
    """Load, evaluate, write. ``corpus=None`` is the lab's own verified corpus; ``strategy``,
    ``retriever`` and ``cutoff`` are the deployed configuration the regression gate compares;
    ``trec``, a folder for the rankings as TREC runs and qrels (:mod:`rag_lab.evaluation.trec`);
    ``lab``, the six-strategy lab and the chapter's claims too (:func:`evaluate`). A question
    file in Chroma's format always gets its span suite (six chunkings).

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
    # The chapter's ASCII tokenizer reproduces the chapter; any other corpus is measured with
    # the tokenizer `ask` serves it with.
    tokenizer = "ascii" if corpus is None else SERVED_TOKENIZER
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
        retriever=retriever,
        lab=lab,
    )
    return evaluation, write(evaluation, out)
