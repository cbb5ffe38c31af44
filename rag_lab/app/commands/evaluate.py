"""``rag-lab evaluate``: the question file asked of a corpus or a built index, the report
written, and (``--baseline``) compared with an earlier one. The one command that imports the
evaluation library, inside its functions (and matplotlib with it)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rag_lab import paths, progress
from rag_lab.app import deployed, index, lifecycle
from rag_lab.app.commands import UsageError, encoder_for, index_encoder
from rag_lab.app.exits import OK, REGRESSED
from rag_lab.app.store import Status
from rag_lab.app.store.lock import private_folder
from rag_lab.app.values import index_in_command, index_option
from rag_lab.questions import QuestionsError
from rag_lab.sources import folder
from rag_lab.sources.d2l import corpus_dir

if TYPE_CHECKING:
    from rag_lab.evaluation.regression import Comparison
    from rag_lab.evaluation.report import Evaluation


def run_evaluate(args: argparse.Namespace) -> int:
    # Imported here: only `evaluate` needs the evaluation library (and matplotlib).
    from rag_lab.evaluation import baseline_file, gate_report, regression, report, runner

    questions, out = _evaluation_paths(args)
    _check_trec(args)
    _check_served(args)
    # The baseline is read before minutes of embedding: a wrong path fails at once.
    baseline = None
    if args.baseline is not None:
        with _baseline_words(baseline_file.BaselineError):
            baseline = baseline_file.read_report(args.baseline)
    encoder = None  # a corpus evaluation's: the default unless --encoder (a built index's own)
    if args.encoder is not None and args.index is None:
        encoder = encoder_for(*index.resolve_encoder(args.encoder, None, None))
    held = None  # a built index's contents, as stamps
    if args.index is not None:  # before the questions are checked against the corpus
        held = check_corpus(args)
    with _read_once(questions) as readable, _writing_into(out):
        if baseline is not None:  # of the kind this run will be: else pairing fails at the end
            with _baseline_words(baseline_file.BaselineError):
                baseline_file.require_kind(baseline, _report_kind(readable), args.baseline)
        if args.index is not None:
            evaluation = _evaluate_index(args, readable, held)
            written = report.write(evaluation, out)
        else:
            with progress.on_stderr():
                evaluation, written = runner.run(
                    args.corpus,
                    readable,
                    out,
                    encoder=encoder,
                    strategy=args.strategy,
                    cutoff=args.cutoff,
                    trec=args.trec,
                    lab=args.lab,
                    retriever=args.retriever,
                )
    print(evaluation.intro)
    for title, table in evaluation.headline():
        print(f"\n{title}:\n{table.to_string()}")
    for note in evaluation.notes():
        print(f"\nnote: {note}")
    claimed = (
        f", {written.claims.name} (the chapter's claims on this corpus)"
        if written.claims is not None and evaluation.claims()
        else ""
    )
    drawn = f" and {len(written.figures)} figures in {out}/figures" if written.figures else ""
    print(f"\nwrote {written.markdown}, {written.json.name}{claimed}{drawn}")
    if args.trec is not None:
        _print_trec(args.trec, args.strategy)
    if baseline is None:
        return OK
    new = json.loads(written.json.read_text(encoding="utf-8"))
    with _baseline_words(baseline_file.BaselineError):
        compared = regression.compare(
            baseline,
            new,
            max_drop=args.max_drop,
            baseline_path=str(args.baseline),
            allow_lost=args.allow_lost or 0,
            allow_missing=args.allow_missing,
            bluff_cost=args.bluff_cost,
        )
    files = gate_report.write(compared, out)
    _print_comparison(compared)
    print(f"wrote {files.markdown}, {files.json.name} and {files.junit.name} (JUnit) in {out}")
    return REGRESSED if compared.failed else OK


def _check_trec(args: argparse.Namespace) -> None:
    """``--trec DIR``: a corpus evaluation's rankings, into a folder that can be written."""
    if args.trec is None:
        return
    if args.index is not None:
        raise UsageError(
            "--trec DIR writes the rankings of a corpus evaluation; a built index "
            "(--index/--store) keeps none: drop one of them"
        )
    if args.trec.exists() and not args.trec.is_dir():
        raise UsageError(f"{args.trec}: an existing file, not a folder; give another --trec DIR")
    place = next(p for p in (args.trec, *args.trec.parents) if p.exists())
    if not place.is_dir() or not os.access(place, os.W_OK):
        raise UsageError(
            f"cannot write the TREC files: {place} is not a writable folder (--trec DIR)"
        )


