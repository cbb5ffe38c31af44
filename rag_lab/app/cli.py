"""``rag-lab``: the lab on your own documents, from a folder of Markdown to an evaluation report.

Thin on purpose: every command parses its arguments, calls one function of the package
(:mod:`rag_lab.app.ingest`, :mod:`rag_lab.app.index`, :mod:`rag_lab.pipeline`,
:mod:`rag_lab.experiments.evaluate`) and prints the result. Errors are one line each on stderr,
naming the file, the line where there is one, and the reason; the exit status is 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from rag_lab import __version__, paths
from rag_lab.app import index, ingest
from rag_lab.app.store import SQLiteStore, Store, StoreError
from rag_lab.gate import MAX_KEPT
from rag_lab.models.encoder import Encoder
from rag_lab.models.minilm import ModelError
from rag_lab.pipeline import Answer, Refusal, answer
from rag_lab.questions import QuestionsError
from rag_lab.sources import folder
from rag_lab.sources.d2l import CorpusError, corpus_dir
from rag_lab.text import shorten

CUTOFF = 0.675
"""The chapter's cutoff: a chunk is kept only when its cosine distance is strictly under it."""

OK, PARTIAL, ERROR = 0, 1, 2


class UsageError(ValueError):
    """Arguments that parse but do not go together."""


_DESCRIPTION = """\
The lab on your own documents. Index a folder of Markdown and plain-text files into a
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
2 bad input, or an index that cannot be searched.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rag-lab`` with ``argv`` (default: the command line); return the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (
        CorpusError,
        ModelError,
        StoreError,
        index.IndexNotReady,
        folder.IngestError,
        QuestionsError,
        UsageError,
    ) as err:
        problems = _problems(err)
    for line in problems:
        print(f"rag-lab {args.command}: {line}", file=sys.stderr)
    return ERROR


# --- commands -----------------------------------------------------------------------


def _index(args: argparse.Namespace) -> int:
    with index.open_index(args.index) as store:
        print(f"indexing {args.folder.resolve()} into {args.index}")
        report = ingest.index_folder(args.folder, store, Encoder(), rebuild=args.rebuild)
        _print_report(report, store)
    return PARTIAL if report.failed else OK


def _retry(args: argparse.Namespace) -> int:
    with _existing(args.index) as store:
        report = ingest.retry(store, Encoder())
        _print_report(report, store)
    return PARTIAL if report.failed else OK


def _status(args: argparse.Namespace) -> int:
    with _existing(args.index) as store:
        encoder = Encoder()
        st = index.status(store, index.current_stamp(encoder.fingerprint))
    if args.json:
        print(json.dumps(_status_json(st), indent=1))
        return OK
    print(f"index {args.index} of folder {st.folder}")
    print(index.describe(st))
    return OK


def _ask(args: argparse.Namespace) -> int:
    with _existing(args.index) as store:
        encoder = Encoder()
        retriever = index.retriever(store, encoder)
        failed = index.status(store, index.current_stamp(encoder.fingerprint)).failed
    result = answer(args.question, retriever, args.cutoff, k=args.k)
    if failed:
        print(
            f"note: {len(failed)} documents failed to index and are not searched "
            "(rag-lab status lists them)",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(_answer_json(result), indent=1, ensure_ascii=False))
    elif isinstance(result, Refusal):
        print(result)
    else:
        _print_answer(result, args.cutoff, args.prompt)
    return OK


def _evaluate(args: argparse.Namespace) -> int:
    # The one import from the experiments: only `evaluate` needs them (and matplotlib).
    from rag_lab.experiments import evaluate

    if args.corpus is not None and args.questions is None:
        raise UsageError("--questions FILE is required with --corpus DIR")
    questions = args.questions or paths.QUESTIONS
    name = (args.corpus or corpus_dir()).resolve().name
    out = args.out or Path("reports") / name
    evaluation, written = evaluate.run(args.corpus, questions, out)
    print(evaluation.intro)
    for table in ("dense recall by strategy", "dense, BM25 and hybrid", "gate"):
        print(f"\n{table}:\n{evaluation.tables[table].to_string()}")
    figures = sum(p.suffix == ".png" for p in written)
    print(f"\nwrote {written[0]}, {written[1].name} and {figures} figures in {out}/figures")
    return OK


# --- output ---------------------------------------------------------------------------


def _print_report(report: ingest.IngestReport, store: Store) -> None:
    print(report.summary())
    for doc_id, reason in report.failed.items():
        record = store.document(doc_id)
        print(f"  failed {record.path if record else doc_id}: {reason}")
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
    }


def _problems(err: Exception) -> list[str]:
    """One line per problem, each naming its file (and line) where the error knows it."""
    if isinstance(err, QuestionsError):
        return [v.render(err.path) for v in err.violations]
    if isinstance(err, folder.IngestError):
        return err.problems
    return [" ".join(str(err).split())]


def _existing(path: Path) -> SQLiteStore:
    """The index at ``path``; a missing file is an error, not a new empty index."""
    if not path.is_file():
        raise index.EmptyIndexError(f"no index at {path}: run rag-lab index DIR first")
    return index.open_index(path)


# --- arguments ------------------------------------------------------------------------


def _paragraphs(*texts: str) -> str:
    """Help text: each paragraph re-wrapped to 88 columns, blank lines between them."""
    return "\n\n".join(textwrap.fill(" ".join(t.split()), 88) for t in texts)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-lab",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rag-lab {__version__}")
    where = argparse.ArgumentParser(add_help=False)
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
            parents=list(parents),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    sub = command(
        "index",
        "index a folder of .md, .markdown and .txt files",
        _paragraphs(
            f"""Chunk every .md, .markdown and .txt file under DIR (hidden folders skipped;
            with a {folder.MANIFEST} file in DIR, only the files it lists) with strategy
            {index.STRATEGY} (paragraph boundaries + a [Title > Section] header), embed it and
            store it, stamped with the model and the pipeline version
            ({index.PIPELINE_VERSION}).""",
            f"""Unchanged files are skipped by sha256; failed ones are re-attempted. A file
            that cannot be read (not UTF-8, empty, binary, over {folder.MAX_BYTES // 2**20} MB,
            unreadable) ends "failed" with its reason and the others are indexed. Documents
            embedded with another stamp are marked "stale" and kept as they are until you
            pass --rebuild; files gone from DIR are removed from the index.""",
        ),
    )
    sub.add_argument("folder", type=Path, metavar="DIR", help="the folder to index")
    sub.add_argument(
        "--rebuild", action="store_true", help="re-embed the stale documents with this pipeline"
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
            quotes) and the size of the prompt a generator would get; when nothing passes,
            the refusal line. No generator is called. A stale index (vectors of another model
            or pipeline) is refused with the list of stale documents."""
        ),
    )
    sub.add_argument("question", help="the question, quoted")
    sub.add_argument(
        "--cutoff",
        type=float,
        default=CUTOFF,
        help=f"cosine-distance cutoff (default {CUTOFF}, the chapter's; lower refuses more)",
    )
    sub.add_argument(
        "-k", type=int, default=MAX_KEPT, help=f"nearest chunks considered (default {MAX_KEPT})"
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
