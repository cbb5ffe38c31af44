"""``rag-lab``: the lab on your own documents, from a folder of Markdown to an evaluation report.

Thin on purpose: every command parses its arguments, calls one function of the package
(:mod:`rag_lab.app.ingest`, :mod:`rag_lab.app.index`, :mod:`rag_lab.pipeline`,
:mod:`rag_lab.evaluation.report`) and prints the result. Errors are one line each on stderr,
naming the file, the line where there is one, and the reason.

One error discipline: every fault of the input or the environment (a bad option, a
missing or foreign file, a damaged or busy index, an unwritable place) exits 2 with one
line saying what, where and what to do; 1 means only "some documents failed to index";
130 is Ctrl-C, after which the index is consistent (documents are written whole). No
traceback reaches the user unless ``--debug``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from rag_lab import __version__, paths
from rag_lab.app import index, ingest
from rag_lab.app.store import (
    BUSY_SECONDS,
    SQLiteStore,
    Store,
    StoreError,
    inspect_file,
    writer_lock,
)
from rag_lab.gate import MAX_KEPT
from rag_lab.models.encoder import BACKENDS, Encoder
from rag_lab.models.minilm import ModelError
from rag_lab.pipeline import Answer, Refusal, answer
from rag_lab.questions import QuestionsError
from rag_lab.sources import folder
from rag_lab.sources.d2l import CorpusError, corpus_dir
from rag_lab.sources.pdf import document as pdf
from rag_lab.text import shorten

CUTOFF = 0.675
"""The chapter's cutoff: a chunk is kept only when its cosine distance is strictly under it."""

OK, PARTIAL, ERROR, INTERRUPTED = 0, 1, 2, 130
MAX_CUTOFF = 2.0
"""Cosine distance runs from 0 (same direction) to 2 (opposite)."""


class UsageError(ValueError):
    """Arguments that parse but do not go together."""


_DESCRIPTION = """\
The lab on your own documents. Index a folder of Markdown, plain-text and PDF files into a
stamped index, ask it questions (cited sources, or an honest refusal), and measure
chunking, retrieval and the refusal gate against a question file of the lab's schema.
"""

_EPILOG = f"""\
the three steps:
  rag-lab index docs/                          chunk, embed and store every file
  rag-lab ask "how do I rotate the API key?"   the sources that answer, or NO ANSWER
  rag-lab evaluate --corpus docs/ --questions questions.yaml

The index is --index PATH (default ${index.INDEX_ENV}, else {index.DEFAULT_PATH}).
Exit status: 0 done; 1 some documents failed to index (the others are searchable);
2 bad input or environment (one line says what, where and what to do), or an index that
cannot be searched; 130 interrupted (the index stays consistent: run again to resume).
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rag-lab`` with ``argv`` (default: the command line); return the exit status."""
    args = _parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        problems = [
            "interrupted; the index is consistent (each document is written whole or not "
            "at all): run the same command again to resume"
        ]
        status = INTERRUPTED
    except (
        CorpusError,
        ModelError,
        StoreError,
        index.IndexNotReady,
        folder.IngestError,
        QuestionsError,
        UsageError,
    ) as err:
        if debug:
            raise
        problems, status = _problems(err), ERROR
    except sqlite3.DatabaseError as err:
        if debug:
            raise
        problems, status = [_database_problem(err, getattr(args, "index", None))], ERROR
    except OSError as err:
        if debug:
            raise
        where = f"{err.filename}: " if err.filename else ""
        problems, status = [f"{where}{err.strerror or err}"], ERROR
    except Exception as err:  # a bug: still one line, and the way to the traceback
        if debug:
            raise
        problems = [
            f"internal error: {type(err).__name__}: {' '.join(str(err).split())} "
            "(run again with --debug for the traceback, and please report it)"
        ]
        status = ERROR
    for line in problems:
        print(f"rag-lab {args.command}: {line}", file=sys.stderr)
    return status


# --- commands -----------------------------------------------------------------------