def _print_trec(folder: Path, strategy: str) -> None:
    from rag_lab.evaluation import trec

    deployed = f"{trec.run_name('dense', strategy)} with {trec.qrels_name(strategy)}"
    print(f"wrote TREC runs and qrels in {folder} (the deployed configuration: {deployed})")


def _report_kind(questions: Path) -> str:
    """The kind of report the run of ``questions`` writes
    (:attr:`~rag_lab.evaluation.report.Evaluation.kind`): ``spans`` for Chroma's format."""
    from rag_lab.sources.chroma.questions import questions_kind

    return "spans" if questions_kind(questions) == "chroma-csv" else "needles"


def _check_served(args: argparse.Namespace) -> None:
    """``--calibrate`` stores a cutoff into a built index."""
    if args.index is None and args.calibrate:
        raise UsageError(
            "--calibrate stores the cutoff into a built index (--index PATH or --store URI); "
            "a corpus evaluation recommends one in its report"
        )
    if args.calibrate and "cutoff" in args.given:
        raise UsageError("--calibrate chooses the cutoff: drop --cutoff, or --calibrate")


def _evaluate_index(args: argparse.Namespace, questions: Path, held: dict) -> Evaluation:
    """``evaluate --index/--store``: the question file asked of the built index as ``ask``
    serves it (:func:`rag_lab.evaluation.runner.evaluate_index`): the index's strategy, the
    ``--retriever``, the stored cutoff unless ``--cutoff``; ``--calibrate`` first stores a
    cutoff calibrated on twins. The corpus only checks the questions; ``held``: what the
    index holds, as stamps (read with the corpus check, :func:`check_corpus`)."""
    from rag_lab.evaluation import runner
    from rag_lab.questions import load_questions
    from rag_lab.sources.chroma.questions import questions_kind
    from rag_lab.sources.d2l import load_corpus

    if questions_kind(questions) == "chroma-csv":
        raise UsageError(
            f"{questions}: Chroma's question format (answers as offsets) is measured on a "
            "corpus, not a built index; give a question file with needles, or drop "
            "--index/--store"
        )
    docs = load_corpus() if args.corpus is None else folder.load_folder(args.corpus)
    qset = load_questions(questions, docs, expected=None)
    if args.calibrate:
        _calibrate(args, qset, questions)
    with lifecycle.reading(args.index, check=True) as store:
        strategy = deployed.recorded_strategy(store)
        if "strategy" in args.given and args.strategy != strategy:
            raise UsageError(
                f"--strategy {args.strategy}: the index holds chunks of strategy {strategy}, "
                "and a built index is measured as it serves; drop --strategy"
            )
        given = args.cutoff if "cutoff" in args.given else None
        cutoff = deployed.resolve_cutoff(given, store)
        encoder = index_encoder(store, args.encoder)
        retriever = deployed.serving(store, encoder, args.retriever, strategy)
        failed = [r.id for r in store.documents() if r.status is Status.FAILED]
        return runner.evaluate_index(
            docs,
            qset,
            retriever,
            index=str(args.index),
            failed=failed,
            strategy=strategy,
            title=Path(str(args.index)).name or str(args.index),
            cutoff=cutoff.value,
            questions_file=questions,
            served={
                "retriever": args.retriever,
                "cutoff source": cutoff.source,
                **held,
            },
        )


def check_corpus(args: argparse.Namespace) -> dict[str, object]:
    """``evaluate --index/--store``: the corpus the questions are checked against (``--corpus``,
    else the lab's) against the index's documents (:func:`~rag_lab.app.deployed.corpus_match`).
    None of them there with the same bytes: a usage error (the questions would be checked
    against other documents than the index serves). Some differ: a warning on stderr saying
    how many (an index behind its folder is measured as it serves). Returns what the index
    holds, as stamps (:func:`~rag_lab.app.deployed.contents`), read in the same opening."""
    corpus = args.corpus or corpus_dir()
    with lifecycle.reading(args.index) as store:
        held = store.meta("folder") or "a folder it does not record"
        match = deployed.corpus_match(store, corpus)
        stamps = deployed.contents(store)
    where = index_option(args.index)
    if not match.documents or not match.differ:
        return stamps
    if not match.same:
        lab = "" if args.corpus is not None else " (without --corpus, the lab's corpus)"
        raise UsageError(
            f"{where} holds {match.documents} documents of {held}, and none of them is in "
            f"{corpus}{lab} with the same bytes (sha256): the questions would be checked "
            "against documents the index does not serve; give --corpus DIR, the folder it was "
            "built from"
        )
    print(
        f"warning: {where} and {corpus} differ in {match.differ} documents ({match.changed} "
        f"changed, {match.only_index} only in the index, {match.only_folder} only in the "
        f"folder; {match.same} the same): the report measures the index as it serves; index "
        "the folder again to measure it as the folder is",
        file=sys.stderr,
    )
    return stamps


