"""``rag-lab``: the lab on your own documents, from a folder of Markdown to an evaluation report.

A parser and thin commands. Each command parses its arguments
(:mod:`rag_lab.app.arguments`), calls the application (:mod:`rag_lab.app.lifecycle` to
open or rebuild the index, :mod:`rag_lab.app.index`, :mod:`rag_lab.app.ingest`,
:mod:`rag_lab.pipeline`, :mod:`rag_lab.evaluation.report`) and words the result.

One error discipline: the package raises facts (:mod:`rag_lab.errors`), and this module
words them, one line each on stderr saying what, where and what to do (the commands and
options to type are named here, and only here); :data:`EXIT_STATUS` maps them to exit
statuses. 2 is every fault of the input or the environment (a bad option, a missing or
foreign file, a damaged or busy index, an unwritable place); 1 means only "some documents
failed to index"; 3 (:data:`REGRESSED`) only "``evaluate --baseline``: a metric regressed";
130 is Ctrl-C and 143 SIGTERM (what ``kill``, ``timeout``, systemd and containers send),
after which the index is consistent (documents are written whole); 141 a reader of stdout
that went away (``| head``): what was done is kept (reports are printed after the work,
a rebuild's after its swap), and the rest of the output is dropped without a word. No
traceback reaches the user unless ``--debug``. Under ``--json`` an error is also one
JSON object on stdout, ``{"error": <the words said on stderr>, "exit_status": N}``
(:func:`~rag_lab.app.arguments.json_error`), argparse's refusals included, so a program
reading stdout always gets JSON. Output is written in whatever encoding stdout has,
characters it cannot encode as ``\\uXXXX``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import signal
import stat
import sys
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rag_lab import environ, paths
from rag_lab.app import arguments, index, ingest, lifecycle, output, terminal
from rag_lab.app.index import BackendMismatch, DamagedMeta, UnknownBackend
from rag_lab.app.store import (
    IndexBusy,
    IndexDamaged,
    IndexInaccessible,
    IndexLocked,
    IndexMissing,
    IndexNeedsRecovery,
    IndexNotIndexed,
    IndexReadOnly,
    MilvusLocation,
    NotAFile,
    NotOurFile,
    OtherSchema,
)
from rag_lab.errors import BadEnvironment, BadInput, RagLabError, UnusableIndex
from rag_lab.models.encoder import Encoder
from rag_lab.pipeline import Refusal, answer
from rag_lab.questions import QuestionsError
from rag_lab.sources import folder
from rag_lab.sources.d2l import corpus_dir
from rag_lab.text import printable

if TYPE_CHECKING:
    from rag_lab.evaluation.regression import Comparison
    from rag_lab.evaluation.report import Evaluation

OK, PARTIAL, ERROR, REGRESSED, INTERRUPTED = 0, 1, 2, 3, 130
CLOSED, TERMINATED = 128 + signal.SIGPIPE, 128 + signal.SIGTERM
"""141, what a shell reports of a program a closed pipe ended; 143, of one SIGTERM ended."""

EXIT_STATUS: dict[type[BaseException], int] = {
    KeyboardInterrupt: INTERRUPTED,  # Ctrl-C; the index is consistent, the same command resumes
    BrokenPipeError: CLOSED,  # stdout's reader went away (| head); said to no one
    BadInput: ERROR,  # an option, a folder or file given, a question file
    BadEnvironment: ERROR,  # a package, a model, the lab's corpus
    UnusableIndex: ERROR,  # missing, not ours, damaged, busy, read-only, stale, empty
    OSError: ERROR,  # a file or folder the system refused
    Exception: ERROR,  # a bug: still one line, and the way to the traceback
}
"""The exit status of an error: the entry of the nearest class in its MRO. Besides these,
a command returns :data:`OK`, :data:`PARTIAL` (some documents failed to index) or
:data:`REGRESSED` (``evaluate --baseline``: a metric regressed against the baseline), and
SIGTERM ends it with :data:`TERMINATED` (a Ctrl-C by another name)."""


class UsageError(BadInput, ValueError):
    """Arguments that parse but do not go together."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rag-lab`` with ``argv`` (default: the command line); return the exit status."""
    terminal.encode_what_streams_accept()
    args = _parser().parse_args(argv)
    if getattr(args, "store", None) is not None:  # --store URI: the index is on Milvus
        args.index = args.store
    elif getattr(args, "index", None) is not None:  # a link's target: a rebuild keeps the link
        args.index = lifecycle.index_file(args.index)
    with terminal.sigterm_as_interrupt() as signalled:
        try:
            environ.check()
            status = args.run(args)
            sys.stdout.flush()  # here, not at exit: a reader gone is a quiet CLOSED
            return status
        except BrokenPipeError:
            terminal.silence(sys.stdout)
            return CLOSED
        except (KeyboardInterrupt, Exception) as err:
            if getattr(args, "debug", False) and not isinstance(err, KeyboardInterrupt):
                traceback.print_exc()  # and the exit status of the table, as without --debug
            status = TERMINATED if signalled else exit_status(err)
            _say(err, args, signalled, status)
            return status