def _index(args: argparse.Namespace) -> int:
    if not args.folder.is_dir():  # before any file is created
        raise UsageError(f"{args.folder}: not a folder")
    inspect_file(args.index)  # a foreign file is refused before a lock is written beside it
    _writable(args.index)
    with writer_lock(args.index):
        if args.rebuild:
            return _rebuild(args)
        with index.open_index(args.index) as store:
            _sound(store)
            backend = _index_backend(store, args.backend)
            encoder = _encoder(backend)
            store.set_meta(index.BACKEND_KEY, backend)
            print(f"indexing {args.folder.resolve()} into {args.index} (encoder: {backend})")
            report = ingest.index_folder(
                args.folder,
                store,
                encoder,
                prune=args.prune,
                follow_symlinks=args.follow_symlinks,
                pdf=_pdf_options(args),
            )
            _print_report(report, store)
    return PARTIAL if report.failed else OK


def _rebuild(args: argparse.Namespace) -> int:
    """A fresh index beside the old one, swapped in when complete (works on a damaged one).

    Its backend is ``--backend``, else the old index's, else :data:`index.DEFAULT_BACKEND`:
    a rebuild is how an index changes backend.
    """
    root = args.folder.resolve()
    held = None
    backend = args.backend
    if args.index.exists():
        try:
            with index.open_index(args.index, readonly=True) as old:
                held = old.meta("folder")
                if backend is None:
                    try:
                        backend = index.recorded_backend(old)
                    except StoreError:  # an unknown backend: the rebuild replaces it
                        backend = None
        except sqlite3.DatabaseError:
            print(f"note: {args.index} is damaged; building a fresh index", file=sys.stderr)
    backend = backend or index.DEFAULT_BACKEND
    if held is not None and held != str(root):
        raise folder.IngestError(
            [f"this index holds {held}, not {root}; index another folder with --index PATH"]
        )
    fresh = args.index.with_name(args.index.name + ".rebuild")
    journals = [Path(f"{p}-journal") for p in (fresh, args.index)]
    for stale in (fresh, journals[0]):
        stale.unlink(missing_ok=True)
    encoder = _encoder(backend)
    print(
        f"rebuilding {root} into {args.index} (encoder: {backend}; a fresh file, swapped in "
        "when complete)"
    )
    try:
        with SQLiteStore(fresh) as store:
            store.set_meta(index.BACKEND_KEY, backend)
            report = ingest.index_folder(
                root,
                store,
                encoder,
                rebuild=True,
                follow_symlinks=args.follow_symlinks,
                pdf=_pdf_options(args),
            )
            _print_report(report, store)
        # A hot journal of the old file must never be played into the new one.
        journals[1].unlink(missing_ok=True)
        os.replace(fresh, args.index)
    finally:
        for leftover in (fresh, journals[0]):
            leftover.unlink(missing_ok=True)
    return PARTIAL if report.failed else OK


def _retry(args: argparse.Namespace) -> int:
    _existing(args.index).close()  # a missing file is an error, a foreign one refused
    _writable(args.index)
    with writer_lock(args.index), index.open_index(args.index) as store:
        _sound(store)
        report = ingest.retry(store, _encoder(_query_backend(store, None, args.index)))
        _print_report(report, store)
    return PARTIAL if report.failed else OK


def _status(args: argparse.Namespace) -> int:
    with _existing(args.index) as store:
        if args.check:
            return _check(args, store)
        _sound(store)
        encoder = _encoder(_query_backend(store, None, args.index))
        st = index.status(store, index.current_stamp(encoder.fingerprint))
    if args.json:
        print(json.dumps(_status_json(st), indent=1, allow_nan=False))
        return OK
    print(f"index {args.index} of folder {st.folder}")
    print(index.describe(st))
    return OK


