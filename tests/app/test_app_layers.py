"""The import rules of ``rag_lab/app`` (its ``__init__`` docstring), read from the source."""

from __future__ import annotations

import ast
from pathlib import Path

import rag_lab.app

APP = Path(rag_lab.app.__file__).resolve().parent
ORDER = [
    "store",
    "index",
    "deployed",
    "ingest",
    "lifecycle",
    "values",
    "arguments",
    "terminal",
    "output",
    "exits",
    "commands",
    "cli",
]
"""Each module may import only those before it."""


def imports(file: Path, *, top_level_only: bool = False) -> set[str]:
    """The ``rag_lab`` modules ``file`` imports (at module level only, if asked)."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rag_lab"):
            found |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("rag_lab")}
    return found


def app_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["rag_lab", "app"] and len(parts) > 2 else None


def test_each_app_module_imports_only_those_before_it():
    for file in APP.rglob("*.py"):
        rel = file.relative_to(APP).parts
        me = rel[0].removesuffix(".py")
        if me == "__init__":
            continue
        allowed = set(ORDER[: ORDER.index(me)]) | {me}
        used = {app_part(m) for m in imports(file)} - {None}
        assert used <= allowed, (file, used - allowed)


def test_storage_imports_only_the_core():
    for file in (APP / "store").rglob("*.py"):
        outside = {m for m in imports(file) if not m.startswith("rag_lab.app.store")}
        layers = {m.split(".")[1] for m in outside}
        assert layers <= {"chunking", "errors"}, (file, outside)


def test_the_app_never_imports_the_notebooks_and_evaluates_only_inside_evaluate():
    for file in APP.rglob("*.py"):
        assert not any(m.startswith("rag_lab.experiments") for m in imports(file)), file
        assert not any(
            m.startswith("rag_lab.evaluation") for m in imports(file, top_level_only=True)
        ), file
    evaluate = APP / "commands" / "evaluate.py"
    assert any(m.startswith("rag_lab.evaluation") for m in imports(evaluate))
