"""Citations rendered as author-year text from the book's BibTeX file (``d2l.bib``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_ENTRY = re.compile(r"@\w+\s*\{\s*([^,\s]+)\s*,")
_FIELD = re.compile(r"\s*(\w+)\s*=\s*")
_CITATION = re.compile(r":(cite|citet):`([^`]*)`")
_TEX_ACCENT = re.compile(r"\\[^A-Za-z\s]")
_TEX_DOTLESS = re.compile(r"\\([ij])\b")
_YEAR = re.compile(r"\d{4}")


@dataclass(frozen=True)
class Reference:
    """What a citation needs from one bibliography entry: author surnames and year."""

    surnames: tuple[str, ...]
    year: str
    more_authors: bool = False
    """Whether authors beyond ``surnames`` exist (the ``ea`` of a d2l key)."""

    @property
    def authors(self) -> str:
        """``A``, ``A and B`` or ``A et al.``: the author part of a citation."""
        if self.more_authors or len(self.surnames) > 2:
            return f"{self.surnames[0]} et al."
        return " and ".join(self.surnames)


def parse_bibliography(bibtex: str) -> dict[str, Reference]:
    """Map each entry key of a BibTeX file to its :class:`Reference`.

    Entries without an ``author`` field are skipped: a citation of them falls
    back to reading the key.
    """
    references: dict[str, Reference] = {}
    for entry in _ENTRY.finditer(bibtex):
        fields = _read_fields(bibtex, entry.end())
        if "author" in fields:
            names = _split_names(fields["author"])
            references[entry.group(1)] = Reference(
                tuple(_surname(name) for name in names), _plain(fields.get("year", ""))
            )
    return references


def reference_from_key(key: str) -> Reference:
    """Read a d2l-style key ``Surname.Surname.ea.Year`` when the entry is missing.

    ``ea`` stands for further authors, so ``Smith.ea.2020`` renders as
    ``Smith et al.``; a key without a trailing year keeps the whole key as
    its author.
    """
    parts = key.split(".")
    if len(parts) < 2 or not _YEAR.fullmatch(parts[-1]):
        return Reference((key,), "")
    names = parts[:-1]
    if "ea" in names:
        return Reference(tuple(names[: names.index("ea")]), parts[-1], more_authors=True)
    return Reference(tuple(names), parts[-1])


def render_citations(text: str, bibliography: Mapping[str, Reference]) -> str:
    """Replace ``:cite:`` and ``:citet:`` roles by author-year text.

    ``:cite:`k1,k2``` becomes ``(A et al., 2016; A and B, 2019)``;
    ``:citet:`k``` becomes ``A et al. (2016)``, several keys joined by ``; ``.
    """

    def replace(role: re.Match[str]) -> str:
        keys = [key.strip() for key in role.group(2).split(",") if key.strip()]
        references = [bibliography.get(key) or reference_from_key(key) for key in keys]
        if role.group(1) == "citet":
            return "; ".join(
                f"{ref.authors} ({ref.year})" if ref.year else ref.authors for ref in references
            )
        return (
            "("
            + "; ".join(
                f"{ref.authors}, {ref.year}" if ref.year else ref.authors for ref in references
            )
            + ")"
        )

    return _CITATION.sub(replace, text)


def _read_fields(bibtex: str, start: int) -> dict[str, str]:
    """The ``name = value`` fields of the entry whose body starts at ``start``.

    Values are braced (possibly nested), quoted or bare (``Year = 1998``);
    field names are lower-cased because BibTeX ignores their case.
    """
    fields: dict[str, str] = {}
    pos = start
    while True:
        field = _FIELD.match(bibtex, pos)
        if field is None:
            return fields
        pos = field.end()
        if bibtex[pos] == "{":
            end = _closing_brace(bibtex, pos)
            value, pos = bibtex[pos + 1 : end], end + 1
        elif bibtex[pos] == '"':
            end = bibtex.index('"', pos + 1)
            value, pos = bibtex[pos + 1 : end], end + 1
        else:
            bare = re.compile(r"[^,}\s]*").match(bibtex, pos)
            assert bare is not None  # the pattern matches the empty string
            value, pos = bare.group(), bare.end()
        fields[field.group(1).lower()] = value
        separator = re.compile(r"\s*,?").match(bibtex, pos)
        assert separator is not None
        pos = separator.end()


def _closing_brace(text: str, opening: int) -> int:
    """The index of the brace that closes the one at ``opening``."""
    depth = 0
    for pos in range(opening, len(text)):
        if text[pos] == "{":
            depth += 1
        elif text[pos] == "}":
            depth -= 1
            if depth == 0:
                return pos
    raise ValueError(f"unbalanced braces in BibTeX value at offset {opening}")


def _split_top_level(text: str, separator: re.Pattern[str]) -> list[str]:
    """Split ``text`` where ``separator`` matches outside braces."""
    parts: list[str] = []
    depth = 0
    start = 0
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif depth == 0:
            match = separator.match(text, pos)
            if match and match.end() > pos:
                parts.append(text[start:pos])
                start = pos = match.end()
                continue
        pos += 1
    parts.append(text[start:])
    return parts


def _split_names(authors: str) -> list[str]:
    """The names of an ``author`` field; braces protect an ``and`` inside a name."""
    return [name.strip() for name in _split_top_level(authors, re.compile(r"\s+and\s+"))]


def _surname(name: str) -> str:
    """The surname of ``Last, First`` or ``First Last``; ``{Le Cun}`` stays one word."""
    parts = _split_top_level(name, re.compile(","))
    if len(parts) > 1:
        return _plain(parts[0])
    return _plain(_split_top_level(name, re.compile(r"\s+"))[-1])


def _plain(tex: str) -> str:
    """Text without TeX markup: ``Sch{\\"o}lkopf`` -> ``Scholkopf``, ``V.~N.`` -> ``V. N.``."""
    text = _TEX_ACCENT.sub("", tex)
    text = _TEX_DOTLESS.sub(r"\1", text)
    text = text.replace("~", " ").replace("{", "").replace("}", "")
    return " ".join(text.split())
