"""The claims the lab tests, declared once in ``chapter.yaml`` and read here.

A :class:`Claim` is what is claimed (a paraphrase, never the chapter's sentence), the
chapter's result, the metric and comparison, its :class:`Direction`, the population it is
judged on, its role (the chapter's claim, a control, the project's hypothesis, an
exploratory look), its family, its margin and what stands in for what the chapter used.
Code that measures a claim names it by id and returns numbers; nothing else of the claim is
written anywhere but the file.

>>> claim("E>A@R20").compare, claim("E>A@R20").role
(Compare(a='E', b='A', k=20), 'chapter')
>>> claim("hybrid=dense@R4").margin
0.05
"""

from __future__ import annotations

import enum
import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rag_lab.errors import BadInput

FILE = Path(__file__).with_name("chapter.yaml")

ROLES = ("chapter", "control", "project", "exploratory")
"""Whose claim it is: the chapter's; a control (a check on the harness or on another
claim's design); this lab's own hypothesis; an exploratory look (another k, a sample)."""
CONFIRMATORY = "confirmatory"
EXPLORATORY = "exploratory"


class Direction(enum.Enum):
    """What a claim says of its metric."""

    BETTER = "better"
    """``a`` is higher than ``b``."""
    WORSE = "worse"
    """``a`` is lower than ``b``."""
    SAME = "no difference"
    """``a`` and ``b`` do not differ (within the claim's margin)."""
    COUNT = "count"
    """A condition on an exact count (a property of the corpus or of the run)."""
    VALUE = "value"
    """A rate the chapter reports; ours is compared with it."""
    AT_LEAST = "at least"
    """A quantity (a ratio) is above the chapter's bound."""


@dataclass(frozen=True)
class Compare:
    """A paired claim's systems: ``a`` against ``b`` at Recall@``k``."""

    a: str
    b: str
    k: int


@dataclass(frozen=True)
class Claim:
    """One claim as the file declares it."""

    id: str
    statement: str
    notebooks: Mapping[str, str]
    """Benchmark -> the notebook that measures the claim there."""
    direction: Direction
    metric: str
    role: str
    population: str
    stand_in: str | None
    family: str = ""
    compare: Compare | None = None
    chapter: str = "–"
    """The chapter's result as it reports it (``+18/−3, p = 0.0015``)."""
    chapter_effect: float | None = None
    """A paired claim's chapter effect on our scale; a value claim's reference value."""
    chapter_baseline: float | None = None
    """A paired claim's ``b`` in the chapter (its recall at ``k``), where the file can derive
    it: the chapter's effect is then also read as a share of the chapter's headroom."""
    margin: float | None = None
    margin_name: str = ""
    rule: str = ""
    not_as_stated: str = ""
    """Why the claim cannot be tested as the chapter states it (its stand-in changes the
    task): the verdict is then *not testable here*, whatever the numbers."""


class ClaimsFileError(BadInput, ValueError):
    """The claims file breaks its schema: the message names the claim and the field."""


_REQUIRED = ("id", "statement", "notebooks", "direction", "metric", "role", "population",
             "stand_in")  # fmt: skip
_KNOWN = {*_REQUIRED, "compare", "chapter", "chapter_effect", "chapter_value", "family",
          "margin", "rule", "not_testable_as_stated", "chapter_baseline"}  # fmt: skip


def claim(claim_id: str) -> Claim:
    """The declared claim ``claim_id``; a :class:`KeyError` naming the file if undeclared."""
    try:
        return claims()[claim_id]
    except KeyError:
        raise KeyError(f"claim {claim_id!r} is not declared in {FILE.name}") from None


@functools.cache
def claims() -> Mapping[str, Claim]:
    """Every declared claim by id, in the file's order."""
    return _parse(yaml.safe_load(FILE.read_text(encoding="utf-8")))


def sha256() -> str:
    """The claims file's sha256: the analysis plan the ledger was judged against."""
    return hashlib.sha256(FILE.read_bytes()).hexdigest()


