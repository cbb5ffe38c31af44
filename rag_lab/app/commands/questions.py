"""``rag-lab questions check FILE --corpus DIR``: a question file validated against a corpus,
without chunking, embedding or an index, for a CI step before ``evaluate``.

The corpus is read as ``evaluate`` reads it (:func:`rag_lab.sources.folder.load_folder`: every
file must read) and the file is validated as ``evaluate`` validates it
(:func:`rag_lab.questions.load_questions`, questions of any number of phrasings and
passages; or Chroma's CSV by
:func:`rag_lab.sources.chroma.questions.load_chroma_questions`). Exit 0 when it is valid; 2
with every problem on stderr, one a line as ``FILE:LINE: ID FIELD: reason``
(:mod:`rag_lab.app.cli` words the :class:`~rag_lab.questions.QuestionsError`). The
validator's notes (a needle found only up to whitespace) are printed on stdout either way,
each a line starting ``note:``.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

from rag_lab.app.commands import UsageError
from rag_lab.app.exits import OK
from rag_lab.questions import QuestionsError, Violation, load_questions
from rag_lab.sources import folder
from rag_lab.sources.chroma.questions import load_chroma_questions, questions_kind
from rag_lab.text import counted, printable


def run_questions(args: argparse.Namespace) -> int:
    """``rag-lab questions ACTION``: ``check`` is the one action."""
    return run_check(args)


def run_check(args: argparse.Namespace) -> int:
    if not args.corpus.is_dir():
        raise UsageError(f"{args.corpus}: not a folder (--corpus DIR)")
    docs = folder.load_folder(args.corpus)
    against = f"against {args.corpus} ({counted(len(docs), 'document')})"
    if questions_kind(args.file) == "chroma-csv":
        # Chroma's offsets count every character: the files as plain text, as evaluate reads them.
        plain = [dataclasses.replace(d, format="plain") for d in docs]
        spans = load_chroma_questions(args.file, plain)
        print(printable(f"{args.file}: valid {against}: {counted(len(spans), 'question')}"))
        return OK
    try:
        qset = load_questions(args.file, docs, expected=None)
    except QuestionsError as err:
        _print_notes(err.notes, args.file)
        raise
    _print_notes(qset.notes, args.file)
    print(
        printable(
            f"{args.file}: valid {against}: {counted(len(qset.questions), 'question')} "
            f"({counted(len(qset.queries()), 'query', 'queries')}), "
            f"{counted(len(qset.negatives), 'negative')}"
        )
    )
    return OK


def _print_notes(notes: Sequence[Violation], path) -> None:
    for note in notes:
        print(printable(f"note: {note.render(path)}"))
