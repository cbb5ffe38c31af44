"""A baseline ``report.json`` read and checked before any work: every field the regression
gate (:mod:`rag_lab.evaluation.regression`) reads is what a report of ``rag-lab evaluate``
holds, or a :class:`BaselineError` names the first that is not and why (a rank −1 or NaN
would give an MRR of 2; a rank "1" or a null distance would fail after the whole run).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_lab.errors import BadInput


class BaselineError(BadInput, ValueError):
    """A baseline report that cannot be compared with: missing, unreadable or foreign."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path}: {reason}")


REPORT_MAX_BYTES = 256 * 2**20
"""The largest baseline read: a report of a million queries is well under it."""


def read_report(path: str | os.PathLike) -> dict[str, Any]:
    """A ``report.json`` written by ``rag-lab evaluate`` with a deployment record, or a
    :class:`BaselineError` saying why not."""
    path = Path(path)
    if not path.exists():
        raise BaselineError(path, "no such file (give the report.json of an earlier run)")
    if not path.is_file():
        raise BaselineError(path, "not a file (give the report.json inside the report folder)")
    if path.stat().st_size > REPORT_MAX_BYTES:
        raise BaselineError(path, f"more than {REPORT_MAX_BYTES // 2**20} MiB, not a report.json")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise BaselineError(path, f"cannot be read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise BaselineError(path, "not UTF-8 text, so not a report.json") from None
    except json.JSONDecodeError as err:
        raise BaselineError(
            path, f"not JSON (line {err.lineno}, column {err.colno}: {err.msg})"
        ) from None
    if not isinstance(report, dict) or "rag_lab" not in report:
        raise BaselineError(path, "not a report of rag-lab evaluate (no rag_lab version in it)")
    deployment = report.get("deployment")
    if not isinstance(deployment, dict) or not isinstance(report.get("stamps"), dict):
        raise BaselineError(
            path,
            f"a report of rag_lab {report['rag_lab']} without per-question ranks and stamps "
            "(written before the regression gate)",
        )
    needed = ("queries", "questions", "destroyed", "ks", "cutoff")
    missing = [k for k in needed if k not in deployment]
    if missing:
        raise BaselineError(path, f"its deployment record lacks {', '.join(missing)}")
    problem = _problem(report)
    if problem is not None:
        raise BaselineError(path, f"{problem[0]}: {problem[1]}")
    return report


KINDS = ("needles", "spans")
"""A report's ``kind``: :class:`~rag_lab.evaluation.report.Evaluation`'s."""


def require_kind(baseline: Mapping[str, Any], kind: str, path: str | os.PathLike) -> None:
    """Refuse a baseline of another kind of questions than ``kind``: they cannot be paired."""
    if baseline.get("kind") != kind:
        raise BaselineError(
            path,
            f"a report of {baseline.get('kind')} questions, and this run has {kind}: they "
            "cannot be paired",
        )


def _problem(report: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first field :func:`compare` reads that is not what a report of rag-lab evaluate
    holds, and why (a rank −1 or NaN would give an MRR of 2; a rank "1" or a null distance
    would fail after the whole run): (its place, e.g. ``deployment.queries[3].rank``, the
    reason); None when every field is sound."""
    if report.get("kind") not in KINDS:
        return "kind", f"{_shown(report.get('kind'))} is not one of {', '.join(KINDS)}"
    d = report["deployment"]
    ks, cutoff = d["ks"], d["cutoff"]
    if not isinstance(ks, list) or not ks or not all(_whole(k) and k >= 1 for k in ks):
        return "deployment.ks", f"{_shown(ks)} is not a list of whole numbers from 1"
    if not _distance(cutoff):
        return "deployment.cutoff", f"{_shown(cutoff)} is not a cosine distance (0 to 2)"
    for key in ("questions", "destroyed"):
        if not isinstance(d[key], list) or not all(isinstance(q, str) for q in d[key]):
            return f"deployment.{key}", "not a list of question ids (text)"
    negatives = d.get("negatives") or []
    for name, rows in (("queries", d["queries"]), ("negatives", negatives)):
        if not isinstance(rows, list) or (name == "queries" and not rows):
            return f"deployment.{name}", f"not a list of the run's {name}"
        seen: set[str] = set()
        for i, row in enumerate(rows):
            problem = _row_problem(row, name == "queries", seen)
            if problem is not None:
                return f"deployment.{name}[{i}]{problem[0]}", problem[1]
    return None


def _row_problem(row: Any, query: bool, seen: set[str]) -> tuple[str, str] | None:
    """What is wrong with one query (or negative) of a deployment record, if anything."""
    if not isinstance(row, dict):
        return "", f"{_shown(row)} is not an object"
    texts = ("id", "question") if query else ("id",)
    for key in texts:
        if not isinstance(row.get(key), str) or not row[key]:
            return f".{key}", "missing" if key not in row else f"{_shown(row[key])} is not text"
    if row["id"] in seen:
        return ".id", f"{_shown(row['id'])} appears twice"
    seen.add(row["id"])
    rank = row.get("rank")
    if query and rank is not None and not (_whole(rank) and rank >= 1):
        return ".rank", f"{_shown(rank)} is not a rank (a whole number from 1, or null)"
    if not _distance(row.get("nearest")):
        return ".nearest", f"{_shown(row.get('nearest'))} is not a cosine distance (0 to 2)"
    if query and not isinstance(row.get("top chunk", ""), str):
        return ".top chunk", f"{_shown(row['top chunk'])} is not a chunk id (text)"
    return None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _distance(value: Any) -> bool:
    """A cosine distance: a finite number from 0 to 2 (a rounding's width beyond)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and -1e-6 <= value <= 2 + 1e-6


def _shown(value: Any) -> str:
    """A value as its JSON, cut to 40 characters (NaN as NaN, a text quoted)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else f"{text[:39]}…"
