"""Where things live, resolved from the package, never from the working directory.

Two kinds of places:

- **Anywhere rag_lab runs** (a checkout or an installed wheel): the cache
  (:func:`cache_dir`, ``$RAG_LAB_CACHE``), and whatever a caller names (a corpus folder, a
  question file, ``$RAG_LAB_CORPUS``, ``$RAG_LAB_CHROMA``).
- **A checkout's conveniences**, and only a checkout's: the lab's own question files under
  ``data/``, the corpus ``make data`` builds there, the notebooks' ``figures/``, and the
  mirrors this workplace keeps beside a checkout (``../shared/``). An installed rag_lab has
  none of them; code that falls back on one says so when it is missing
  (:func:`in_checkout`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The folder that holds ``rag_lab/``: a checkout's root, or site-packages when installed."""

# --- a checkout's conveniences -------------------------------------------------------------

DATA = ROOT / "data"
QUESTIONS = DATA / "questions.yaml"
"""The lab's ground truth: the chapter's design, on the lab's corpus."""
BUILT_CORPUS = DATA / "corpus"
"""Where ``make data`` extracts the corpus from the upstream sources."""
FIGURES = ROOT / "figures"
FIGURES_ENV = "RAG_LAB_FIGURES"
"""Set it to write the figures elsewhere (``reproduce --output`` does, for a trial run)."""

MIRROR_CORPUS = ROOT.parent / "shared" / "corpus" / "d2l-en"
"""The prepared corpus beside a checkout, as laid out in this workplace."""
MIRROR_CHROMA = ROOT.parent / "shared" / "benchmarks" / "chroma"
"""Chroma's chunking benchmark beside a checkout, as laid out in this workplace."""


def in_checkout() -> bool:
    """True when this rag_lab runs from a checkout of the lab (its ``pyproject.toml`` beside
    the package), where the conveniences above exist; False for an installed package."""
    return (ROOT / "pyproject.toml").is_file() and (ROOT / "rag_lab").is_dir()


# --- anywhere ------------------------------------------------------------------------------

CACHE_ENV = "RAG_LAB_CACHE"
"""Set it to a folder to keep the caches there (an empty one runs everything cold)."""


def figures_dir() -> Path:
    """Where the notebooks write their figures: ``$RAG_LAB_FIGURES``, else ``figures/``."""
    return Path(os.environ[FIGURES_ENV]) if os.environ.get(FIGURES_ENV) else FIGURES


def cache_dir() -> Path:
    """The cache root: ``$RAG_LAB_CACHE``, else the platform's user cache folder
    (``~/.cache/rag-lab`` on Linux, ``$XDG_CACHE_HOME/rag-lab`` when that is set).

    One folder for every checkout and every installed copy on the machine, as pip, torch and
    Hugging Face keep theirs: the entries are keyed by everything that decides them (model
    fingerprint, exact input, library versions), so sharing them is safe, and a fresh clone
    starts warm.
    """
    if env := os.environ.get(CACHE_ENV):
        return Path(env).expanduser()
    try:
        import platformdirs
    except ImportError:  # the XDG rule, which is what platformdirs says on Linux
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rag-lab"
    return Path(platformdirs.user_cache_dir("rag-lab", appauthor=False))


_WARNED: set[Path] = set()
"""The caches already said unusable in this run."""


def warn_cache(where: Path, message: str) -> None:
    """``warning: message`` on stderr, once per run for the cache that holds ``where``.

    The cache is a courtesy: its trouble is said, never raised, and said once: when the
    cache is read-only, full or gone, every later entry would fail the same way, and each
    part of it (the ONNX graph, the vectors) would repeat the same news.
    """
    root = cache_dir()
    try:
        key = root if Path(where).is_relative_to(root) else Path(where)
    except (OSError, ValueError):
        key = Path(where)
    if key in _WARNED:
        return
    _WARNED.add(key)
    print(f"warning: {message}", file=sys.stderr)


def cache_sizes(root: Path | None = None) -> dict[str, int]:
    """Bytes under each folder of the cache root (``onnx``, ``embeddings``, ``answers``, …)."""
    root = root or cache_dir()
    if not root.is_dir():
        return {}
    return {
        d.name: sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        for d in sorted(root.iterdir())
        if d.is_dir()
    }


if __name__ == "__main__":  # python -m rag_lab.paths: where the cache is and what it holds
    sizes = cache_sizes()
    print(f"cache: {cache_dir()} (${CACHE_ENV} overrides it)")
    for name, size in sizes.items():
        print(f"  {size / 2**20:9,.1f} MB  {name}")
    print(f"  {sum(sizes.values()) / 2**20:9,.1f} MB  in all")
