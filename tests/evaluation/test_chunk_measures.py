"""The chunking measures behind notebooks 02 and 03's tables, on a document built here."""

from __future__ import annotations

from hand_counted import DOC, QUESTIONS

from rag_lab.chunking import STRATEGIES, chunk_corpus
from rag_lab.evaluation import chunking, overlap


def test_the_preamble_is_kept_and_counted():
    loss = chunking.preamble_loss([DOC], chunk_corpus([DOC], "C"), QUESTIONS)
    assert loss["intro chunks"] == 1 and loss["intro characters"] == len("Intro words.")
    assert loss["share of corpus"] == round(len("Intro words.") / len(DOC.text), 3)
    assert loss["needles in intros"] == "q2"


def test_what_the_overlap_rescues_is_what_its_twin_destroys_and_it_does_not():
    destroyed = chunking.Destroyed(
        {"A": ("q1", "q3", "q5"), "B": ("q3",), "C": ("q2",), "D": ("q2",), "E": (), "F": ()},
        6,
    )
    assert overlap.rescued_by_overlap(destroyed) == {"B": ("q1", "q5"), "D": (), "F": ()}


def test_the_counts_are_per_strategy():
    destroyed = chunking.destroyed({s: chunk_corpus([DOC], s) for s in STRATEGIES}, QUESTIONS)
    counts = destroyed.counts()
    assert counts["A"] == 1 and counts["B"] == 0 and set(counts) == set(STRATEGIES)
