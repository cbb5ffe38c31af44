"""The chunking figures draw what they say: the budget against content, the window per panel."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from rag_lab.chunking import TARGET, chunk_corpus
from rag_lab.documents import Document
from rag_lab.evaluation import chunking, figures

matplotlib.use("Agg")

TEXT = "# T\n\nIntro.\n\n## One\n\n" + ("Words and more words here. " * 30 + "\n\n") * 6
DOCS = [Document("01-t", "T", TEXT)]


def _bars(ax) -> np.ndarray:
    """Heights of the filled bars of a histogram panel (outlines are not Rectangles)."""
    return np.array([p.get_height() for p in ax.patches if type(p).__name__ == "Rectangle"])


def test_the_size_figure_draws_content_against_the_budget():
    by = {name: chunk_corpus(DOCS, name) for name in "ABCDEF"}
    sizes = chunking.sizes(by)
    for name, chunks in by.items():
        assert sizes.content_lengths[name].tolist() == [len(c.content) for c in chunks]
    fig = figures.size_figure(sizes)
    panels = {ax.get_title().split(":")[0]: ax for ax in fig.axes if ax.get_visible()}
    assert sorted(panels) == list("ABCDEF")
    for name, ax in panels.items():
        # the filled bars count content, not the embedded text (B's text is 64 longer)
        assert _bars(ax).sum() == len(by[name])
        assert any(line.get_xdata()[0] == TARGET for line in ax.get_lines())
        assert f"n = {len(by[name])} chunks" in ax.get_title()
    longest = max(int(v.max()) for v in sizes.text_lengths.values())
    bins = np.arange(0.5, longest + 33, 32)
    for name in "BF":  # where text and content differ, the bars are content's histogram
        assert (
            _bars(panels[name]).tolist()
            == np.histogram(sizes.content_lengths[name], bins)[0].tolist()
        )
        assert (
            _bars(panels[name]).tolist() != np.histogram(sizes.text_lengths[name], bins)[0].tolist()
        )
    assert "(= text)" in panels["A"].get_title() and "(= text)" not in panels["B"].get_title()


@pytest.mark.model
def test_the_window_figure_gives_each_boundary_strategy_a_panel():
    by = {name: chunk_corpus(DOCS, name) for name in "ABCDEF"}
    pieces = chunking.word_pieces(by)
    fig = figures.window_figure(pieces)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert [t[0] for t in titles] == list("CDEF")
    for title in titles:
        name = title[0]
        assert f"{pieces.over(name)} over {pieces.window}" in title
