from __future__ import annotations

import numpy as np
import pytest

from rag_lab import gate

# Three answerable queries and two negatives over five chunks (cosine distances).
ANSWERABLE = np.array(
    [
        [0.20, 0.50, 0.90, 0.40, 0.60],  # needle in chunk 0, which is nearest
        [0.70, 0.55, 0.65, 0.80, 0.90],  # needle in chunk 4, outside the top 4
        [0.45, 0.45, 0.30, 0.95, 0.52],  # needle in chunk 1, tied with chunk 0
    ]
)
RELEVANT = [{0}, {4}, {1}]
NEGATIVES = np.array([[0.60, 0.58, 0.90, 0.99, 0.70], [0.85, 0.88, 0.95, 0.90, 0.86]])


def test_gate_keeps_at_most_k_under_the_cutoff_nearest_first():
    kept = gate.gate(ANSWERABLE[0], cutoff=0.55)
    assert kept.positions == (0, 3, 1) and kept.distances == (0.20, 0.40, 0.50)
    assert gate.gate(ANSWERABLE[0], cutoff=None).positions == (0, 3, 1, 4)
    assert gate.gate(ANSWERABLE[0], cutoff=0.2).refused  # strictly under the cutoff


def test_ties_keep_chunk_order():
    assert gate.gate(ANSWERABLE[2], cutoff=None, k=3).positions == (2, 0, 1)


def test_outcomes_at_one_cutoff():
    # At 0.6: q0 keeps 0,3,1 (needle); q1 keeps 1 (no needle); q2 keeps 2,0,1,4 (needle).
    # Negative 0 keeps chunk 1 (0.58): a bluff; negative 1 keeps nothing.
    assert gate.outcomes(ANSWERABLE, RELEVANT, NEGATIVES, 0.6) == {
        "bluffs": 1,
        "refused": 0,
        "answered without needle": 1,
        "answered with needle": 2,
    }
    assert gate.outcomes(ANSWERABLE, RELEVANT, NEGATIVES, 0.5)["refused"] == 1


def test_sweep_and_the_cheapest_cutoff():
    table = gate.sweep(ANSWERABLE, RELEVANT, NEGATIVES, [None, 0.3, 0.5, 0.6, 0.9])
    assert table["bluffs"].tolist() == [2, 0, 0, 1, 2]
    assert table["refused"].tolist() == [0, 2, 1, 0, 0]
    # Cost = 3 × bluffs + refused: 6, 2, 1, 3, 6 -> 0.5 is cheapest.
    assert gate.cheapest_cutoff(table, bluff_cost=3)["cutoff"] == 0.5
    # If bluffs are cheap, the widest gate is as good as any; the smallest cutoff wins ties.
    assert gate.cheapest_cutoff(table, bluff_cost=0)["cutoff"] == 0.6


@pytest.mark.parametrize("cutoff", [0.0, 0.35, 0.7, 1.5])
def test_more_permissive_cutoffs_never_refuse_more(cutoff):
    tighter = gate.outcomes(ANSWERABLE, RELEVANT, NEGATIVES, cutoff)
    looser = gate.outcomes(ANSWERABLE, RELEVANT, NEGATIVES, cutoff + 0.1)
    assert looser["refused"] <= tighter["refused"]
    assert looser["bluffs"] >= tighter["bluffs"]
