"""``rag-lab``: the lab on your own documents, from a folder of Markdown to an evaluation report.

The command: its root parser (:func:`root_parser`) with each subcommand's arguments
(:mod:`rag_lab.app.arguments`), the subcommand's body (:mod:`rag_lab.app.commands`) run,
and what went wrong worded.

One error discipline: the package raises facts (:mod:`rag_lab.errors`), and this module
words them, one line each on stderr saying what, where and what to do (the commands and
options to type are named here, and in the command bodies' own refusals);
:data:`~rag_lab.app.exits.EXIT_STATUS` maps them to exit statuses (:mod:`rag_lab.app.exits`
says what each means). No traceback reaches the user unless ``--debug``. Under ``--json`` an
error is also one JSON object on stdout, ``{"error": <the words said on stderr>,
"exit_status": N}`` (:func:`json_error`), argparse's refusals
included, so a program reading stdout always gets JSON. Output is written in whatever
encoding stdout has, characters it cannot encode as ``\\uXXXX``.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from rag_lab import __version__, environ
from rag_lab.app import arguments, lifecycle, terminal, values
from rag_lab.app.commands.ask import run_ask
from rag_lab.app.commands.evaluate import run_evaluate
from rag_lab.app.commands.indexing import run_index, run_retry
from rag_lab.app.commands.questions import run_questions
from rag_lab.app.commands.status import run_status
from rag_lab.app.exits import CLOSED, TERMINATED, exit_status, nearest
from rag_lab.app.index import (
    DEFAULT_PATH,
    INDEX_ENV,
    BackendMismatch,
    DamagedMeta,
    EmptyIndexError,
    Location,
    OneBackend,
    StaleIndexError,
    UnknownBackend,
)
from rag_lab.app.ingest import OtherFolder
from rag_lab.app.store import (
    DiskFull,
    IndexBusy,
    IndexContended,
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
from rag_lab.errors import RagLabError
from rag_lab.questions import QuestionsError
from rag_lab.sources import folder
from rag_lab.text import printable


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rag-lab`` with ``argv`` (default: the command line); return the exit status."""
    with terminal.escaped_streams():  # every string printed, escaped for the terminal
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if getattr(args, "store", None) is not None:  # --store URI: the index is on Milvus
        args.index = args.store
    elif getattr(args, "index", None) is not None:  # a link's target: a rebuild keeps the link
        args.index = lifecycle.index_file(args.index)
    cut_short = _interrupted(args.command, "terminated (SIGTERM), its clean-up cut short")
    with terminal.sigterm_as_interrupt(f"rag-lab {args.command}: {cut_short}") as signalled:
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
    """The error's lines on stderr; with ``--json``, also :func:`json_error`
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
            print(json_error("\n".join(lines), status), flush=True)
        except BrokenPipeError:
            terminal.silence(sys.stdout)


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
    IndexMissing: ": run rag-lab index DIR{where} first",
    EmptyIndexError: ": run rag-lab index DIR{where} first",
    StaleIndexError: "{where}",  # completes the rebuild command its words end with
    NotOurFile: "; refusing to touch it; choose {another}",
    NotAFile: "; give a file: --index PATH",
    OtherSchema: ". Index the folder again into a new {new}.",
    IndexDamaged: (
        "; see rag-lab status --check {named}, and rebuild it with "
        "rag-lab index DIR --rebuild{where}"
    ),
    IndexLocked: "; run again when it is done",
    IndexNotIndexed: "; rag-lab index DIR{where} again waits for it (nothing is indexed twice)",
    IndexBusy: ". Let it finish, or stop that process, and run again",
    IndexNeedsRecovery: (
        ". Make the file and its folder writable, then run rag-lab status {named}: "
        "opening it rolls the journal back"
    ),
    IndexReadOnly: "; make it writable, or choose {another}",
    IndexInaccessible: "; check the disk and its permissions",
    DiskFull: "; free space on it, then run the same command again",
    IndexContended: (
        "; run one writer per index name at a time, and this command again when the other is done"
    ),
    UnknownBackend: "; rebuild it: rag-lab index {folder} --rebuild{where}",
    OneBackend: "; leave out --backend (the encoder's own is used), or choose another --encoder",
    lifecycle.IndexNameTooLong: "; choose a shorter name: --index PATH",
    DamagedMeta: (
        ". Index the folder with the PDF options you want (--pdf-extractor, "
        "--keep-running-lines, --ocr): rag-lab index {folder}{where} records them again, and "
        "reads the failed documents with them"
    ),
}
"""What to do, after a fact's own words: by the nearest class in its MRO. ``{folder}`` is the
folder the index holds (``DIR`` when it does not say); the index is named as it was given
(:func:`_index_words`): ``{named}`` its option, ``{where}`` what a command adds to act on it,
``{another}`` and ``{new}`` how to give another."""


def _problems(err: BaseException, args: argparse.Namespace) -> list[str]:
    """One line per problem, each naming its file (and line) where the error knows it,
    and saying what to do."""
    if isinstance(err, QuestionsError):
        return [v.render(err.path) for v in err.violations]
    if isinstance(err, OtherFolder):
        return [f"{err.problems[0]}: {_index_words(args.index, None)['option']}"]
    if isinstance(err, folder.IngestError):
        return err.problems
    if isinstance(err, BackendMismatch):
        return [_mismatch(err, args)]
    if isinstance(err, RagLabError):
        return [_one_line(err) + _advice(err, args)]
    if isinstance(err, MemoryError):
        return [_out_of_memory(err)]
    if isinstance(err, OSError):
        where = f"{err.filename}: " if err.filename else ""
        return [f"{where}{err.strerror or err}"]
    how = "the traceback is above" if args.debug else "run again with --debug for the traceback"
    return [f"internal error: {type(err).__name__}: {_one_line(err)} ({how}, and please report it)"]


def _advice(err: RagLabError, args: argparse.Namespace) -> str:
    cls = nearest(err, _ADVICE)
    if cls is None:
        return ""
    given = getattr(args, "index", None)
    if isinstance(given, MilvusLocation) and not given.local and cls is IndexInaccessible:
        return "; check that the server runs, and its address and port"
    folder = getattr(err, "folder", None) or "DIR"
    return _ADVICE[cls].format(folder=folder, **_index_words(given, getattr(err, "path", None)))


def _index_words(given: Location | None, path: object) -> dict[str, str]:
    """The index in a command's advice as the user gave it (``--index PATH`` or ``--store
    URI``), so that a command to type acts on it and not on the default SQLite file; a
    SQLite file named by the fact's own ``path`` (the file it found wrong)."""
    milvus = isinstance(given, MilvusLocation)
    named = given if milvus or path is None else path
    return {
        "named": values.index_option(named) if named is not None else "--index PATH",
        "where": values.index_in_command(given),
        "another": "another --store URI#NAME" if milvus else "another file with --index PATH",
        "new": "index (--store URI#NAME)" if milvus else "file (--index PATH)",
        "option": "--store URI#NAME" if milvus else "--index PATH",
    }