def _say(err: BaseException, args: argparse.Namespace, signalled: list[int], status: int) -> None:
    """The error's lines on stderr; with ``--json``, also :func:`~.arguments.json_error`
    on stdout (the same words)."""
    if isinstance(err, KeyboardInterrupt):
        lines = [_interrupted(args.command, "terminated (SIGTERM)" if signalled else "interrupted")]
    else:
        lines = [printable(line) for line in _problems(err, args)]
    try:
        for line in lines:
            print(f"rag-lab {args.command}: {line}", file=sys.stderr)
    except BrokenPipeError:  # 2>&1 | head: nobody reads the words either
        terminal.silence(sys.stderr)
    if getattr(args, "json", False):
        try:
            print(arguments.json_error("\n".join(lines), status), flush=True)
        except BrokenPipeError:
            terminal.silence(sys.stdout)


def exit_status(err: BaseException) -> int:
    """``err``'s exit status: :data:`EXIT_STATUS` of the nearest class in its MRO."""
    return EXIT_STATUS[_nearest(err, EXIT_STATUS)]


# --- what went wrong, and what to do ------------------------------------------------


def _interrupted(command: str, how: str) -> str:
    """What Ctrl-C or SIGTERM (``how``) left: the index consistent, or (``evaluate``, which
    reads no index) a report not complete."""
    if command == "evaluate":
        return (
            f"{how} before the report was complete (files already in its folder may be from "
            "an earlier run): run the same command again"
        )
    return (
        f"{how}; the index is consistent (each document is written whole or not at all): "
        "run the same command again to resume"
    )


_ADVICE: dict[type[RagLabError], str] = {
    IndexMissing: ": run rag-lab index DIR first",
    NotOurFile: "; refusing to touch it; choose another file with --index PATH",
    NotAFile: "; give a file: --index PATH",
    OtherSchema: ". Index the folder again into a new file (--index PATH).",
    IndexDamaged: (
        "; see rag-lab status --check --index {path}, and rebuild it with "
        "rag-lab index DIR --rebuild"
    ),
    IndexLocked: "; run again when it is done",
    IndexNotIndexed: "; rag-lab index DIR again waits for it (nothing is indexed twice)",
    IndexBusy: ". Let it finish, or stop that process, and run again",
    IndexNeedsRecovery: (
        ". Make the file and its folder writable, then run rag-lab status --index {path}: "
        "opening it rolls the journal back"
    ),
    IndexReadOnly: "; make it writable, or choose another file with --index PATH",
    IndexInaccessible: "; check the disk and its permissions",
    UnknownBackend: "; rebuild it: rag-lab index {folder} --rebuild",
    lifecycle.IndexNameTooLong: "; choose a shorter name: --index PATH",
    DamagedMeta: (
        ". Index the folder with the PDF options you want (--pdf-extractor, "
        "--keep-running-lines, --ocr): rag-lab index {folder} records them again, and reads "
        "the failed documents with them"
    ),
}
"""What to do, after a fact's own words: by the nearest class in its MRO; ``{path}`` is the
index file, ``{folder}`` the folder it holds (``DIR`` when it does not say)."""


