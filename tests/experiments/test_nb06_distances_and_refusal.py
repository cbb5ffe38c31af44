from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest

from rag_lab.experiments import nb06_distances_and_refusal as dr
from rag_lab.questions import Negative


def test_the_identity_table_shows_one_pair_then_the_largest_gap_over_all_pairs():
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    table = dr.identity_table(vectors, 8.34e-7)
    assert list(table.index) == ["chunks 0 and 1", "max, 3 × 3"]
    # ‖a − b‖² = 0.16 + 0.64 = 0.8, so L2²/2 = 0.4 = 1 − 0.6.
    pair = table.loc["chunks 0 and 1"]
    assert pair["L2²/2"] == pytest.approx(0.4) and pair["1 − cos"] == pytest.approx(0.4)
    assert table.loc["max, 3 × 3", "|L2²/2 − (1 − cos)|"] == 8.34e-7
    assert np.isnan(table.loc["max, 3 × 3", "L2"])


def test_the_bluffs_table_lists_every_negative_under_the_cutoff_nearest_first():
    chunk = NS(doc_id="d", section="s", content="Weight decay adds a penalty.")
    negs = [
        Negative("n1", "uncovered", "does weight decay touch the cache"),
        Negative("n2", "offtopic", "how do i bake bread"),
    ]
    distances = np.array([[0.6, 0.7], [0.5, 0.9]])
    frame = dr.bluffs_table(distances, negs, [chunk, chunk], cutoff=0.65).frame
    assert frame["negative"].tolist() == ["n2", "n2", "n1", "n1"]
    assert frame["distance"].tolist() == [0.5, 0.9, 0.6, 0.7]
    assert frame["rank"].tolist() == [1, 2, 1, 2]
    assert frame["kind"].tolist() == ["semantic only"] * 2 + ["near miss"] * 2
    assert len(dr.bluffs_table(distances, negs, [chunk, chunk], cutoff=0.55).frame) == 2


def test_the_price_table_finds_the_cheapest_cutoff_at_each_price():

    sweep = pd.DataFrame(
        {"cutoff": [0.3, 0.5, 0.7, None], "bluffs": [0, 1, 3, 4], "refused": [6, 2, 0, 0]}
    )
    gated = NS(sweep=sweep, bluff_cost=2.0, negatives=4, answerable=8)
    frame = dr.price_table(gated, prices=(1.0, 3.0, 10.0)).frame
    # price 1: costs 6, 3, 3 (a tie: the smaller cutoff); 2: 6, 4, 6; 3: 6, 5, 9; 10: 6, 12, 30
    assert list(frame.index) == ["1", "2", "3", "10"]  # the run's own price joins the others
    assert frame["cutoff"].tolist() == [0.5, 0.5, 0.5, 0.3]
    assert frame["cost"].tolist() == [3, 4, 5, 6]
    assert (frame.loc["10", "bluffs"], frame.loc["10", "refused"]) == (0, 6)


def test_twins_sit_beside_the_negatives_at_the_same_cutoffs():
    from rag_lab.evaluation.twins import HeldOut

    def held(cutoff, bluffed):
        return HeldOut(cutoff, 16, bluffed, 0.4, 32, (), (0.0, 0.1))

    c = NS(held_out=held(0.3, 3), chapter=held(0.675, 16))
    bluffs = {0.3: 0, 0.675: 12}
    gated = NS(negatives=30, at=lambda cutoff: {"bluffs": bluffs[cutoff]})
    frame = dr.twins_beside_negatives(c, gated).frame
    assert frame["twins bluffed"].tolist() == ["3/16", "16/16"]
    assert frame["twin rate"].tolist() == pytest.approx([3 / 16, 1.0])
    assert frame["negatives bluffed"].tolist() == ["0/30", "12/30"]
    assert frame["negative rate"].tolist() == [0.0, 0.4]


def test_the_twin_distance_table_gives_the_quartiles():
    twins = NS(
        nearest=np.array([0.1, 0.2, 0.3, 0.4, 0.5]), twin=np.array([0.3, 0.4, 0.5, 0.6, 0.7])
    )
    frame = dr.twin_distance_table(NS(twins=twins)).frame
    assert frame.loc["the query"].tolist() == pytest.approx([0.2, 0.3, 0.4])
    assert frame.loc["its twin"].tolist() == pytest.approx([0.4, 0.5, 0.6])
