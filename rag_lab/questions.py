"""The ground truth: questions with verbatim needles, and negatives that should get nothing.

The file format (YAML)::

    questions:
      - id: q01
        doc: 03-linear-algebra          # the document the needle is in
        needle: "A verbatim sentence that answers the question."
        course: "The question in the course's own words."
        ticket: "The same question as a support ticket puts it."
    negatives:                          # optional: without it, the refusal gate is not
      - id: n01                         # measured (the report says so)
        kind: uncovered                 # or offtopic
        query: "A question the corpus does not answer."

A question answered in more than one place, or asked in other than two phrasings, lists
its passages and its phrasings instead (either list may hold one item; the two shapes mix
freely, in one question and in one file)::

      - id: q02
        passages:                       # a chunk holding any one of them is relevant
          - doc: install
            needle: "A verbatim sentence in one document."
          - doc: faq
            needle: "Another that answers it too."
        phrasings:                      # queries q02/1, q02/2, q02/3
          - "One way to ask it."
          - "Another."
          - "A third."

A query hits when a chunk holding any of its question's passages is among its top k; a
chunking destroys an answer only when it cuts every passage.

:func:`load_questions` checks every rule a program can check and reports all the
violations at once, each with its file, line, id and field, so a file written by
hand is fixed in one pass. Any corpus and any file of this schema work.

A needle is found verbatim, or else up to whitespace (:mod:`rag_lab.needles`: a document
hard-wrapped where the file has a space): the question then carries where it was found
(:attr:`Question.found`), is judged relevant by the same rule (:attr:`Question.fold`), and
the set carries a note saying so (:attr:`QuestionSet.notes`), which is not a violation.

Chroma's chunking benchmark grounds a question in offsets instead: its questions
(:class:`rag_lab.spans.SpanQuestion`) are read from its CSV by
:mod:`rag_lab.sources.chroma.questions`, with the same rigour.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import yaml

from rag_lab.documents import Document
from rag_lab.markdown import MarkdownDoc
from rag_lab.needles import Found, line_of, matches, near_miss, spaced, verbatim
from rag_lab.question_records import (
    CHAPTER_DESIGN,
    NEGATIVE_KINDS,
    PHRASINGS,
    Expected,
    Negative,
    Passage,
    Query,
    Question,
    QuestionsError,
    QuestionSet,
    Violation,
)
from rag_lab.question_yaml import Lines, parse, yaml_problem
from rag_lab.text import longest_common_run, words

__all__ = [
    "CHAPTER_DESIGN",
    "NEGATIVE_KINDS",
    "PHRASINGS",
    "Expected",
    "Negative",
    "Passage",
    "Query",
    "Question",
    "QuestionSet",
    "QuestionsError",
    "Violation",
    "load_questions",
    "normalized",
    "read_text",
    "yaml_problem",
]

MAX_NEEDLE_CHARS = 300
"""A needle is a short sentence; longer ones make retrieval hits too easy to count."""
MAX_SHARED_WORDS = 5
"""A phrasing may share at most this many consecutive words with its needle."""


def load_questions(
    path: str | os.PathLike,
    docs: Sequence[Document],
    expected: Expected | None = None,
) -> QuestionSet:
    """Read and validate a question file against a corpus; raise :class:`QuestionsError`."""
    path = Path(path)
    source = read_text(path)
    try:
        root = yaml.compose(source)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise QuestionsError(path, [Violation(line, None, None, yaml_problem(err))]) from None
    qset, lines, violations = parse(root, path)
    problems, notes, found = _check(qset, docs, expected, lines)
    violations += problems
    if violations:
        raise QuestionsError(path, _in_order(violations), _in_order(notes))
    questions = [
        dataclasses.replace(
            q,
            found=found.get((i, 0)),
            others=tuple(
                dataclasses.replace(p, found=found.get((i, j))) for j, p in enumerate(q.others, 1)
            ),
        )
        for i, q in enumerate(qset.questions)
    ]
    return dataclasses.replace(qset, questions=tuple(questions), notes=tuple(_in_order(notes)))


def _in_order(violations: list[Violation]) -> list[Violation]:
    return sorted(violations, key=lambda v: (v.line or 0, v.message))


# --- the rules ------------------------------------------------------------------


def _check(
    qset: QuestionSet, docs: Sequence[Document], expected: Expected | None, lines: Lines
) -> tuple[list[Violation], list[Violation], dict[tuple[int, int], Found]]:
    """The violations, the notes, and where each passage found once in its document lies
    (by the question's position and the passage's, 0 for the first)."""

    def at(item: tuple[str, int], ident: str, field: str | None, message: str) -> Violation:
        where = lines.get(item, {})
        return Violation(where.get(field) or where.get(None), ident, field, message)

    out: list[Violation] = []
    items = [("questions", i, q.id) for i, q in enumerate(qset.questions)]
    items += [("negatives", i, n.id) for i, n in enumerate(qset.negatives)]
    first: dict[str, int | None] = {}
    for name, i, ident in items:
        if ident in first:
            out.append(at((name, i), ident, "id", f"duplicate id (first at line {first[ident]})"))
        else:
            first[ident] = lines.get((name, i), {}).get(None)

    by_id = {d.id: d for d in docs}
    structure = {d.id: MarkdownDoc(d.text) for d in docs}
    notes: list[Violation] = []
    located: dict[tuple[int, int], Found] = {}
    for i, q in enumerate(qset.questions):
        item = ("questions", i)
        seen: dict[Passage, str] = {}
        for j, passage in enumerate(q.passages):
            doc_field, needle_field = _passage_fields(lines.get(item, {}), j)
            if passage in seen:
                out.append(at(item, q.id, needle_field, f"the same passage as {seen[passage]}"))
                continue
            seen[passage] = needle_field
            if passage.doc not in by_id:
                out.append(at(item, q.id, doc_field, f"no document {passage.doc!r} in the corpus"))
            problems, found = _needle_problems(passage, docs, by_id, structure)
            out += [at(item, q.id, needle_field, m) for m in problems]
            if found is not None:
                located[(i, j)] = found
            if found is not None and not found.exact:
                text = by_id[found.doc].text
                lines_in = f"{line_of(text, found.start)}-{line_of(text, found.end)}"
                message = (
                    "found only after whitespace normalisation (line breaks or spaces differ), "
                    f"at lines {lines_in} of {found.doc}"
                )
                notes.append(at(item, q.id, needle_field, message))
        for phrasing in q.phrasings:
            field = phrasing if phrasing in PHRASINGS else f"phrasings[{phrasing}]"
            for j, passage in enumerate(q.passages, 1):
                shared = longest_common_run(words(passage.needle), words(q.text(phrasing)))
                if len(shared) > MAX_SHARED_WORDS:
                    of = "the needle" if len(q.passages) == 1 else f"the needle of passage {j}"
                    message = f"copies {len(shared)} consecutive words of {of}: "
                    out.append(at(item, q.id, field, message + repr(" ".join(shared))))
    for i, neg in enumerate(qset.negatives):
        if neg.kind not in NEGATIVE_KINDS:
            message = f"{neg.kind!r} is not one of {', '.join(NEGATIVE_KINDS)}"
            out.append(at(("negatives", i), neg.id, "kind", message))

    texts = Counter(
        [normalized(q.text(p)) for q in qset.questions for p in q.phrasings]
        + [normalized(n.query) for n in qset.negatives]
    )
    for text, n in texts.items():
        if n > 1:
            out.append(Violation(None, None, None, f"the query {text!r} appears {n} times"))

    if expected is not None:
        out += _count_problems(qset, expected)
    return out, notes, located


def _passage_fields(where: dict[str | None, int], j: int) -> tuple[str, str]:
    """The fields of a question's passage ``j`` (0 for the first): ``doc`` and ``needle``, or
    ``passages[j+1].doc`` and ``passages[j+1].needle`` when the file lists its passages."""
    listed = f"passages[{j + 1}]"
    if j or f"{listed}.needle" in where or f"{listed}.doc" in where:
        return f"{listed}.doc", f"{listed}.needle"
    return "doc", "needle"


def _needle_problems(p: Passage, docs, by_id, structure) -> tuple[list[str], Found | None]:
    """What is wrong with passage ``p``'s needle, and where it lies when it is found once in
    its document: verbatim, else (and only else) up to whitespace."""
    needle = p.needle
    problems = []
    if len(needle) > MAX_NEEDLE_CHARS:
        problems.append(
            f"{len(needle)} characters; a needle is a short sentence (≤ {MAX_NEEDLE_CHARS})"
        )
    if "\n\n" in needle:
        problems.append("spans a blank line; a needle is one sentence")
    if needle != needle.strip():
        problems.append("has surrounding whitespace")
    found = {d.id: spans for d in docs if (spans := verbatim(needle, d.text))}
    exact = bool(found)
    if not exact:
        pattern = spaced(needle)
        found = {d.id: spans for d in docs if (spans := matches(pattern, d.text))}
    total = sum(len(spans) for spans in found.values())
    if total == 0:
        problems.append("not found verbatim in the corpus" + _hint(p, docs, by_id))
        return problems, None
    if total > 1:
        where = ", ".join(f"{doc} ×{len(spans)}" for doc, spans in list(found.items())[:3])
        if len(found) > 3:
            where += f" and {len(found) - 3} more documents"
        spacing = "" if exact else " up to whitespace"
        problems.append(f"found {total} times{spacing} ({where}); it must occur exactly once")
        return problems, None
    ((doc_id, ((start, end),)),) = found.items()
    if p.doc in by_id and p.doc != doc_id:
        problems.append(f"found in {doc_id}, not in {p.doc}")
    touched = structure[doc_id].overlaps(start, end)
    for kind, hit in touched.items():
        if hit:
            problems.append(f"lies in a {kind} line of {doc_id}; a needle must be prose")
    if not exact and _BLANK_LINE.search(by_id[doc_id].text, start, end):
        problems.append(f"spans a blank line of {doc_id}; a needle is one sentence")
    return problems, Found(doc_id, start, end, exact) if p.doc == doc_id else None


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


def _hint(p: Passage, docs: Sequence[Document], by_id) -> str:
    """Where a needle not found comes nearest (:func:`rag_lab.needles.near_miss`): its own
    document first, then the others; empty when nowhere."""
    order = [by_id[p.doc]] if p.doc in by_id else []
    order += [d for d in docs if d.id != p.doc]
    for d in order:
        if (near := near_miss(p.needle, d.text)) is not None:
            return f"; in {d.id} {near}"
    return ""


def _count_problems(qset: QuestionSet, expected: Expected) -> list[Violation]:
    out = []
    if len(qset.questions) != expected.questions:
        out.append(
            Violation(
                None,
                None,
                "questions",
                f"{len(qset.questions)} questions, expected {expected.questions}",
            )
        )
    kinds = Counter(n.kind for n in qset.negatives)
    for kind, want in expected.negatives.items():
        if kinds[kind] != want:
            out.append(
                Violation(
                    None, None, "negatives", f"{kinds[kind]} {kind} negatives, expected {want}"
                )
            )
    n_docs = len({p.doc for q in qset.questions for p in q.passages})
    if n_docs < expected.min_documents:
        out.append(
            Violation(
                None,
                None,
                "questions",
                f"needles come from {n_docs} documents, expected ≥ {expected.min_documents}",
            )
        )
    return out


def normalized(text: str) -> str:
    """Case-folded, whitespace normalised: how two questions are compared for repeats."""
    return " ".join(text.lower().split())


def read_text(path: Path) -> str:
    """A question file's text; any reason it cannot be read is a :class:`QuestionsError`."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problem = "file not found"
    except UnicodeDecodeError as err:
        problem = f"not UTF-8: {err}"
    except IsADirectoryError:
        problem = "a folder, not a file"
    except OSError as err:
        problem = f"cannot read: {err.strerror or err}"
    raise QuestionsError(path, [Violation(None, None, None, problem)])