def _calibrate(args: argparse.Namespace, qset, questions: Path) -> None:
    """``--calibrate``: the twin-calibrated cutoff over the index's chunks, written into the
    index with its evidence (through the index's lifecycle, as ``index`` writes it)."""
    import datetime

    from rag_lab.evaluation import deploy, served

    if len(qset.questions) < 2:
        raise UsageError(
            f"{questions}: --calibrate needs at least 2 questions (it chooses the cutoff on "
            "one half and scores it on the other)"
        )
    with lifecycle.reading(args.index, check=True) as store:
        strategy = deployed.recorded_strategy(store)
        encoder = index_encoder(store, args.encoder)
        retriever = deployed.serving(store, encoder, "dense", strategy)
        got = served.calibration(retriever, qset, strategy)
    if not got.met:  # distance alone cannot tell a near miss from its answer: store nothing
        raise UsageError(
            f"--calibrate stored nothing: {got.line()}; give a cutoff with "
            f"rag-lab index DIR --cutoff X{index_in_command(args.index)}, or drop --calibrate"
        )
    held = got.held_out
    evidence = {
        "method": "twins",
        "strategy": strategy,
        "target": got.target,
        "chosen on": len(got.chosen_on),
        "held-out questions": held.questions,
        "held-out bluffed": held.bluffed,
        "bluff upper bound": round(held.upper, 6),
        "held-out queries": held.queries,
        "refused": len(held.refused),
        "questions sha256": deploy.questions_sha256(questions),
        "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
    }
    with lifecycle.writing(args.index, create=False) as store:
        deployed.store_cutoff(store, got.cutoff, "calibrated", **evidence)
    print(f"calibrated the cutoff on unanswerable twins: {got.line()}")
    print(f"stored cutoff {got.cutoff:g} in {args.index}")


@contextlib.contextmanager
def _baseline_words(kind: type[Exception]) -> Iterator[None]:
    """A baseline that cannot be compared with, as a usage error saying what to give."""
    try:
        yield
    except kind as err:
        raise UsageError(
            f"{err}; --baseline FILE takes the report.json of an earlier rag-lab evaluate"
        ) from None


@contextlib.contextmanager
def _writing_into(out: Path) -> Iterator[None]:
    """A full disk or quota met while writing the report names its folder (the system's
    error names no file when it comes at a close or a flush)."""
    try:
        yield
    except OSError as err:
        if err.filename is not None or err.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        raise OSError(err.errno, f"cannot write the report: {err.strerror}", str(out)) from None


QUESTIONS_MAX_BYTES = 64 * 2**20
"""The largest question file read (64 MiB, a few hundred thousand questions): past it,
``--questions /dev/zero`` or a wrong file is refused before it fills the memory."""


@contextlib.contextmanager
def _read_once(path: Path) -> Iterator[Path]:
    """A question file that can be read only once (``--questions <(...)``, /dev/stdin) as a
    regular file for the run: the evaluation reads it to tell its kind, to load it and to
    hash it. Problems found in it still name ``path``; one past
    :data:`QUESTIONS_MAX_BYTES` is refused."""
    try:
        st = path.stat()
    except OSError:
        st = None  # missing or unreadable: the loader says which
    if st is None or stat.S_ISREG(st.st_mode):
        if st is not None and st.st_size > QUESTIONS_MAX_BYTES:
            raise _too_large(path)
        yield path
        return
    tmp = private_folder("rag-lab-questions-")  # a killed run's is removed by the next
    try:
        copy = tmp / (path.name or "questions")
        with path.open("rb") as f:
            data = f.read(QUESTIONS_MAX_BYTES + 1)
        if len(data) > QUESTIONS_MAX_BYTES:
            raise _too_large(path)
        copy.write_bytes(data)
        try:
            yield copy
        except QuestionsError as err:
            if Path(err.path) != copy:
                raise
            raise QuestionsError(path, err.violations) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _too_large(path: Path) -> UsageError:
    return UsageError(
        f"{path}: more than {QUESTIONS_MAX_BYTES // 2**20} MiB, not a question file "
        "(--questions FILE)"
    )