def _check(args: argparse.Namespace, store: SQLiteStore) -> int:
    problems = index.check(store)
    n = len(store.documents()) if not problems or not problems[0].startswith("SQLite") else 0
    if args.json:
        print(json.dumps({"index": str(args.index), "ok": not problems, "problems": problems}))
    elif problems:
        print(f"index {args.index}: {len(problems)} problems")
        print("\n".join(f"  {p}" for p in problems))
        print(f"rebuild it: rag-lab index {store.meta('folder') or 'DIR'} --rebuild")
    else:
        print(
            f"index {args.index}: sound (SQLite integrity check ok; {n} documents' chunk "
            "counts, vector counts and dimensions agree with their records and stamps)"
        )
    return OK if not problems else ERROR


def _ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UsageError('the question is empty; ask something, quoted: rag-lab ask "..."')
    # The store stays open: the retriever reads the vectors once and the hits' texts last.
    with _existing(args.index) as store:
        encoder = _encoder(_query_backend(store, args.backend, args.index))
        retriever = index.retriever(store, encoder)
        failed = index.status(store, index.current_stamp(encoder.fingerprint)).failed
        window = encoder.fingerprint.max_seq_length
        count = getattr(encoder, "count_tokens", None)
        # A word-piece covers at least one character: a shorter question needs no count
        # (nor the tokenizer it loads).
        long = len(args.question) + 2 > window
        if count is not None and long and (n := count(args.question)) > window:
            print(
                f"warning: the question is {n:,} word-pieces; the encoder reads only the first "
                f"{window}, so the rest does not take part in the search",
                file=sys.stderr,
            )
        result = answer(args.question, retriever, args.cutoff, k=args.k)
    if failed:
        print(
            f"note: {len(failed)} documents failed to index and are not searched "
            "(rag-lab status lists them)",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(_answer_json(result), indent=1, ensure_ascii=False, allow_nan=False))
    elif isinstance(result, Refusal):
        print(result)
    else:
        _print_answer(result, args.cutoff, args.prompt)
    return OK


def _evaluate(args: argparse.Namespace) -> int:
    # Imported here: only `evaluate` needs the evaluation library (and matplotlib).
    from rag_lab.evaluation import report

    if args.corpus is not None and args.questions is None:
        raise UsageError("--questions FILE is required with --corpus DIR")
    questions = args.questions or paths.QUESTIONS
    # Paths first: a mistake found after minutes of embedding is a mistake twice.
    if args.corpus is not None and not args.corpus.is_dir():
        raise UsageError(f"{args.corpus}: not a folder (--corpus DIR)")
    if questions.is_dir():
        raise UsageError(f"{questions}: a folder, not a question file (--questions FILE)")
    name = (args.corpus or corpus_dir()).resolve().name
    out = args.out or Path("reports") / name
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: an existing file, not a folder; give another --out DIR")
    _writable_folder(out)
    evaluation, written = report.run(args.corpus, questions, out)
    print(evaluation.intro)
    for title, table in evaluation.headline():
        print(f"\n{title}:\n{table.to_string()}")
    for note in evaluation.notes():
        print(f"\nnote: {note}")
    print(
        f"\nwrote {written.markdown}, {written.json.name} and {len(written.figures)} figures "
        f"in {out}/figures"
    )
    return OK


def _pdf_options(args: argparse.Namespace) -> folder.PdfOptions:
    return folder.PdfOptions(
        extractor=args.pdf_extractor,
        keep_running_lines=args.keep_running_lines,
        ocr=args.ocr,
        ocr_min_confidence=args.ocr_min_confidence,
    )


# --- encoders -------------------------------------------------------------------------


def _encoder(backend: str) -> Encoder:
    """The encoder for ``backend``; a missing ONNX Runtime is a usage error, not a crash."""
    try:
        return Encoder(backend=backend)
    except ImportError as err:
        raise UsageError(
            f"the {backend} backend needs {err.name or 'a package'} ({err}); install the "
            "extra (pip install 'rag_lab[onnx]'), or choose another --backend"
        ) from None


