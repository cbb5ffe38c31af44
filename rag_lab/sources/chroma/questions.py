"""Chroma's question file (``questions_df.csv``): questions answered by excerpts at offsets.

Columns :data:`CHROMA_COLUMNS`; each ``references`` cell is a JSON list of ``{"content",
"start_index", "end_index"}``. :func:`load_chroma_questions` validates every row against the
corpus and reports every problem at once, with the CSV's physical line, as the lab's YAML
loader does (:mod:`rag_lab.questions`); :func:`questions_kind` tells the two formats apart
by content.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import yaml

from rag_lab.documents import Document
from rag_lab.questions import QuestionsError, Violation, normalized, read_text
from rag_lab.spans import Span, SpanQuestion

CHROMA_COLUMNS = ("question", "references", "corpus_id")
"""The columns of Chroma's ``questions_df.csv``; ``references`` is a JSON list."""


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
    source = read_text(path).removeprefix("\ufeff")  # a BOM, as Excel writes one
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
    counts = Counter(normalized(q.text) for q in questions)
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
    ``negatives`` is the lab's, and so is text YAML cannot parse (its loader says where).
    Raises :class:`QuestionsError` for anything else.
    """
    path = Path(path)
    source = read_text(path)
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
        return "yaml"  # not CSV, and broken YAML: its loader names the parser's line
    if isinstance(root, yaml.MappingNode) and any(
        k.value in ("questions", "negatives") for k, _ in root.value
    ):
        return "yaml"
    message = (
        "neither a YAML question file (a mapping with 'questions') nor Chroma's CSV "
        f"(a header with {', '.join(CHROMA_COLUMNS)})"
    )
    raise QuestionsError(path, [Violation(None, None, None, message)])


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
