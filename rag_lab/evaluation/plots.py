"""One look for every figure, and one way to save it under ``figures/``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib.pyplot as plt

from rag_lab import paths

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "svg.hashsalt": "rag_lab",
}
STRATEGY_COLORS = {
    "A": "#9e9e9e",
    "B": "#424242",
    "C": "#64b5f6",
    "D": "#0d47a1",
    "E": "#ffb74d",
    "F": "#bf360c",
}
"""One colour per chunking strategy in every figure: greys for blind cuts, blues for
boundaries, oranges for boundaries with the header; the darker of a pair has the overlap."""

SYSTEM_COLORS = {
    "dense": "#1565c0",
    "BM25": "#2e7d32",
    "hybrid": "#e65100",
    "cross-encoder": "#6a1b9a",
    "late interaction": "#00838f",
}
"""One colour per retriever or second stage, in every figure."""

VERDICT_COLORS = {
    "reproduces": "#2e7d32",
    "contradicted": "#c62828",
    "excludes_chapter_effect": "#6a1b9a",
    "inconclusive": "#757575",
    "no_variation": "#b0bec5",
    "by_construction": "#90a4ae",
    "not_testable": "#cfd8dc",
    "not_measured": "#eceff1",
}
"""One colour per verdict (keyed by :class:`~rag_lab.claims.verdicts.Verdict` value)."""

ROLE_COLORS = {
    "answerable": "#1565c0",
    "negative": "#e65100",
    "offtopic": "#ffb74d",
    "lost": "#c62828",
    "kept": "#2e7d32",
    "other": "#6a1b9a",
}
"""What a query or a needle is: answerable against negative, kept against lost."""

NEUTRAL = {"ink": "#000000", "mid": "#9e9e9e", "faint": "#bdbdbd", "paper": "#eceff1"}
"""Greys: reference lines (ink), the others behind a panel (faint), backgrounds (paper)."""

CHAPTER_MARK = {"marker": "x", "color": "#000000", "ms": 6, "ls": "", "mew": 1.4}
"""How the chapter's own number is marked on any figure: a black cross."""

MOVE_COLORS = {
    "up": "#2e7d32",
    "down": "#c62828",
    "same": "#757575",
    "out of reach": "#bdbdbd",
}
"""Where a second stage moves a query's first hit: up, down, nowhere, or out of its reach."""

KEPT_RAMP = (ROLE_COLORS["lost"], NEUTRAL["paper"])
"""A share kept, from none (the lost red) to all (paper): a heatmap in which losses stand
out and what is whole recedes."""


@contextmanager
def style() -> Iterator[None]:
    with plt.rc_context(STYLE):
        yield


def show(fig, name: str, folder: Path | None = None) -> None:
    """Display ``fig`` where it is discussed, save it as ``figures/<name>.png``, close it.

    The figure is shown explicitly rather than left to the inline backend, which skips a
    figure drawn under :func:`style` after another one in the same notebook; closing it
    keeps the backend from drawing it a second time.
    """
    import matplotlib.pyplot as plt
    from IPython.display import display

    save(fig, name, folder)
    display(fig)
    plt.close(fig)


def save(fig, name: str, folder: Path | None = None) -> Path:
    """Write ``fig`` as ``<folder>/<name>.png`` (default ``figures/``) and return the path."""
    folder = folder or paths.figures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{name}.png"
    # The style's dpi and tight bounding box are passed here too: save() runs outside style().
    fig.savefig(out, dpi=STYLE["savefig.dpi"], bbox_inches="tight", metadata={"Software": None})
    return out