def _mismatch(err: BackendMismatch, args: argparse.Namespace) -> str:
    """A ``--backend`` or ``--encoder`` (``err.option``) the index was not built with: what
    ``ask``, ``evaluate --index`` or ``index`` can do."""
    option = f"--{err.option}"
    where = values.index_in_command(getattr(args, "index", None))
    rebuild = f"rag-lab index {err.folder or 'DIR'} --rebuild {option} {err.requested}{where}"
    if args.command in ("ask", "evaluate"):
        return (
            f"the index {args.index} was built with the {err.held} {err.what}; a question "
            f"embedded by {err.requested} is not comparable with its vectors. Leave out "
            f"{option} ({args.command} uses the index's), or rebuild the index with it: {rebuild}"
        )
    return (
        f"this index was built with the {err.held} {err.what}, and vectors of "
        f"{err.requested} are not comparable with them; re-embed every document with: {rebuild}"
    )


def _out_of_memory(err: MemoryError) -> str:
    """A process that ran out of memory: what it was doing, if known, and its limit on
    address space (``ulimit -v``), if it has one."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    what = f" ({_one_line(err)})" if str(err) else ""
    limit = (
        ""
        if soft == resource.RLIM_INFINITY
        else f": this process may use {soft // 2**20:,} MiB of address space (ulimit -v)"
    )
    return f"out of memory{what}{limit}; raise the limit or free memory, then run again"


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


# --- the parser -----------------------------------------------------------------------

DESCRIPTION = """\
The lab on your own documents. Index a folder of Markdown, plain-text and PDF files into a
stamped index, ask it questions (cited sources, or an honest refusal), and measure
chunking, retrieval and the refusal gate against a question file of the lab's schema.
"""

EPILOG = f"""\
the three steps:
  rag-lab index docs/                          chunk, embed and store every file
  rag-lab ask "how do I rotate the API key?"   the sources that answer, or NO ANSWER
  rag-lab evaluate --corpus docs/ --questions questions.yaml

The index is --index PATH (default ${INDEX_ENV}, else {DEFAULT_PATH}).
Exit status: 0 done; 1 some documents failed to index (the others are searchable);
2 bad input or environment (one line says what, where and what to do), or an index that
cannot be searched; 3 evaluate --baseline: the gate failed against the baseline;
130 interrupted, 143 SIGTERM (the index stays consistent: run again to resume);
141 stdout's reader went away (| head: the work is kept, the rest of the output dropped).
"""


def json_error(message: str, status: int) -> str:
    """What a command given ``--json`` prints on stdout when it fails, besides its one line
    on stderr: ``{"error": <that line's words>, "exit_status": <its exit status>}``, so that
    a program reading stdout always gets one JSON object."""
    return json.dumps({"error": message, "exit_status": status})


class Parser(argparse.ArgumentParser):
    """argparse's parser; with ``--json`` among the arguments, its refusal (exit 2) is also
    :func:`json_error` on stdout, as every other error of a ``--json`` command is."""

    def parse_known_args(self, args: Sequence[str] | None = None, namespace=None):
        given = list(sys.argv[1:] if args is None else args)
        self._json = "--json" in given[: given.index("--")] if "--" in given else "--json" in given
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if getattr(self, "_json", False):
            print(json_error(message, 2))
        super().error(message)


def root_parser() -> argparse.ArgumentParser:
    """``rag-lab`` itself: its description, the three steps, ``--version`` and ``--debug``."""
    parser = Parser(
        prog="rag-lab",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rag-lab {__version__}")
    parser.add_argument("--debug", action="store_true", help=arguments.DEBUG)
    return parser


_RUN = {
    "index": run_index,
    "status": run_status,
    "retry": run_retry,
    "ask": run_ask,
    "evaluate": run_evaluate,
    "questions": run_questions,
}
"""The body of each subcommand of :data:`rag_lab.app.arguments.COMMANDS`."""


def _parser() -> argparse.ArgumentParser:
    """``rag-lab`` and its subcommands, each with its summary, arguments and body."""
    parser = root_parser()
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
