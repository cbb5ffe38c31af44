"""A question file's YAML read into records, with the line of every item and field.

:func:`parse` builds what the file says and reports what breaks its shape (a field missing,
unknown or not text, a list empty, a key given twice); the rules that need the corpus are
:func:`rag_lab.questions.load_questions`'s. Questions take two shapes, mixed freely in one
file (see :mod:`rag_lab.questions`): one passage as ``doc`` and ``needle`` or a list under
``passages``, and the phrasings ``course`` and ``ticket`` or a list under ``phrasings``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from rag_lab.question_records import PHRASINGS, Negative, Passage, Question, QuestionSet, Violation


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


_TEXT = "tag:yaml.org,2002:str"
"""The tag YAML resolves text to; a bare 17, true or ~ resolves to another."""

Lines = dict[tuple[str, int], dict[str | None, int]]
"""Line numbers by (list name, position) then field; field None is the item's own line. A
listed passage's fields are ``passages[1].doc``, ``passages[1].needle``, …; a listed
phrasing is ``phrasings[1]``, …"""

_TEXTS = {"questions": ("id", "doc", "needle", *PHRASINGS), "negatives": ("id", "kind", "query")}
_EITHER = (("passages", ("doc", "needle")), ("phrasings", PHRASINGS))
"""A question's two choices: a list of passages or one ``doc`` and ``needle``; a list of
phrasings or the named pair."""


def parse(root, path: Path) -> tuple[QuestionSet, Lines, list[Violation]]:
    """Build the QuestionSet from YAML nodes, remembering the line of every item and field."""
    lines: Lines = {}
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
    built: dict[str, list] = {"questions": [], "negatives": []}
    for name, node in sections.items():
        lists = tuple(listed for listed, _ in _EITHER) if name == "questions" else ()
        for pos, item in enumerate(node.value, 1):
            line = item.start_mark.line + 1
            if not isinstance(item, yaml.MappingNode):
                out.append(Violation(line, f"{name}[{pos}]", None, "expected a mapping"))
                continue
            values, value_lines, bad = _fields(item, _TEXTS[name], lists, None, "", out)
            ident = values.get("id", f"{name}[{pos}]")
            where: dict[str | None, int] = {None: line, **value_lines}
            if name == "negatives":
                missing = [f for f in _TEXTS[name] if f not in values and f not in bad]
                out += [Violation(line, ident, f, "missing field") for f in missing]
                record = None if missing or bad else Negative(**values)
            else:
                record = _question(values, where, bad, ident, out)
            if record is not None:
                lines[(name, len(built[name]))] = where
                built[name].append(record)
    if "questions" in sections and not sections["questions"].value:
        line = sections["questions"].start_mark.line + 1
        out.append(Violation(line, None, "questions", "no questions: the list is empty"))
    qset = QuestionSet(tuple(built["questions"]), tuple(built["negatives"]), path)
    return qset, lines, out


def _fields(item, texts, lists, ident, prefix: str, out: list[Violation]):
    """A mapping's fields: ``(values, lines, bad)``, the text fields as text and the list
    fields as their nodes, each with its line, and the fields already reported (not
    "missing" as well); every problem is added to ``out``, its field named ``prefix + key``."""
    values: dict = {}
    value_lines: dict[str, int] = {}
    bad: set[str] = set()
    seen: dict[str, int] = {}
    for k, v in item.value:
        key, at, field = k.value, k.start_mark.line + 1, prefix + str(k.value)
        if key in seen:
            second = _second(k, key, seen[key], "field in this item")
            out.append(dataclasses.replace(second, id=ident, field=field))
            bad.add(key)
            continue
        seen[key] = at
        if key in lists:
            if isinstance(v, yaml.SequenceNode) and v.value:
                values[key], value_lines[key] = v, at
            else:
                out.append(Violation(at, ident, field, "must be a non-empty list"))
                bad.add(key)
        elif key not in texts:
            out.append(Violation(at, ident, field, "unknown field"))
        elif (problem := _not_text(v)) is not None:
            out.append(
                Violation(
                    v.start_mark.line + 1 if _TAGGED in problem else at, ident, field, problem
                )
            )
            bad.add(key)
        else:
            values[key], value_lines[key] = str(v.value), v.start_mark.line + 1
    return values, value_lines, bad


_TAGGED = "must be text, not the YAML"


def _not_text(v) -> str | None:
    """Why node ``v`` is not non-empty text, or None."""
    if not isinstance(v, yaml.ScalarNode) or not str(v.value).strip():
        return "must be non-empty text"
    if v.tag != _TEXT:  # `id: 17`, `ticket: true`, `needle: ~`
        return f"{_TAGGED} {v.tag.rsplit(':', 1)[-1]} {v.value}; quote it"
    return None


def _question(values, where, bad, ident: str, out: list[Violation]) -> Question | None:
    """The question an item's fields make (``where`` gains the lines of listed passages and
    phrasings), or None when something is wrong (added to ``out``)."""
    ok = "id" in values
    if "id" not in values and "id" not in bad:
        out.append(Violation(where[None], ident, "id", "missing field"))
    read: dict[str, list] = {}
    for listed, single in _EITHER:
        given = [f for f in single if f in values or f in bad]
        if listed in values and given:
            message = f"either {listed} or {' and '.join(single)}, not both"
            out.append(Violation(where.get(listed), ident, listed, message))
            ok = False
        elif listed in values:
            reader = _passages if listed == "passages" else _phrasings
            read[listed] = reader(values[listed], ident, where, out)
            ok = ok and all(x is not None for x in read[listed])
        elif listed not in bad:
            missing = [f for f in single if f not in values and f not in bad]
            out += [Violation(where[None], ident, f, "missing field") for f in missing]
            ok = ok and not missing and not bad & set(single)
        else:
            ok = False
    if not ok:
        return None
    first, *others = read.get("passages") or [Passage(values["doc"], values["needle"])]
    named = {p: values[p] for p in PHRASINGS} if "phrasings" not in read else {}
    return Question(
        values["id"],
        first.doc,
        first.needle,
        **named,
        others=tuple(others),
        asked=tuple(read.get("phrasings", ())),
    )


def _passages(node, ident: str, where, out: list[Violation]) -> list[Passage | None]:
    """Each item of a ``passages:`` list as a :class:`Passage` (None when it is wrong)."""
    read: list[Passage | None] = []
    for j, item in enumerate(node.value, 1):
        line, field = item.start_mark.line + 1, f"passages[{j}]"
        if not isinstance(item, yaml.MappingNode):
            out.append(Violation(line, ident, field, "expected a mapping with doc and needle"))
            read.append(None)
            continue
        values, value_lines, bad = _fields(item, ("doc", "needle"), (), ident, f"{field}.", out)
        missing = [f for f in ("doc", "needle") if f not in values and f not in bad]
        out += [Violation(line, ident, f"{field}.{f}", "missing field") for f in missing]
        where.update({f"{field}.{f}": n for f, n in value_lines.items()})
        ok = not missing and not bad
        read.append(Passage(values["doc"], values["needle"]) if ok else None)
    return read


def _phrasings(node, ident: str, where, out: list[Violation]) -> list[str | None]:
    """Each item of a ``phrasings:`` list as text (None when it is not text)."""
    read: list[str | None] = []
    for j, v in enumerate(node.value, 1):
        line, field = v.start_mark.line + 1, f"phrasings[{j}]"
        if (problem := _not_text(v)) is not None:
            out.append(Violation(line, ident, field, problem))
            read.append(None)
        else:
            where[field] = line
            read.append(str(v.value))
    return read


def _second(key, name: str, first: int, what: str, more: str = "") -> Violation:
    """A key given twice in one mapping: the second's line, naming the first's."""
    message = f"a second '{name}:' {what} (the first is at line {first})"
    return Violation(key.start_mark.line + 1, None, name, message + (f"; {more}" if more else ""))
