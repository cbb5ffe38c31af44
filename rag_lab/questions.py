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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rag_lab.documents import Document
from rag_lab.errors import BadInput
from rag_lab.markdown import MarkdownDoc
from rag_lab.needles import Found, line_of, matches, near_miss, spaced, verbatim
from rag_lab.text import flat, longest_common_run, words

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
    found: Found | None = field(default=None, compare=False, repr=False)
    """Where :func:`load_questions` found the needle; ``None`` for a question built by hand."""

    @property
    def fold(self) -> Callable[[str], str] | None:
        """How a chunk's text is read to hold the needle (:func:`rag_lab.chunking.containing`):
        as it is (``None``), or whitespace normalised (:func:`rag_lab.text.flat`) when the
        needle was found in its document only up to whitespace."""
        return flat if self.found is not None and not self.found.exact else None


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

    @property
    def fold(self) -> Callable[[str], str] | None:
        return self.question.fold


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
    notes: tuple[Violation, ...] = ()
    """What the validator noticed that is not a violation: a needle found only up to
    whitespace."""

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
    """The question file breaks one or more rules; ``violations`` lists them all, ``notes``
    what else the validator noticed (:attr:`QuestionSet.notes`)."""

    def __init__(
        self, path: Path | str, violations: Sequence[Violation], notes: Sequence[Violation] = ()
    ) -> None:
        self.path = path
        self.violations = list(violations)
        self.notes = list(notes)
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
        raise QuestionsError(path, [Violation(line, None, None, yaml_problem(err))]) from None
    qset, lines, violations = _parse(root, path)
    problems, notes, found = _check(qset, docs, expected, lines)
    violations += problems
    if violations:
        raise QuestionsError(path, _in_order(violations), _in_order(notes))
    questions = [dataclasses.replace(q, found=found.get(i)) for i, q in enumerate(qset.questions)]
    return dataclasses.replace(qset, questions=tuple(questions), notes=tuple(_in_order(notes)))


def _in_order(violations: list[Violation]) -> list[Violation]:
    return sorted(violations, key=lambda v: (v.line or 0, v.message))


def yaml_problem(err: yaml.YAMLError) -> str:
    """The parser's complaint in one line: what it found, at which column, inside what.

    >>> try:
    ...     yaml.compose("a: [1, 2\\nb: 3\\n")
    ... except yaml.YAMLError as err:
    ...     print(yaml_problem(err).replace(" (while", "\\n(while"))
    not valid YAML: expected ',' or ']', but got ':' at column 2
    (while parsing a flow sequence from line 1)
    """
    problem = getattr(err, "problem", None) or str(err)
    mark, context = getattr(err, "problem_mark", None), getattr(err, "context", None)
    opened = getattr(err, "context_mark", None)
    where = f" at column {mark.column + 1}" if mark else ""
    inside = f" ({context}{f' from line {opened.line + 1}' if opened else ''})" if context else ""
    return " ".join(f"not valid YAML: {problem}{where}{inside}".split())


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
        out.append(
            Violation(1, None, None, "expected a mapping with 'questions' (and 'negatives')")
        )
        return QuestionSet((), (), path), lines, out
    sections = {}
    first: dict[str, int] = {}
    for key, value in root.value:
        name = key.value
        if name in first:  # YAML would keep the last silently: a list dropped
            out.append(_second(key, name, first[name], "key", "YAML keeps only the last"))
            continue
        first[name] = key.start_mark.line + 1
        if name not in ("questions", "negatives"):
            out.append(Violation(key.start_mark.line + 1, None, name, "unknown top-level key"))
            continue
        if not isinstance(value, yaml.SequenceNode):
            out.append(Violation(key.start_mark.line + 1, None, name, "expected a list"))
            continue
        sections[name] = value
    if "questions" not in sections and "questions" not in first:  # negatives are optional
        out.append(Violation(None, None, "questions", "missing top-level list"))
    fields = {"questions": Question, "negatives": Negative}
    built: dict[str, list] = {"questions": [], "negatives": []}
    for name, node in sections.items():
        cls = fields[name]
        # The file's fields: those without a default (Question.found is the validator's).
        wanted = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
        for pos, item in enumerate(node.value, 1):
            line = item.start_mark.line + 1
            if not isinstance(item, yaml.MappingNode):
                out.append(Violation(line, f"{name}[{pos}]", None, "expected a mapping"))
                continue
            values: dict[str, str] = {}
            value_lines: dict[str, int] = {}
            bad: set[str] = set()  # reported already: not "missing" as well
            seen: dict[str, int] = {}
            for k, v in item.value:
                if k.value in seen:
                    out.append(_second(k, k.value, seen[k.value], "field in this item"))
                    bad.add(k.value)
                    continue
                seen[k.value] = k.start_mark.line + 1
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


