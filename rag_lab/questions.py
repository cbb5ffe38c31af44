"""The ground truth: questions with verbatim needles, and negatives that should get nothing.

The file format (YAML)::

    questions:
      - id: q01
        doc: 03-linear-algebra          # the document the needle is in
        needle: "A verbatim sentence that answers the question."
        course: "The question in the course's own words."
        ticket: "The same question as a support ticket puts it."
    negatives:
      - id: n01
        kind: uncovered                 # or offtopic
        query: "A question the corpus does not answer."

:func:`load_questions` checks every rule a program can check and reports all the
violations at once, each with its file, line, id and field, so a file written by
hand is fixed in one pass. Any corpus and any file of this schema work.

Chroma's chunking benchmark grounds a question in offsets instead: a :class:`SpanQuestion`
holds :class:`Span` records, read from its ``questions_df.csv`` by
:func:`load_chroma_questions` with the same rigour; :func:`questions_kind` tells the two
file formats apart by their content.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from rag_lab.documents import Document
from rag_lab.errors import BadInput
from rag_lab.markdown import MarkdownDoc
from rag_lab.text import longest_common_run, words

PHRASINGS = ("course", "ticket")
NEGATIVE_KINDS = ("uncovered", "offtopic")
MAX_NEEDLE_CHARS = 300
"""A needle is a short sentence; longer ones make retrieval hits too easy to count."""
MAX_SHARED_WORDS = 5
"""A phrasing may share at most this many consecutive words with its needle."""


@dataclass(frozen=True)
class Question:
    id: str
    doc: str
    needle: str
    course: str
    ticket: str


@dataclass(frozen=True)
class Negative:
    id: str
    kind: str
    query: str


@dataclass(frozen=True)
class Query:
    """One phrasing of one question: what a retriever is actually asked."""

    question: Question
    phrasing: str
    """``"course"`` or ``"ticket"``."""

    @property
    def id(self) -> str:
        return f"{self.question.id}/{self.phrasing}"

    @property
    def text(self) -> str:
        return getattr(self.question, self.phrasing)

    @property
    def needle(self) -> str:
        return self.question.needle


@dataclass(frozen=True)
class Expected:
    """Counts a particular question file promises (the chapter's design, or yours)."""

    questions: int
    negatives: dict[str, int]
    min_documents: int = 1


CHAPTER_DESIGN = Expected(
    questions=32, negatives={"uncovered": 21, "offtopic": 9}, min_documents=15
)
"""The chapter's ground truth: 32 questions (64 queries), 21 + 9 negatives, ≥ 15 documents."""


@dataclass(frozen=True)
class QuestionSet:
    questions: tuple[Question, ...]
    negatives: tuple[Negative, ...]
    path: Path | None = None

    def queries(self, phrasings: Sequence[str] = PHRASINGS) -> list[Query]:
        """Every question in every phrasing: all course phrasings first, then all tickets."""
        return [Query(q, p) for p in phrasings for q in self.questions]


@dataclass(frozen=True)
class Violation:
    line: int | None
    id: str | None
    field: str | None
    message: str

    def render(self, path: Path | str) -> str:
        where = f"{path}:{self.line}" if self.line else str(path)
        what = " ".join(x for x in (self.id, self.field) if x)
        return f"{where}: {what + ': ' if what else ''}{self.message}"


class QuestionsError(BadInput, ValueError):
    """The question file breaks one or more rules; ``violations`` lists them all."""

    def __init__(self, path: Path | str, violations: Sequence[Violation]) -> None:
        self.path = path
        self.violations = list(violations)
        lines = "\n  ".join(v.render(path) for v in self.violations)
        super().__init__(f"{len(self.violations)} problem(s) in {path}:\n  {lines}")


def load_questions(
    path: str | os.PathLike,
    docs: Sequence[Document],
    expected: Expected | None = None,
) -> QuestionSet:
    """Read and validate a question file against a corpus; raise :class:`QuestionsError`."""
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise QuestionsError(path, [Violation(None, None, None, "file not found")]) from None
    except UnicodeDecodeError as err:
        raise QuestionsError(path, [Violation(None, None, None, f"not UTF-8: {err}")]) from None
    except IsADirectoryError:
        raise QuestionsError(path, [Violation(None, None, None, "a folder, not a file")]) from None
    except OSError as err:
        problem = f"cannot read: {err.strerror or err}"
        raise QuestionsError(path, [Violation(None, None, None, problem)]) from None
    try:
        root = yaml.compose(source)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise QuestionsError(
            path, [Violation(line, None, None, f"not valid YAML: {err}")]
        ) from None
    qset, lines, violations = _parse(root, path)
    violations += _check(qset, docs, expected, lines)
    if violations:
        raise QuestionsError(path, sorted(violations, key=lambda v: (v.line or 0, v.message)))
    return qset


# --- parsing with line numbers --------------------------------------------------

_TEXT = "tag:yaml.org,2002:str"
"""The tag YAML resolves text to; a bare 17, true or ~ resolves to another."""

_Lines = dict[tuple[str, int], dict[str | None, int]]
"""Line numbers by (list name, position) then field; field None is the item's own line."""


def _parse(root, path: Path) -> tuple[QuestionSet, _Lines, list[Violation]]:
    """Build the QuestionSet from YAML nodes, remembering the line of every item and field."""
    lines: _Lines = {}
    out: list[Violation] = []
    if not isinstance(root, yaml.MappingNode):
        out.append(Violation(1, None, None, "expected a mapping with 'questions' and 'negatives'"))
        return QuestionSet((), (), path), lines, out
    sections = {}
    for key, value in root.value:
        name = key.value
        if name not in ("questions", "negatives"):
            out.append(Violation(key.start_mark.line + 1, None, name, "unknown top-level key"))
            continue
        if not isinstance(value, yaml.SequenceNode):
            out.append(Violation(key.start_mark.line + 1, None, name, "expected a list"))
            continue
        sections[name] = value
    for name in ("questions", "negatives"):
        if name not in sections:
            out.append(Violation(None, None, name, "missing top-level list"))
    fields = {"questions": Question, "negatives": Negative}
    built: dict[str, list] = {"questions": [], "negatives": []}
    for name, node in sections.items():
        cls = fields[name]
        wanted = list(cls.__dataclass_fields__)
        for pos, item in enumerate(node.value, 1):
            line = item.start_mark.line + 1
            if not isinstance(item, yaml.MappingNode):
                out.append(Violation(line, f"{name}[{pos}]", None, "expected a mapping"))
                continue
            values: dict[str, str] = {}
            value_lines: dict[str, int] = {}
            bad: set[str] = set()  # reported already: not "missing" as well
            for k, v in item.value:
                if k.value not in wanted:
                    out.append(Violation(k.start_mark.line + 1, None, k.value, "unknown field"))
                elif not isinstance(v, yaml.ScalarNode) or not str(v.value).strip():
                    out.append(
                        Violation(k.start_mark.line + 1, None, k.value, "must be non-empty text")
                    )
                    bad.add(k.value)
                elif v.tag != _TEXT:  # `id: 17`, `ticket: true`, `needle: ~`
                    kind = v.tag.rsplit(":", 1)[-1]
                    message = f"must be text, not the YAML {kind} {v.value}; quote it"
                    out.append(Violation(v.start_mark.line + 1, None, k.value, message))
                    bad.add(k.value)
                else:
                    values[k.value] = str(v.value)
                    value_lines[k.value] = v.start_mark.line + 1
            ident = values.get("id", f"{name}[{pos}]")
            missing = [f for f in wanted if f not in values and f not in bad]
            for f in missing:
                out.append(Violation(line, ident, f, "missing field"))
            if missing or bad:
                continue
            lines[(name, len(built[name]))] = {None: line, **value_lines}
            built[name].append(cls(**values))
    if "questions" in sections and not sections["questions"].value:
        line = sections["questions"].start_mark.line + 1
        out.append(Violation(line, None, "questions", "no questions: the list is empty"))
    qset = QuestionSet(tuple(built["questions"]), tuple(built["negatives"]), path)
    return qset, lines, out


# --- the rules ------------------------------------------------------------------


def _check(
    qset: QuestionSet, docs: Sequence[Document], expected: Expected | None, lines: _Lines
) -> list[Violation]:
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
    for i, q in enumerate(qset.questions):
        item = ("questions", i)
        if q.doc not in by_id:
            out.append(at(item, q.id, "doc", f"no document {q.doc!r} in the corpus"))
        out += [at(item, q.id, "needle", m) for m in _needle_problems(q, docs, by_id, structure)]
        for phrasing in PHRASINGS:
            text = getattr(q, phrasing)
            shared = longest_common_run(words(q.needle), words(text))
            if len(shared) > MAX_SHARED_WORDS:
                out.append(
                    at(
                        item,
                        q.id,
                        phrasing,
                        f"copies {len(shared)} consecutive words of the needle: "
                        f"{' '.join(shared)!r}",
                    )
                )
    for i, neg in enumerate(qset.negatives):
        if neg.kind not in NEGATIVE_KINDS:
            out.append(
                at(
                    ("negatives", i),
                    neg.id,
                    "kind",
                    f"{neg.kind!r} is not one of {', '.join(NEGATIVE_KINDS)}",
                )
            )

    texts = Counter(
        [_norm(getattr(q, p)) for q in qset.questions for p in PHRASINGS]
        + [_norm(n.query) for n in qset.negatives]
    )
    for text, n in texts.items():
        if n > 1:
            out.append(Violation(None, None, None, f"the query {text!r} appears {n} times"))

    if expected is not None:
        out += _count_problems(qset, expected)
    return out


def _needle_problems(q: Question, docs, by_id, structure) -> list[str]:
    needle = q.needle
    problems = []
    if len(needle) > MAX_NEEDLE_CHARS:
        problems.append(
            f"{len(needle)} characters; a needle is a short sentence (≤ {MAX_NEEDLE_CHARS})"
        )
    if "\n\n" in needle:
        problems.append("spans a blank line; a needle is one sentence")
    if needle != needle.strip():
        problems.append("has surrounding whitespace")
    found = {d.id: d.text.count(needle) for d in docs if needle in d.text}
    total = sum(found.values())
    if total == 0:
        problems.append("not found verbatim in the corpus")
        return problems
    if total > 1:
        where = ", ".join(f"{doc} ×{n}" for doc, n in list(found.items())[:3])
        if len(found) > 3:
            where += f" and {len(found) - 3} more documents"
        problems.append(f"found {total} times ({where}); it must occur exactly once")
        return problems
    if q.doc in by_id and q.doc not in found:
        problems.append(f"found in {', '.join(found)}, not in {q.doc}")
    for doc_id in found:
        text = by_id[doc_id].text
        start = text.index(needle)
        touched = structure[doc_id].overlaps(start, start + len(needle))
        for kind, hit in touched.items():
            if hit:
                problems.append(f"lies in a {kind} line of {doc_id}; a needle must be prose")
    return problems


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
    n_docs = len({q.doc for q in qset.questions})
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


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


# --- span ground truth: questions answered by offsets, as in Chroma's benchmark -----------

CHROMA_COLUMNS = ("question", "references", "corpus_id")
"""The columns of Chroma's ``questions_df.csv``; ``references`` is a JSON list."""


@dataclass(frozen=True, order=True)
class Span:
    """Characters ``[start, end)`` of one document: ``document.text[start:end]``."""

    doc: str
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start

    def within(self, other: Span) -> bool:
        """True when this span lies whole inside ``other`` (same document)."""
        return self.doc == other.doc and other.start <= self.start and self.end <= other.end


@dataclass(frozen=True)
class SpanQuestion:
    """A question whose ground truth is one or more excerpts, given by offsets.

    It is answered when every span is retrieved whole; ``text`` is what a retriever is
    asked (the question's only phrasing).
    """

    id: str
    text: str
    spans: tuple[Span, ...]


def load_chroma_questions(
    path: str | os.PathLike, documents: Sequence[Document]
) -> list[SpanQuestion]:
    """Read and validate Chroma's ``questions_df.csv``; raise :class:`QuestionsError`.

    Columns :data:`CHROMA_COLUMNS`; each ``references`` cell is a JSON list of
    ``{"content", "start_index", "end_index"}`` whose offsets must slice ``content`` out of
    the document named by ``corpus_id``. A question's id is its 0-based row position, the id
    Chroma's own evaluation gives it. Every problem is reported at once with the CSV's
    physical line (a quoted cell may hold newlines), the id and the field.
    """
    path = Path(path)
    source = _read_text(path).removeprefix("\ufeff")  # a BOM, as Excel writes one
    by_id = {d.id: d for d in documents}
    out: list[Violation] = []
    questions: list[SpanQuestion] = []
    reader = csv.reader(io.StringIO(source, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise QuestionsError(path, [Violation(None, None, None, "empty file")]) from None
    except csv.Error as err:
        raise QuestionsError(path, [Violation(1, None, None, f"not valid CSV: {err}")]) from None
    missing = [c for c in CHROMA_COLUMNS if c not in header]
    unknown = [c for c in header if c not in CHROMA_COLUMNS]
    out += [Violation(1, None, c, "missing column") for c in missing]
    out += [Violation(1, None, c or "''", "unknown column") for c in unknown]
    if missing:
        raise QuestionsError(path, out)
    where = {c: header.index(c) for c in CHROMA_COLUMNS}
    line = reader.line_num + 1  # the physical line the next row starts on
    position = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:  # the reader cannot resynchronise after this
            out.append(Violation(line, None, None, f"not valid CSV: {err}"))
            break
        row_line, line = line, reader.line_num + 1
        if not row:  # a blank line, which pandas skips as well
            continue
        ident = str(position)
        position += 1
        if len(row) != len(header):
            message = f"{len(row)} fields, expected {len(header)}"
            out.append(Violation(row_line, ident, None, message))
            continue
        question = _span_question(row, where, ident, row_line, by_id, out)
        if question is not None:
            questions.append(question)
    if not questions and not out:
        out.append(Violation(None, None, None, "no questions: the file has no rows"))
    counts = Counter(_norm(q.text) for q in questions)
    out += [
        Violation(None, None, "question", f"the question {text!r} appears {n} times")
        for text, n in counts.items()
        if n > 1
    ]
    if out:
        raise QuestionsError(path, sorted(out, key=lambda v: (v.line or 0, v.message)))
    return questions


def questions_kind(path: str | os.PathLike) -> str:
    """``"yaml"`` (:func:`load_questions`) or ``"chroma-csv"`` (:func:`load_chroma_questions`).

    Decided by content, not by the file's name: a first line that is a CSV header holding
    :data:`CHROMA_COLUMNS` is Chroma's format; a YAML mapping with ``questions`` or
    ``negatives`` is the lab's. Raises :class:`QuestionsError` for anything else.
    """
    path = Path(path)
    source = _read_text(path)
    first = source.lstrip("\ufeff").partition("\n")[0].rstrip("\r")
    try:
        header = next(csv.reader([first]), [])
    except csv.Error:
        header = []
    if set(CHROMA_COLUMNS) <= set(header):
        return "chroma-csv"
    try:
        root = yaml.compose(source)
    except yaml.YAMLError:
        root = None
    if isinstance(root, yaml.MappingNode) and any(
        k.value in ("questions", "negatives") for k, _ in root.value
    ):
        return "yaml"
    message = (
        "neither a YAML question file (a mapping with 'questions') nor Chroma's CSV "
        f"(a header with {', '.join(CHROMA_COLUMNS)})"
    )
    raise QuestionsError(path, [Violation(None, None, None, message)])


def _read_text(path: Path) -> str:
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


def _span_question(
    row: list[str],
    where: dict[str, int],
    ident: str,
    line: int,
    by_id: dict[str, Document],
    out: list[Violation],
) -> SpanQuestion | None:
    """One CSV row as a SpanQuestion, or None after appending its violations to ``out``."""
    problems = len(out)
    text, cell, corpus = (row[where[c]] for c in CHROMA_COLUMNS)
    if not text.strip():
        out.append(Violation(line, ident, "question", "must be non-empty text"))
    doc = by_id.get(corpus)
    if doc is None:
        out.append(Violation(line, ident, "corpus_id", f"no document {corpus!r} in the corpus"))
    try:
        refs = json.loads(cell)
    except json.JSONDecodeError as err:
        out.append(Violation(line, ident, "references", f"not valid JSON: {err}"))
        return None
    if not isinstance(refs, list) or not refs:
        out.append(Violation(line, ident, "references", "must be a non-empty JSON list"))
        return None
    spans = []
    for i, ref in enumerate(refs):
        field = f"references[{i}]"
        keys = ("content", "start_index", "end_index")
        if not isinstance(ref, dict) or any(k not in ref for k in keys):
            out.append(Violation(line, ident, field, f"must be an object with {', '.join(keys)}"))
            continue
        content, start, end = (ref[k] for k in keys)
        if not isinstance(content, str) or not content:
            out.append(Violation(line, ident, field, "content must be non-empty text"))
            continue
        if any(type(x) is not int for x in (start, end)):
            message = f"start_index and end_index must be integers, got {start!r}, {end!r}"
            out.append(Violation(line, ident, field, message))
            continue
        if doc is None:
            continue
        if not 0 <= start < end <= len(doc.text):
            message = f"offsets [{start}:{end}] out of range for {corpus} ({len(doc.text)} chars)"
            out.append(Violation(line, ident, field, message))
        elif doc.text[start:end] != content:
            found = doc.text[start:end]
            message = (
                f"content differs from {corpus}[{start}:{end}]: "
                f"{_clip(content)!r} != {_clip(found)!r}"
            )
            out.append(Violation(line, ident, field, message))
        else:
            spans.append(Span(corpus, start, end))
    if len(out) > problems:
        return None
    return SpanQuestion(ident, text, tuple(spans))


def _clip(text: str, size: int = 40) -> str:
    return text if len(text) <= size else text[:size] + "…"