def _problems(err: BaseException, args: argparse.Namespace) -> list[str]:
    """One line per problem, each naming its file (and line) where the error knows it,
    and saying what to do."""
    if isinstance(err, QuestionsError):
        return [v.render(err.path) for v in err.violations]
    if isinstance(err, folder.IngestError):
        return err.problems
    if isinstance(err, BackendMismatch):
        return [_mismatch(err, args)]
    if isinstance(err, RagLabError):
        return [_one_line(err) + _advice(err)]
    if isinstance(err, OSError):
        where = f"{err.filename}: " if err.filename else ""
        return [f"{where}{err.strerror or err}"]
    how = "the traceback is above" if args.debug else "run again with --debug for the traceback"
    return [f"internal error: {type(err).__name__}: {_one_line(err)} ({how}, and please report it)"]


def _advice(err: RagLabError) -> str:
    cls = _nearest(err, _ADVICE)
    if cls is None:
        return ""
    path = getattr(err, "path", None)
    advice = _ADVICE[cls]
    if isinstance(path, MilvusLocation):  # the same advice, in --store's words
        if not path.local and cls is IndexInaccessible:
            return "; check that the server runs, and its address and port"
        advice = advice.replace("--index {path}", "--store {path}")
        advice = advice.replace("another file with --index PATH", "another --store URI#NAME")
    return advice.format(path=path, folder=getattr(err, "folder", None) or "DIR")


def _mismatch(err: BackendMismatch, args: argparse.Namespace) -> str:
    """A ``--backend`` the index was not built with: what ``ask`` or ``index`` can do."""
    rebuild = f"rag-lab index {err.folder or 'DIR'} --rebuild --backend {err.requested}"
    if args.command == "ask":
        return (
            f"the index {args.index} was built with the {err.held} encoder backend; a question "
            f"embedded by {err.requested} is not comparable with its vectors. Leave out "
            f"--backend (ask uses the index's), or rebuild the index with it: {rebuild}"
        )
    return (
        f"this index was built with the {err.held} encoder backend, and vectors of "
        f"{err.requested} are not comparable with them; re-embed every document with: {rebuild}"
    )


def _nearest(err: BaseException, table: dict) -> type | None:
    """The first class of ``err``'s MRO that ``table`` has, if any."""
    return next((cls for cls in type(err).__mro__ if cls in table), None)


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


# --- commands -----------------------------------------------------------------------


def _index(args: argparse.Namespace) -> int:
    if not args.folder.is_dir():  # before any file is created
        raise UsageError(f"{args.folder}: not a folder")
    ingest.folder_root(args.folder)  # a folder the index cannot record, before any file
    if args.rebuild:
        with lifecycle.writer(args.index):
            return _rebuild(args)
    early = None
    if not lifecycle.exists(args.index):  # the encoder first: one that fails leaves nothing
        lifecycle.check_writable(args.index)
        early = _encoder(index.resolve_backend(args.backend, None))
    with lifecycle.writing(args.index) as store:
        backend = index.resolve_backend(args.backend, store)
        encoder = early if early is not None and early.backend == backend else _encoder(backend)
        store.set_meta(index.BACKEND_KEY, backend)
        print(
            f"indexing {printable(str(args.folder.resolve()))} into {printable(str(args.index))} "
            f"(encoder: {backend})"
        )
        report = ingest.index_folder(
            args.folder,
            store,
            encoder,
            prune=args.prune,
            follow_symlinks=args.follow_symlinks,
            pdf=_pdf_options(args),
            index=lifecycle.on_disk(args.index),
        )
        lines = output.report_lines(report, store)
        _say_server_indexes(args.index)
    print("\n".join(lines))  # after the run: a reader gone (| head) loses words, not work
    return PARTIAL if report.failed else OK


def _rebuild(args: argparse.Namespace) -> int:
    """A fresh index beside the old one, swapped in when complete (works on a damaged one)."""
    plan = lifecycle.plan_rebuild(args.index, args.folder, args.backend)
    if plan.damaged is not None:
        print(
            f"note: {printable(str(args.index))} is damaged; building a fresh index",
            file=sys.stderr,
        )
    encoder = _encoder(plan.backend)
    fresh = "generation" if isinstance(args.index, MilvusLocation) else "file"
    print(
        f"rebuilding {printable(str(plan.folder))} into {printable(str(args.index))} (encoder: "
        f"{plan.backend}; a fresh {fresh}, swapped in when complete)"
    )
    with lifecycle.rebuilding(args.index, plan.backend) as store:
        report = ingest.index_folder(
            plan.folder,
            store,
            encoder,
            rebuild=True,
            follow_symlinks=args.follow_symlinks,
            pdf=_pdf_options(args),
            index=lifecycle.on_disk(args.index),
        )
        lines = output.report_lines(report, store)
        _say_server_indexes(args.index)
    print("\n".join(lines))  # after the swap: a reader gone (| head) loses words, not work
    return PARTIAL if report.failed else OK


