"""The package's import rules (``rag_lab/__init__.py``), read from the source of every module.

Each layer imports only the layers :data:`MAY_IMPORT` gives it. Imports under
``if TYPE_CHECKING:`` are types, not dependencies, and are not counted. The one crossing is
``app``'s ``evaluate`` command, which imports the evaluation library inside its function
(tests/app/test_app_layers.py checks that it is only there).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rag_lab

PACKAGE = Path(rag_lab.__file__).resolve().parent
LAYERS = ["core", "models", "sources", "evaluation", "app", "experiments"]
MAY_IMPORT = {
    "core": {"core"},
    "models": {"core", "models"},
    "sources": {"core", "sources"},
    "evaluation": {"core", "models", "sources", "evaluation"},
    "app": {"core", "models", "sources", "app", "evaluation"},
    "experiments": set(LAYERS),
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "core"


def dependencies(file: Path) -> set[str]:
    """The ``rag_lab`` modules ``file`` imports, leaving out ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rag_lab"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("rag_lab")}
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("file", MODULES, ids=lambda f: str(f.relative_to(PACKAGE)))
def test_a_module_imports_only_its_layer_and_those_before_it(file):
    module = "rag_lab." + ".".join(file.relative_to(PACKAGE).with_suffix("").parts)
    mine = layer_of(module)
    for dep in dependencies(file):
        theirs = layer_of(dep)
        assert theirs in MAY_IMPORT[mine], f"{module} ({mine}) imports {dep} ({theirs})"


def test_the_rule_catches_a_breach(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from rag_lab.experiments import nb03_dense_retrieval\n", encoding="utf-8")
    (dep,) = dependencies(bad)
    assert layer_of(dep) not in MAY_IMPORT["evaluation"]
    guarded = tmp_path / "typed.py"
    guarded.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rag_lab.models import x\n",
        encoding="utf-8",
    )
    assert dependencies(guarded) == set()
