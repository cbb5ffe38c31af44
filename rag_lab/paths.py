"""Where things live, resolved from the package, never from the working directory."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root (the folder that holds ``rag_lab/``)."""

DATA = ROOT / "data"
FIGURES = ROOT / "figures"
CACHE = ROOT / ".cache"

MIRROR_CORPUS = ROOT.parent / "shared" / "corpus" / "d2l-en"
"""The prepared corpus beside a checkout, as laid out in this workplace."""

MIRROR_CHROMA = ROOT.parent / "shared" / "benchmarks" / "chroma"
"""Chroma's chunking benchmark beside a checkout, as laid out in this workplace."""

BUILT_CORPUS = DATA / "corpus"
"""Where ``make data`` extracts the corpus from the upstream sources."""

QUESTIONS = DATA / "questions.yaml"


def cache_dir() -> Path:
    """The on-disk cache root: ``$RAG_LAB_CACHE``; else ``.cache/`` in the repository when
    running from a checkout; else the platform's user cache folder (an installed package's
    own folder is usually not writable)."""
    if env := os.environ.get("RAG_LAB_CACHE"):
        return Path(env)
    if (ROOT / ".git").exists() or (ROOT / "pyproject.toml").is_file():
        return CACHE
    try:
        import platformdirs
    except ImportError:  # the XDG rule, which is what platformdirs says on Linux
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rag-lab"
    return Path(platformdirs.user_cache_dir("rag-lab"))