def _retry(args: argparse.Namespace) -> int:
    with lifecycle.writing(args.index, create=False) as store:
        report = ingest.retry(
            store, _encoder(index.resolve_backend(None, store)), index=lifecycle.on_disk(args.index)
        )
        lines = output.report_lines(report, store)
        _say_server_indexes(args.index)
    print("\n".join(lines))
    return PARTIAL if report.failed else OK


def _say_server_indexes(where: index.Location) -> None:
    """Before a writer on a Milvus server closes: it waits for the server's index."""
    if isinstance(where, MilvusLocation) and not where.local:
        print(
            "waiting until the Milvus server's index covers the chunks written (until then "
            "it searches them through a temporary index, with lower recall)",
            file=sys.stderr,
            flush=True,
        )


def _status(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args)
    with lifecycle.reading(args.index, check=True) as store:
        encoder = _encoder(index.resolve_backend(None, store))
        st = index.status(store, index.current_stamp(encoder.fingerprint))
    if args.json:
        print(json.dumps(output.status_json(st), indent=1, allow_nan=False))
        return OK
    where = f"index {args.index} of folder {st.folder}" if st.folder else f"index {args.index}"
    print(printable(where))
    print(printable(index.describe(st), newlines=True))
    return OK


def _check(args: argparse.Namespace) -> int:
    """``status --check``: every problem of the index file and the one command that mends
    them. A file too damaged to open is a problem it reports, not an error pointing back here."""
    try:
        with lifecycle.reading(args.index) as store:
            problems = index.check(store)
            held, documents, engine = store.meta("folder"), len(store.documents()), store.engine
    except IndexDamaged as err:
        problems, held, documents, engine = [f"it cannot be read: {err.what}"], None, 0, None
    mend = f"rag-lab index {held or 'DIR'} --rebuild"
    if args.json:
        print(
            json.dumps(
                {"index": str(args.index), "ok": not problems, "problems": problems}
                | ({"mend": mend} if problems else {})
            )
        )
    elif problems:
        n = len(problems)
        print(printable(f"index {args.index}: {n} problem{'s' * (n != 1)}"))
        print("\n".join(f"  {printable(p)}" for p in problems))
        print(printable(f"rebuild it: {mend}"))
    else:
        print(
            f"index {printable(str(args.index))}: sound ({engine} integrity check ok; "
            f"{documents} documents' chunk counts, vector counts and dimensions "
            "agree with their records and stamps)"
        )
    return OK if not problems else ERROR


def _ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UsageError('the question is empty; ask something, quoted: rag-lab ask "..."')
    _check_utf8(args.question)
    # The store stays open: the retriever reads the vectors once and the hits' texts last.
    with lifecycle.reading(args.index) as store:
        encoder = _encoder(index.resolve_backend(args.backend, store))
        retriever = index.retriever(store, encoder)
        failed = index.status(store, index.current_stamp(encoder.fingerprint)).failed
        _warn_if_long(args.question, encoder)
        result = answer(args.question, retriever, args.cutoff, k=args.k)
    if failed:
        print(
            f"note: {len(failed)} documents failed to index and are not searched "
            "(rag-lab status lists them)",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(output.answer_json(result), indent=1, ensure_ascii=False, allow_nan=False))
    elif isinstance(result, Refusal):
        print(printable(str(result)))
    else:
        output.print_answer(result, args.cutoff, args.prompt)
    return OK