def _index_backend(store: Store, requested: str | None) -> str:
    """The backend to index with: ``--backend``, else the index's, else the default.

    Changing the backend of an index that holds vectors is refused (exit 2) unless it is
    rebuilt: the old and the new vectors would not be comparable.
    """
    held = index.recorded_backend(store)
    if requested is not None and held is not None and requested != held:
        raise UsageError(
            f"this index was built with the {held} encoder backend, and vectors of {requested} "
            "are not comparable with them; re-embed every document with: "
            f"rag-lab index {store.meta('folder') or 'DIR'} --rebuild --backend {requested}"
        )
    return requested or held or index.DEFAULT_BACKEND


def _query_backend(store: Store, requested: str | None, path: Path) -> str:
    """The backend to embed a query with: the one the index was built with.

    A ``--backend`` that differs from it is refused (exit 2): its query vector would be
    compared with vectors of another encoder. An index with no vectors yet takes
    ``requested``, else the default (the search then says nothing is indexed).
    """
    held = index.recorded_backend(store)
    if requested is not None and held is not None and requested != held:
        raise UsageError(
            f"the index {path} was built with the {held} encoder backend; a question "
            f"embedded by {requested} is not comparable with its vectors. Leave out "
            f"--backend (ask uses the index's), or rebuild the index with it: rag-lab index "
            f"{store.meta('folder') or 'DIR'} --rebuild --backend {requested}"
        )
    return held or requested or index.DEFAULT_BACKEND


# --- output ---------------------------------------------------------------------------


def _print_report(report: ingest.IngestReport, store: Store) -> None:
    print(report.summary())
    for doc_id, reason in report.failed.items():
        record = store.document(doc_id)
        print(f"  failed {record.path if record else doc_id}: {reason}")
    for path, why in report.not_followed.items():
        print(f"  not followed {path}: {why}")
    if report.running_lines:
        lines, pdfs = sum(report.running_lines.values()), len(report.running_lines)
        print(
            f"running headers and footers removed: {lines} lines in {pdfs} "
            f"PDF{'s' * (pdfs != 1)} (lines repeated at the top or bottom of most pages; "
            "--keep-running-lines keeps them)"
        )
    for doc_id, pages in report.flagged.items():
        record = store.document(doc_id)
        print(
            f"  low OCR confidence {record.path if record else doc_id}: "
            f"{index.pages_label(pages)} (their text may be wrong; citations of them are marked)"
        )
    if report.stale:
        print(
            f"{len(report.stale)} documents were embedded with another stamp and are stale; "
            f"queries are refused until you run: rag-lab index {store.meta('folder')} --rebuild"
        )


def _print_answer(result: Answer, cutoff: float, show_prompt: bool) -> None:
    n = len(result.citations)
    print(
        f"{n} source{'s' * (n != 1)} under cosine distance {cutoff}; the prompt is "
        f"{len(result.prompt):,} characters (no generator is called; --prompt prints it)"
    )
    for c in result.citations:
        print(f"[{c.index}] {c.distance:.3f}  {c.href}  {c.document_name} — {c.locator_label}")
        if c.warning:
            print(f"    (!) low-confidence OCR text, {c.warning}")
        quote = " ".join(c.quote.split())
        print(textwrap.indent(shorten(quote, 200), "    "))
    if show_prompt:
        print(f"\n{result.prompt}")


def _answer_json(result: Answer | Refusal) -> dict:
    if isinstance(result, Refusal):
        return {
            "question": result.question,
            "answered": False,
            "cutoff": result.cutoff,
            "nearest": result.nearest,
            "message": str(result),
        }
    return {
        "question": result.question,
        "answered": True,
        "prompt": result.prompt,
        "citations": [
            {
                "index": c.index,
                "href": c.href,
                "document_id": c.document_id,
                "document_name": c.document_name,
                "section": c.locator_label,
                "distance": c.distance,
                "quote": c.quote,
                "warning": c.warning,
            }
            for c in result.citations
        ],
    }


