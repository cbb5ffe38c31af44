"""One root for every exception of the package, through exactly one of the three kinds."""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

import pytest

from rag_lab import errors
from rag_lab.errors import BadEnvironment, BadInput, RagLabError, UnusableIndex

PACKAGE = Path(errors.__file__).resolve().parent
KINDS = (BadInput, BadEnvironment, UnusableIndex)
BUILTIN = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def exception_classes() -> list[tuple[str, str]]:
    """(module, class) of every class under rag_lab/ that derives from an exception,
    found in the source (no module is imported to find them)."""
    found: dict[str, tuple[str, list[str]]] = {}
    for file in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(file.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).split(".")[-1] for b in node.bases]
                found[f"{module}:{node.name}"] = (node.name, bases)
    names = set(BUILTIN)
    while True:  # a class is an exception if one of its bases is
        more = {name for name, bases in found.values() if names & set(bases)} - names
        if not more:
            break
        names |= more
    return sorted(
        tuple(key.split(":")) for key, (name, _) in found.items() if name in names - BUILTIN
    )


def test_the_scan_finds_the_exceptions_it_should():
    classes = exception_classes()
    assert ("rag_lab.app.store.errors", "IndexDamaged") in classes
    assert ("rag_lab.sources.pdf.document", "NoTextLayer") in classes  # a subclass of one
    assert ("rag_lab.errors", "RagLabError") in classes
    assert len(classes) >= 30


@pytest.mark.parametrize(("module", "name"), exception_classes())
def test_every_exception_has_the_root_and_one_kind(module, name):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, RagLabError)
    if cls in (RagLabError, *KINDS):
        return
    assert sum(issubclass(cls, k) for k in KINDS) == 1, cls.__mro__


def test_second_bases_are_kept_for_callers_that_catch_them():
    from rag_lab.app.store import StoreError
    from rag_lab.models.minilm import ModelError
    from rag_lab.questions import QuestionsError
    from rag_lab.sources.folder import IngestError

    assert issubclass(QuestionsError, ValueError) and issubclass(IngestError, ValueError)
    assert issubclass(ModelError, RuntimeError) and issubclass(StoreError, RuntimeError)
