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
COLORS = {
    "A": "#9e9e9e",
    "B": "#616161",
    "C": "#64b5f6",
    "D": "#1565c0",
    "E": "#ffb74d",
    "F": "#e65100",
}


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