def _status_json(st: index.IndexStatus) -> dict:
    return {
        "folder": st.folder,
        "counts": st.counts,
        "chunks": st.chunks,
        "failed": {r.id: r.reason for r in st.failed},
        "stale": [r.id for r in st.stale],
        "stamps": [{"documents": n, **asdict(s)} for s, n in st.stamps.items()],
        "current": asdict(st.current),
        "pdfs": st.pdfs,
        "running_lines_removed": st.running_lines,
        "low_confidence_pages": {path: list(pages) for path, pages in st.flagged.items()},
    }


def _problems(err: Exception) -> list[str]:
    """One line per problem, each naming its file (and line) where the error knows it."""
    if isinstance(err, QuestionsError):
        return [v.render(err.path) for v in err.violations]
    if isinstance(err, folder.IngestError):
        return err.problems
    return [" ".join(str(err).split())]


def _existing(path: Path) -> SQLiteStore:
    """The index at ``path``, read-only; a missing file is an error, not a new empty index."""
    if not path.exists():
        raise index.EmptyIndexError(f"no index at {path}: run rag-lab index DIR first")
    return index.open_index(path, readonly=True)


def _writable(path: Path) -> None:
    """Refuse an index file, or a folder to create it in, that this process cannot write."""
    place = path if path.exists() else next(p for p in path.parents if p.exists())
    if not os.access(place, os.W_OK):
        what = "file" if place == path else "folder"
        raise StoreError(
            f"cannot write the index: the {what} {place} is read-only; make it writable "
            "or choose another file with --index PATH"
        )
    if path.exists() and not os.access(path.parent, os.W_OK):
        raise StoreError(
            f"cannot write the index: its folder {path.parent} is read-only (SQLite writes a "
            "journal beside the file); make it writable or choose another --index PATH"
        )


def _writable_folder(folder: Path) -> None:
    place = next(p for p in (folder, *folder.parents) if p.exists())
    if not place.is_dir() or not os.access(place, os.W_OK):
        raise UsageError(f"cannot write the report: {place} is not a writable folder (--out DIR)")


def _sound(store: SQLiteStore) -> None:
    """A quick SQLite check before using an index: a damaged file is an error, not a crash."""
    problems = store.integrity(quick=True)
    if problems:
        raise StoreError(_damaged(store.path, problems[0]))


def _damaged(path: Path | None, what: str) -> str:
    return (
        f"the index {path} is damaged ({what}); see rag-lab status --check --index {path}, "
        "and rebuild it with rag-lab index DIR --rebuild"
    )


def _database_problem(err: sqlite3.DatabaseError, path: Path | None) -> str:
    """SQLite's error as one line saying what to do."""
    message = " ".join(str(err).split())
    if "locked" in message or "busy" in message:
        return (
            f"the index {path} is locked by another process (waited {BUSY_SECONDS:g} s); "
            "run again when it is done"
        )
    if "readonly" in message or "read-only" in message:
        return (
            f"cannot write the index {path} ({message}); make the file and its folder "
            "writable, or choose another --index PATH"
        )
    if "unable to open" in message or "disk I/O" in message or "full" in message:
        return f"cannot use the index {path} ({message}); check the disk and its permissions"
    return _damaged(path, message)


# --- arguments ------------------------------------------------------------------------


def _paragraphs(*texts: str) -> str:
    """Help text: each paragraph re-wrapped to 88 columns, blank lines between them."""
    return "\n\n".join(textwrap.fill(" ".join(t.split()), 88) for t in texts)


def _cutoff(text: str) -> float:
    """A cosine-distance cutoff: a finite number in [0, 2]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0 <= value <= MAX_CUTOFF:
        raise argparse.ArgumentTypeError(
            f"{text} is not a cosine distance: give a number from 0 to {MAX_CUTOFF:g}"
        )
    return value


def _confidence(text: str) -> float:
    """An OCR confidence threshold: a number in [0, 100]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text}: a confidence runs from 0 to 100")
    return value