def _print_comparison(c: Comparison) -> None:
    """The gate's verdict on the terminal: what was paired, what changed, the metrics, the
    lost and missing questions, the verdict."""
    from rag_lab.evaluation import gate_report

    print(f"\nagainst the baseline {c.baseline_path}: {c.coverage}")
    for note in c.not_compared:
        print(f"  not compared: {note}")
    for stamp, old, new in c.changes:
        print(f"  changed {stamp}: {old} -> {new}")
    if not c.changes:
        print(f"  the stamps are the same ({', '.join(c.stamped)})")
    print(f"\n{gate_report.metrics_frame(c).to_string()}")
    lost = sum(bool(f.lost) for f in c.flips)
    listed = "; regression.md lists them" if c.flips else ""
    print(f"\n{len(c.flips)} queries flipped ({lost} lost at some k){listed}")
    for q in c.lost:
        for f in q.queries:
            print(f"  lost {q.question}: {gate_report.lost_text(f)}")
    for q in c.missing:
        print(f"  missing {q.question}: {gate_report.missing_text(q)}")
    print(f"\n{gate_report.rule(c)}\n{gate_report.summary(c)}")


def _evaluation_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    """The question file and the report folder of ``evaluate``, checked before computing:
    a mistake found after minutes of embedding is a mistake twice."""
    if args.corpus is not None and args.questions is None:
        raise UsageError("--questions FILE is required with --corpus DIR")
    if args.max_drop is not None and args.baseline is None:
        raise UsageError("--max-drop X needs --baseline FILE, the run it drops from")
    if args.allow_lost is not None and args.baseline is None:
        raise UsageError("--allow-lost N needs --baseline FILE, the run answers are lost from")
    if args.bluff_cost is not None and args.baseline is None:
        raise UsageError("--bluff-cost X needs --baseline FILE, the run whose cost it weighs")
    if args.allow_missing and args.baseline is None:
        raise UsageError("--allow-missing needs --baseline FILE, the run questions go missing from")
    questions = args.questions or lab_questions()
    if args.corpus is not None and not args.corpus.is_dir():
        raise UsageError(f"{args.corpus}: not a folder (--corpus DIR)")
    if questions.is_dir():
        raise UsageError(f"{questions}: a folder, not a question file (--questions FILE)")
    name = (args.corpus or corpus_dir()).resolve().name
    out = args.out or Path("reports") / name
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: an existing file, not a folder; give another --out DIR")
    if args.corpus is not None and out.resolve().is_relative_to(args.corpus.resolve()):
        raise UsageError(  # index and evaluate would read report.md as a document next time
            f"--out {out} is inside the corpus {args.corpus}: its report.md would be read as "
            "one of the corpus's documents next time; give another --out DIR"
        )
    if args.baseline is not None and args.baseline.resolve().is_relative_to(out.resolve()):
        raise UsageError(
            f"--out {out} holds the baseline {args.baseline}, which the run would overwrite "
            "(report.json, regression.json) before comparing with it; give another --out DIR"
        )
    place = next(p for p in (out, *out.parents) if p.exists())
    if not place.is_dir() or not os.access(place, os.W_OK):
        raise UsageError(f"cannot write the report: {place} is not a writable folder (--out DIR)")
    return questions, out


# --- checkout-only conveniences -------------------------------------------------------
# The one place where rag-lab leans on a checkout of the lab rather than an installed
# package (a wheel has no data/ folder). The lab's corpus itself is found by
# rag_lab.sources.d2l ($RAG_LAB_CORPUS works anywhere).


def lab_questions() -> Path:
    """The lab's own question file, ``data/questions.yaml`` of a checkout: what ``evaluate``
    asks of the lab's own corpus when no ``--questions`` is given. An installed rag_lab has
    none, and says so (exit 2) rather than looking for a file that cannot be there."""
    if not paths.QUESTIONS.is_file():
        raise UsageError(
            f"no question file given, and the lab's own ({paths.QUESTIONS}) is not here: it "
            "comes with a checkout of the lab, not with an installed rag_lab; give one with "
            "--questions FILE"
        )
    return paths.QUESTIONS