def _check_utf8(question: str) -> None:
    """Refuse a question holding bytes that are not UTF-8 (kept by Python as surrogates):
    they cannot be embedded, and mean the terminal sends another encoding."""
    for at, c in enumerate(question):
        if 0xD800 <= ord(c) <= 0xDFFF:
            byte = f"byte {ord(c) - 0xDC00:#04x}" if ord(c) >= 0xDC80 else f"{c!r}"
            raise UsageError(
                f"the question is not valid UTF-8 ({byte} at character {at + 1}); is the "
                "terminal's encoding UTF-8? Ask it again in UTF-8"
            )


def _warn_if_long(question: str, encoder: Encoder) -> None:
    """Say so when the question is longer than the encoder's window (the rest is not read)."""
    window = encoder.fingerprint.max_seq_length
    count = getattr(encoder, "count_tokens", None)
    # A word-piece covers at least one character: a shorter question needs no count (nor
    # the tokenizer it loads).
    long = len(question) + 2 > window
    if count is not None and long and (n := count(question)) > window:
        print(
            f"warning: the question is {n:,} word-pieces; the encoder reads only the first "
            f"{window}, so the rest does not take part in the search",
            file=sys.stderr,
        )


def _evaluate(args: argparse.Namespace) -> int:
    # Imported here: only `evaluate` needs the evaluation library (and matplotlib).
    from rag_lab.evaluation import gate_report, regression, report

    questions, out = _evaluation_paths(args)
    # The baseline is read before minutes of embedding: a wrong path fails at once.
    baseline = None
    if args.baseline is not None:
        with _baseline_words(regression.BaselineError):
            baseline = regression.read_report(args.baseline)
    with _read_once(questions) as readable, _writing_into(out):
        if args.index is not None:
            evaluation = _evaluate_index(args, readable)
            written = report.write(evaluation, out)
        else:
            evaluation, written = report.run(
                args.corpus, readable, out, strategy=args.strategy, cutoff=args.cutoff
            )
    print(evaluation.intro)
    for title, table in evaluation.headline():
        print(f"\n{title}:\n{table.to_string()}")
    for note in evaluation.notes():
        print(f"\nnote: {note}")
    claimed = (
        f", {written.claims.name} (the chapter's claims on this corpus)"
        if evaluation.claims()
        else ""
    )
    drawn = f" and {len(written.figures)} figures in {out}/figures" if written.figures else ""
    print(f"\nwrote {written.markdown}, {written.json.name}{claimed}{drawn}")
    if baseline is None:
        return OK
    new = json.loads(written.json.read_text(encoding="utf-8"))
    with _baseline_words(regression.BaselineError):
        compared = regression.compare(
            baseline, new, max_drop=args.max_drop, baseline_path=str(args.baseline)
        )
    files = gate_report.write(compared, out)
    _print_comparison(compared)
    print(f"wrote {files.markdown}, {files.json.name} and {files.junit.name} (JUnit) in {out}")
    return REGRESSED if compared.regressed else OK


def _evaluate_index(args: argparse.Namespace, questions: Path) -> Evaluation:
    """``evaluate --index/--store``: the question file asked of the built index
    (:func:`rag_lab.evaluation.report.evaluate_index`); the corpus only checks the questions."""
    from rag_lab.evaluation import report
    from rag_lab.questions import load_questions
    from rag_lab.sources.chroma.questions import questions_kind
    from rag_lab.sources.d2l import load_corpus

    if args.strategy != index.STRATEGY:
        raise UsageError(
            f"--strategy {args.strategy}: a built index is chunked by strategy "
            f"{index.STRATEGY}, the indexer's; --strategy applies without --index/--store"
        )
    if questions_kind(questions) == "chroma-csv":
        raise UsageError(
            f"{questions}: Chroma's question format (answers as offsets) is measured on a "
            "corpus, not a built index; give a question file with needles, or drop "
            "--index/--store"
        )
    docs = load_corpus() if args.corpus is None else folder.load_folder(args.corpus)
    qset = load_questions(questions, docs, expected=None)
    with lifecycle.reading(args.index, check=True) as store:
        encoder = _encoder(index.resolve_backend(None, store))
        retriever = index.retriever(store, encoder)
        st = index.status(store, index.current_stamp(encoder.fingerprint))
        failed = [r.id for r in st.failed]
        return report.evaluate_index(
            docs,
            qset,
            retriever,
            index=str(args.index),
            failed=failed,
            strategy=index.STRATEGY,
            title=Path(str(args.index)).name or str(args.index),
            cutoff=args.cutoff,
            questions_file=questions,
        )


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