@functools.cache
def chapter_questions() -> int:
    """How many questions the chapter's own evaluation asked (its design's size)."""
    doc = yaml.safe_load(FILE.read_text(encoding="utf-8"))
    return int(doc["chapter_design"]["questions"])


def generalisation_plan() -> Mapping[str, Any]:
    """The claims judged under each encoder (``reference``, ``encoders``, ``claims`` per
    benchmark, the ``cutoff`` policy), as the file declares them."""
    return yaml.safe_load(FILE.read_text(encoding="utf-8"))["generalisation"]


def deviations() -> list[Mapping[str, Any]]:
    """Changes to the plan made after results were seen (date, claim, reason)."""
    return list(yaml.safe_load(FILE.read_text(encoding="utf-8")).get("deviations") or [])


def _parse(doc: Mapping[str, Any]) -> dict[str, Claim]:
    margins = {name: float(m["value"]) for name, m in doc["margins"].items()}
    out: dict[str, Claim] = {}
    for i, raw in enumerate(doc["claims"]):
        where = f"{FILE.name}: claim {raw.get('id', f'#{i + 1}')!r}"
        missing = [f for f in _REQUIRED if f not in raw]
        unknown = sorted(set(raw) - _KNOWN)
        if missing or unknown:
            raise ClaimsFileError(f"{where}: missing {missing}, unknown {unknown}")
        if raw["id"] in out:
            raise ClaimsFileError(f"{where}: declared twice")
        if raw["role"] not in ROLES:
            raise ClaimsFileError(f"{where}: role {raw['role']!r} is not one of {ROLES}")
        direction = Direction(raw["direction"])
        family = raw.get("family", "")
        if family not in ("", CONFIRMATORY, EXPLORATORY):
            raise ClaimsFileError(f"{where}: family {family!r}")
        margin_name = raw.get("margin", "")
        if margin_name and margin_name not in margins:
            raise ClaimsFileError(f"{where}: margin {margin_name!r} is not in `margins`")
        if direction in (Direction.SAME, Direction.VALUE) and not margin_name:
            raise ClaimsFileError(f"{where}: a {direction.value} claim needs its margin")
        baseline = raw.get("chapter_baseline")
        if baseline is not None and set(baseline) != {"value", "from"}:
            raise ClaimsFileError(f"{where}: chapter_baseline needs its value and where it is from")
        compare = raw.get("compare")
        effect = raw.get("chapter_value", raw.get("chapter_effect"))
        stand_in = raw["stand_in"]
        out[raw["id"]] = Claim(
            id=raw["id"],
            statement=raw["statement"],
            notebooks=dict(raw["notebooks"]),
            direction=direction,
            metric=raw["metric"],
            role=raw["role"],
            population=raw["population"],
            stand_in=None if stand_in in (None, "none") else stand_in,
            family=family,
            compare=Compare(**compare) if compare else None,
            chapter=raw.get("chapter", "–"),
            chapter_effect=_number(effect),
            chapter_baseline=_number((raw.get("chapter_baseline") or {}).get("value")),
            margin=margins[margin_name] if margin_name else None,
            margin_name=margin_name,
            rule=raw.get("rule", ""),
            not_as_stated=raw.get("not_testable_as_stated", ""),
        )
        if out[raw["id"]].not_as_stated and out[raw["id"]].stand_in is None:
            raise ClaimsFileError(f"{where}: not_testable_as_stated needs the stand-in it names")
    return out


def _number(value: Any) -> float | None:
    """A float, or ``N/M`` read as a fraction (a count the chapter reports out of M)."""
    if value is None:
        return None
    if isinstance(value, str) and "/" in value:
        n, m = value.split("/")
        return int(n) / int(m)
    return float(value)


__all__ = [
    "CONFIRMATORY",
    "EXPLORATORY",
    "FILE",
    "ROLES",
    "Claim",
    "ClaimsFileError",
    "Compare",
    "Direction",
    "chapter_questions",
    "claim",
    "claims",
    "deviations",
    "generalisation_plan",
    "sha256",
]
