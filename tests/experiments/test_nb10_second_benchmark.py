"""Notebook 10's tables and figures on records built here: no benchmark, no encoder."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from rag_lab.evaluation import plots, recall_curves
from rag_lab.experiments import nb10_second_benchmark as nb10
from rag_lab.experiments.present import MAX_WIDTH


def test_corpus_view_counts_per_corpus_and_in_all():
    from types import SimpleNamespace as NS

    from rag_lab.spans import Span

    docs = [NS(id="x", text="ab ab cd"), NS(id="y", text="efgh")]
    questions = [NS(spans=(Span("x", 0, 2), Span("x", 6, 8))), NS(spans=(Span("y", 0, 4),))]
    chunks = {"C": [NS(doc_id="x"), NS(doc_id="x"), NS(doc_id="y")]}
    bench = NS(docs=docs, questions=questions, chunks_by=chunks)
    frame = nb10.corpus_view(bench).frame
    assert list(frame.index) == ["x", "y", "all"]
    assert list(frame["characters"]) == [8, 4, 12]
    assert list(frame["questions"]) == [1, 1, 2] and list(frame["excerpts"]) == [2, 1, 3]
    assert list(frame["repeated"]) == [1, 0, 1]  # "ab" occurs twice in x
    assert list(frame["chunks of C"]) == [2, 1, 3]


def _by_corpus() -> pd.DataFrame:
    """Two corpora and C, D, E, F at k = 5: in ``x`` overlap lowers precision in both pairs,
    in ``y`` only in F vs E."""
    precision = {"x": (0.3, 0.2, 0.4, 0.1), "y": (0.1, 0.2, 0.4, 0.3)}
    rows = []
    for corpus, values in precision.items():
        for name, p in zip("CDEF", values, strict=True):
            row = {"corpus": corpus, "strategy": name, "k": 5, "n": 3 if corpus == "x" else 4}
            for m, v in (("recall", 0.5 + p), ("precision", p), ("iou", p / 2)):
                row |= {m: v, f"{m} lo": v - 0.01, f"{m} hi": v + 0.01}
            rows.append(row)
    return pd.DataFrame(rows).set_index(["corpus", "strategy", "k"])


def test_per_corpus_view_counts_the_pairs_where_overlap_lowers_precision():
    table = _by_corpus()
    overall = table.xs("x", level="corpus").drop(columns="n")
    view = nb10.per_corpus_view(table, overall).frame
    assert list(view.index) == ["x", "y", "all"]
    assert list(view["questions"]) == [3, 4, 7]
    assert list(view["overlap lowers precision"]) == [2, 1, 2]  # of the two pairs
    assert view.loc["y", ["recall min", "recall max"]].tolist() == pytest.approx([0.6, 0.9])
    assert view.loc["x", ["IoU min", "IoU max"]].tolist() == pytest.approx([0.05, 0.2])


def _sweep() -> pd.DataFrame:
    """Two rows of :func:`rag_lab.evaluation.spans.sweep_table`, its columns in its order."""
    rows = {
        name: {
            "size": 256,
            "overlap": overlap,
            "R@5": 0.45,
            "R@5 lo": 0.40,
            "R@5 hi": 0.50,
            "recall @5": 0.6,
            "precision @5": 0.1,
            "IoU @5": iou,
            "chunks": 7202,
            "characters for 5 chunks": 1001.4852,
            "generator tokens for 5": 1036.38,
            "chunks past 256 word-pieces": 16,
        }
        for name, overlap, iou in (("C256", False, 0.1), ("D256", True, 0.2))
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("strategy")


def test_sweep_views_give_counts_and_characters_with_units_not_raw_floats():
    retrieved, cost = nb10.sweep_views(_sweep())
    r, c = retrieved.shown(), cost.shown()
    assert list(r.columns)[2:] == ["R@5", "recall @5", "precision @5", "IoU @5", "IoU @5 rank"]
    assert list(retrieved.frame["overlap"]) == [False, True]
    assert r.loc["C256", "R@5"] == "0.450 [0.400, 0.500]"
    assert list(retrieved.frame["IoU @5 rank"]) == [2, 1]  # 1: the highest IoU
    assert cost.frame.loc["C256"].tolist() == [7202, 1001, 1036, 16]
    assert c.loc["C256", "characters for 5 chunks"] == "1001"
    assert max(retrieved.width, cost.width) <= MAX_WIDTH


def test_recall_curves_take_the_palettes_colours_and_the_strategies_names():
    ranks = {"E": [1, 2, None], "BM25": [1, None, None], "mine": [3, 3, 3]}
    fig = recall_curves.recall_curve_figure(ranks, "t", kmax=4)
    panels = fig.axes[:3]
    assert [ax.get_title() for ax in panels] == ["E: boundaries + header", "BM25", "mine"]
    # Each panel's own curve is drawn last, after the others' faint ones.
    own = [ax.get_lines()[-1].get_color() for ax in panels]
    assert own == [plots.STRATEGY_COLORS["E"], plots.SYSTEM_COLORS["BM25"], plots.NEUTRAL["ink"]]
    assert panels[0].get_lines()[0].get_color() == plots.NEUTRAL["faint"]
    custom = recall_curves.recall_curve_figure(ranks, "t", {"E": plots.NEUTRAL["mid"]}, kmax=4)
    assert custom.axes[0].get_lines()[-1].get_color() == plots.NEUTRAL["mid"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


# --- issue 25: Chroma's table, fusion, geometry -------------------------------------------


def _rows():
    import numpy as np

    from rag_lab.evaluation.chroma_table import Published, Row
    from rag_lab.sources.chroma.chunkers import TokenChunker

    recall = np.array([0.7, 0.8] * 50)
    return [
        Row(Published(TokenChunker("fixed", 250, 0), 77.1), 1314, recall, recall / 20, recall / 21),
        Row(Published(TokenChunker("recursive", 200, 0), 75.7), 2386, recall / 2, recall, recall),
    ]


def test_published_view_sets_ours_with_its_interval_beside_the_published_value():
    view = nb10.published_view(_rows())
    shown = view.frame
    assert list(shown.index) == ["fixed 250/0", "recursive 200/0"]
    assert list(shown["published"]) == [77.1, 75.7]
    assert shown.loc["fixed 250/0", "chunks"] == 1314
    assert shown.loc["fixed 250/0", "recall"].startswith("75.0 [")
    assert shown.loc["recursive 200/0", "precision"].startswith("75.0 [")
    assert view.width <= MAX_WIDTH


def _runs():
    from rag_lab.evaluation.fusion import FusionRuns

    ranks = {"RRF k=60": [1, None, 3, 5], "min-max": [2, 1, None, 4]}
    return FusionRuns(ranks, {"min-max": [0.5, 0.55], "z-score": [0.6, 0.7]}, 2)


def test_fusion_view_gives_recall_at_each_k_and_checks_rrf_against_the_hybrid():
    view = nb10.fusion_view(_runs(), [1, None, 3, 5], ks=(1, 4))
    frame = view.frame
    assert list(frame.index) == ["RRF k=60", "min-max"]
    assert list(frame["R@1"]) == [0.25, 0.25] and list(frame["R@4"]) == [0.5, 0.75]
    assert list(frame["ranks = hybrid"]) == [True, False]