@contextlib.contextmanager
def _read_once(path: Path) -> Iterator[Path]:
    """A question file that can be read only once (``--questions <(...)``, /dev/stdin) as a
    regular file for the run: the evaluation reads it to tell its kind, to load it and to
    hash it. Problems found in it still name ``path``."""
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError:
        regular = True  # missing or unreadable: the loader says which
    if regular:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="rag-lab-questions-") as tmp:
        copy = Path(tmp) / (path.name or "questions")
        copy.write_bytes(path.read_bytes())
        try:
            yield copy
        except QuestionsError as err:
            if Path(err.path) != copy:
                raise
            raise QuestionsError(path, err.violations) from None


def _print_comparison(c: Comparison) -> None:
    """The gate's verdict on the terminal: what was paired, what changed, the metrics."""
    from rag_lab.evaluation import gate_report

    print(f"\nagainst the baseline {c.baseline_path}: {c.coverage}")
    for note in c.not_compared:
        print(f"  not compared: {note}")
    for stamp, old, new in c.changes:
        print(f"  changed {stamp}: {old} -> {new}")
    if not c.changes:
        print("  the stamps are the same (corpus, questions, chunker, encoder, cutoff, version)")
    print(f"\n{gate_report.metrics_frame(c).to_string()}")
    lost = sum(bool(f.lost) for f in c.flips)
    listed = "; regression.md lists them" if c.flips else ""
    print(f"\n{len(c.flips)} queries flipped ({lost} lost at some k){listed}")
    print(f"\n{c.summary}")


def _evaluation_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    """The question file and the report folder of ``evaluate``, checked before computing:
    a mistake found after minutes of embedding is a mistake twice."""
    if args.corpus is not None and args.questions is None:
        raise UsageError("--questions FILE is required with --corpus DIR")
    if args.max_drop is not None and args.baseline is None:
        raise UsageError("--max-drop X needs --baseline FILE, the run it drops from")
    questions = args.questions or lab_questions()
    if args.corpus is not None and not args.corpus.is_dir():
        raise UsageError(f"{args.corpus}: not a folder (--corpus DIR)")
    if questions.is_dir():
        raise UsageError(f"{questions}: a folder, not a question file (--questions FILE)")
    name = (args.corpus or corpus_dir()).resolve().name
    out = args.out or Path("reports") / name
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: an existing file, not a folder; give another --out DIR")
    place = next(p for p in (out, *out.parents) if p.exists())
    if not place.is_dir() or not os.access(place, os.W_OK):
        raise UsageError(f"cannot write the report: {place} is not a writable folder (--out DIR)")
    return questions, out


def _pdf_options(args: argparse.Namespace) -> folder.PdfOptions:
    return folder.PdfOptions(
        extractor=args.pdf_extractor,
        keep_running_lines=args.keep_running_lines,
        ocr=args.ocr,
        ocr_min_confidence=args.ocr_min_confidence,
    )


def _encoder(backend: str) -> Encoder:
    """The encoder for ``backend``; a missing ONNX Runtime is a usage error, not a crash."""
    try:
        return Encoder(backend=backend)
    except ImportError as err:
        raise UsageError(
            f"the {backend} backend needs {err.name or 'a package'} ({err}); install the "
            "extra (pip install 'rag_lab[onnx]'), or choose another --backend"
        ) from None


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


# --- output ---------------------------------------------------------------------------


# --- the parser -----------------------------------------------------------------------

_RUN = {"index": _index, "status": _status, "retry": _retry, "ask": _ask, "evaluate": _evaluate}
"""The body of each subcommand of :data:`rag_lab.app.arguments.COMMANDS`."""


def _parser() -> argparse.ArgumentParser:
    """``rag-lab`` and its subcommands, each with its summary, arguments and body."""
    parser = arguments.root_parser()
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", title="commands"
    )
    for name, (summary, define) in arguments.COMMANDS.items():
        sub = commands.add_parser(
            name, help=summary, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        define(sub)
        sub.set_defaults(run=_RUN[name])
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