def _second(key, name: str, first: int, what: str, more: str = "") -> Violation:
    """A key given twice in one mapping: the second's line, naming the first's."""
    message = f"a second '{name}:' {what} (the first is at line {first})"
    return Violation(key.start_mark.line + 1, None, name, message + (f"; {more}" if more else ""))


# --- the rules ------------------------------------------------------------------


def _check(
    qset: QuestionSet, docs: Sequence[Document], expected: Expected | None, lines: _Lines
) -> tuple[list[Violation], list[Violation], dict[int, Found]]:
    """The violations, the notes, and where each needle found once in its document lies
    (by the question's position)."""

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
    located: dict[int, Found] = {}
    for i, q in enumerate(qset.questions):
        item = ("questions", i)
        if q.doc not in by_id:
            out.append(at(item, q.id, "doc", f"no document {q.doc!r} in the corpus"))
        problems, found = _needle_problems(q, docs, by_id, structure)
        out += [at(item, q.id, "needle", m) for m in problems]
        if found is not None:
            located[i] = found
        if found is not None and not found.exact:
            text = by_id[found.doc].text
            lines_in = f"{line_of(text, found.start)}-{line_of(text, found.end)}"
            notes.append(
                at(
                    item,
                    q.id,
                    "needle",
                    "found only after whitespace normalisation (line breaks or spaces differ), "
                    f"at lines {lines_in} of {found.doc}",
                )
            )
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
        [normalized(getattr(q, p)) for q in qset.questions for p in PHRASINGS]
        + [normalized(n.query) for n in qset.negatives]
    )
    for text, n in texts.items():
        if n > 1:
            out.append(Violation(None, None, None, f"the query {text!r} appears {n} times"))

    if expected is not None:
        out += _count_problems(qset, expected)
    return out, notes, located


def _needle_problems(q: Question, docs, by_id, structure) -> tuple[list[str], Found | None]:
    """What is wrong with ``q``'s needle, and where it lies when it is found once in its
    document: verbatim, else (and only else) up to whitespace."""
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
    found = {d.id: spans for d in docs if (spans := verbatim(needle, d.text))}
    exact = bool(found)
    if not exact:
        pattern = spaced(needle)
        found = {d.id: spans for d in docs if (spans := matches(pattern, d.text))}
    total = sum(len(spans) for spans in found.values())
    if total == 0:
        problems.append("not found verbatim in the corpus" + _hint(q, docs, by_id))
        return problems, None
    if total > 1:
        where = ", ".join(f"{doc} ×{len(spans)}" for doc, spans in list(found.items())[:3])
        if len(found) > 3:
            where += f" and {len(found) - 3} more documents"
        spacing = "" if exact else " up to whitespace"
        problems.append(f"found {total} times{spacing} ({where}); it must occur exactly once")
        return problems, None
    ((doc_id, ((start, end),)),) = found.items()
    if q.doc in by_id and q.doc != doc_id:
        problems.append(f"found in {doc_id}, not in {q.doc}")
    touched = structure[doc_id].overlaps(start, end)
    for kind, hit in touched.items():
        if hit:
            problems.append(f"lies in a {kind} line of {doc_id}; a needle must be prose")
    if not exact and _BLANK_LINE.search(by_id[doc_id].text, start, end):
        problems.append(f"spans a blank line of {doc_id}; a needle is one sentence")
    return problems, Found(doc_id, start, end, exact) if q.doc == doc_id else None


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


def _hint(q: Question, docs: Sequence[Document], by_id) -> str:
    """Where a needle not found comes nearest (:func:`rag_lab.needles.near_miss`): its own
    document first, then the others; empty when nowhere."""
    order = [by_id[q.doc]] if q.doc in by_id else []
    order += [d for d in docs if d.id != q.doc]
    for d in order:
        if (near := near_miss(q.needle, d.text)) is not None:
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