def _positive(text: str) -> int:
    """A count of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give at least 1")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-lab",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rag-lab {__version__}")
    debug = "show the Python traceback of an error (for reporting a bug)"
    parser.add_argument("--debug", action="store_true", help=debug)
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: without it the subcommand's default would overwrite `rag-lab --debug CMD`.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug)
    where = argparse.ArgumentParser(add_help=False, parents=[common])
    where.add_argument(
        "--index",
        type=Path,
        default=index.default_path(),
        metavar="PATH",
        help=f"the index file (default: ${index.INDEX_ENV}, else {index.DEFAULT_PATH})",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", title="commands"
    )

    def command(name: str, summary: str, description: str, parents=(where,)):
        return commands.add_parser(
            name,
            help=summary,
            description=description,
            parents=list(parents) or [common],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    sub = command(
        "index",
        "index a folder of .md, .markdown, .txt and .pdf files",
        _paragraphs(
            f"""Chunk every .md, .markdown, .txt and .pdf file under DIR (hidden folders skipped;
            with a {folder.MANIFEST} file in DIR, only the files it lists) with strategy
            {index.STRATEGY} (paragraph boundaries + a [Title > Section] header), embed it and
            store it, stamped with the model and the pipeline version
            ({index.PIPELINE_VERSION}).""",
            f"""Unchanged files are skipped by sha256; failed ones are re-attempted. A file
            that cannot be read (not UTF-8, empty, binary, over {folder.MAX_BYTES // 2**20} MB or
            {folder.MAX_PDF_BYTES // 2**20} MB for a PDF,
            unreadable) ends "failed" with its reason and the others are indexed, and so
            does a document under a subfolder that cannot be listed. Documents embedded with
            another stamp are marked "stale" and kept as they are until you pass --rebuild;
            files gone from DIR are removed from the index, but a run that would remove
            more than half of the documents is refused unless you pass --prune. Symbolic
            links are followed only inside DIR; the others are reported.""",
            """PDFs: their text is extracted page by page (PDFium by default) and their
            running headers and footers (lines repeated at the top or bottom of most pages)
            are removed; a citation names the file, the page and the characters
            (manual.pdf#page=3&char=120,480). An encrypted or malformed PDF fails with the
            parser's reason, a scan (no text layer) fails unless --ocr.""",
        ),
    )
    sub.add_argument("folder", type=Path, metavar="DIR", help="the folder to index")
    sub.add_argument(
        "--rebuild",
        action="store_true",
        help="build a fresh index with this pipeline beside the old one and swap it in "
        "(re-embeds stale documents; works on a damaged index)",
    )
    sub.add_argument(
        "--prune",
        action="store_true",
        help="allow removing more than half of the indexed documents (files really gone)",
    )
    sub.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the encoder that embeds the chunks (default: the index's, else "
        f"{index.DEFAULT_BACKEND}); a query is always embedded with the index's backend, "
        "and changing it needs --rebuild",
    )
    sub.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="also follow symbolic links that leave DIR, and symlinked folders",
    )
    sub.add_argument(
        "--pdf-extractor",
        choices=pdf.EXTRACTORS,
        default=pdf.DEFAULT_EXTRACTOR,
        help=f"the library that extracts a PDF's text (default {pdf.DEFAULT_EXTRACTOR}, the "
        "fastest); changing it re-reads every PDF",
    )
    sub.add_argument(
        "--keep-running-lines",
        action="store_true",
        help="keep the running headers and footers of PDFs (removed by default: repeated on "
        "every page, they would be in every chunk and match every query about them)",
    )
    sub.add_argument(
        "--ocr",
        action="store_true",
        help=f"read PDFs without a text layer (scans) with Tesseract at {pdf.OCR_DPI} dpi "
        "(Debian: apt-get install tesseract-ocr); each page's mean word confidence is kept. "
        "Give it on every run: without it a scan fails again as having no text layer (an "
        "unchanged scan is not read again)",
    )
    sub.add_argument(
        "--ocr-min-confidence",
        type=_confidence,
        default=pdf.OCR_MIN_CONFIDENCE,
        metavar="N",
        help=f"flag OCR pages whose mean word confidence (0-100) is under N (default "
        f"{pdf.OCR_MIN_CONFIDENCE:g}: on clean scans Tesseract's mean is in the 90s, and under "
        "80 misread words are common enough to change what a quote says); flagged pages are "
        "listed by the report and status, and marked in ask's citations",
    )
    sub.set_defaults(run=_index)

    sub = command(
        "status",
        "documents by status, failures with reasons, stamps",
        _paragraphs(
            """Count the documents of the index by status (indexed, failed, stale), list each
            failure with its reason, and show which stamps (model, pipeline, extractor) their
            vectors carry. A document whose stamp is not the current one counts as stale."""
        ),
    )
    sub.add_argument("--json", action="store_true", help="print JSON instead of text")
    sub.add_argument(
        "--check",
        action="store_true",
        help="verify the file: SQLite's integrity check, and every document's chunk count, "
        "vector count and dimensions against its record and stamp (exit 2 on a problem)",
    )
    sub.set_defaults(run=_status)

    sub = command(
        "retry",
        "re-attempt the documents that failed",
        _paragraphs(
            """Read and index again every failed document of the index's folder, and only
            those (after you fixed the files, or when the failure was transient)."""
        ),
    )
    sub.set_defaults(run=_retry)

    sub = command(
        "ask",
        "the sources that answer a question, or NO ANSWER",
        _paragraphs(
            f"""Embed the question, take the {MAX_KEPT} nearest chunks of the index and keep
            those whose cosine distance is strictly under --cutoff. Prints each kept source
            with its distance and a locator (document#char=start,end: the characters it
            quotes; for a PDF file.pdf#page=N&char=start,end, N the page the quote starts on,
            labelled p. N or pp. N-M) and the size of the prompt a generator would get; when
            nothing passes,
            the refusal line. No generator is called. A stale index (vectors of another model
            or pipeline) is refused with the list of stale documents."""
        ),
    )
    sub.add_argument("question", help="the question, quoted")
    sub.add_argument(
        "--cutoff",
        type=_cutoff,
        default=CUTOFF,
        help=f"cosine-distance cutoff (default {CUTOFF}, the chapter's; lower refuses more)",
    )
    sub.add_argument(
        "-k",
        type=_positive,
        default=MAX_KEPT,
        help=f"nearest chunks considered (default {MAX_KEPT})",
    )
    sub.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the encoder that embeds the question (default, and the only one accepted: the "
        "backend the index was built with)",
    )
    sub.add_argument("--prompt", action="store_true", help="also print the full prompt")
    sub.add_argument("--json", action="store_true", help="print JSON instead of text")
    sub.set_defaults(run=_ask)

    sub = command(
        "evaluate",
        "the notebooks' headline tables for a corpus and a question file",
        _paragraphs(
            """Chunking (six strategies: sizes, destroyed answers, word-pieces), dense
            retrieval over the six with Wilson intervals and paired sign tests, dense vs BM25
            vs hybrid on strategy E, and distances and the refusal gate (bluffs and refusals
            by cutoff): the headline tables of notebooks 02-06, written as report.md,
            report.json and figures/*.png.""",
            """The question file follows data/questions.yaml (schema in rag_lab/questions.py);
            every problem in it is reported with its line. Without --corpus and --questions:
            the lab's own corpus and questions, and the notebooks' numbers, exactly.""",
        ),
        parents=(),
    )
    sub.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="a folder read like `index` reads it; every file must be readable",
    )
    sub.add_argument(
        "--questions",
        type=Path,
        metavar="FILE",
        help="the question file (required with --corpus; default data/questions.yaml)",
    )
    sub.add_argument(
        "--out", type=Path, metavar="DIR", help="where to write (default reports/<corpus name>)"
    )
    sub.set_defaults(run=_evaluate)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
