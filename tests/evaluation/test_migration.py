"""The half-migrated index's measurements, on distances small enough to check by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import migration
from rag_lab.evaluation.migration import CURRENT, MIXED, ClsPooled, Migration, StampCheck
from rag_lab.models.minilm import Fingerprint


def toy(current: np.ndarray, mixed: np.ndarray, stale_rows, query_stale, relevant) -> Migration:
    negatives = np.full((2, current.shape[1]), 0.9)
    return Migration(
        frozenset({"old"}),
        np.array(stale_rows),
        np.array(query_stale),
        [f"q{i // 2}" for i in range(len(current))],
        relevant,
        (current, negatives),
        (mixed, negatives.copy()),
        cutoff=0.6,
    )


def test_stale_documents_are_every_second_in_sorted_order():
    ids = ["c", "a", "b", "d", "a"]
    assert migration.stale_documents(ids) == frozenset({"b", "d"})


def test_ranks_and_answers_without_the_needle():
    # Two chunks: 0 (current, holds every needle), 1 (stale). In the mixed index chunk 0 is
    # pushed away for the first query, which now ranks the needle second.
    current = np.array([[0.2, 0.5], [0.3, 0.4]])
    mixed = np.array([[0.7, 0.5], [0.3, 0.4]])
    m = toy(current, mixed, [False, True], [True, False], [{0}, {0}])
    assert m.ranks(CURRENT) == [1, 1]
    assert m.ranks(MIXED) == [2, 1]
    # Within the cutoff 0.6 both pass; at k = 1 the first query's context lacks the needle.
    assert m.answered_without_needle(MIXED, k=1).tolist() == [True, False]
    assert m.answered_without_needle(CURRENT, k=1).tolist() == [False, False]
    # A query whose nearest chunk is beyond the cutoff is refused, not answered.
    far = toy(
        current, np.array([[0.7, 0.65], [0.3, 0.4]]), [False, True], [True, False], [{0}, {0}]
    )
    assert far.answered_without_needle(MIXED, k=1).tolist() == [False, False]
    # The first query's nearest chunk in the half-migrated index is the stale one.
    bluffs = migration.bluffs_table(m).frame
    assert (
        bluffs.loc["nearest chunk is stale", MIXED]
        == bluffs.loc["… for the stale half's queries", MIXED]
        == 1
    )


def test_recall_table_splits_by_half():
    current = np.array([[0.2, 0.5], [0.3, 0.4]])
    mixed = np.array([[0.7, 0.5], [0.3, 0.4]])
    m = toy(current, mixed, [False, True], [True, False], [{0}, {0}])
    table = migration.recall_table(m, ks=(1,))
    assert table.loc[("stale half", 1), CURRENT] == 1.0
    assert table.loc[("stale half", 1), MIXED] == 0.0
    assert table.loc[("current half", 1), MIXED] == 1.0


def half_migrated() -> Migration:
    """16 questions asked twice; the first 8 have their needle (chunk 0, current) in the stale
    half, and in the half-migrated index chunk 0 falls behind the six stale chunks (beyond
    k = 5). One negative is within the cutoff of the whole index only."""
    n, chunks = 32, 7
    current = np.tile([0.2] + [0.5] * (chunks - 1), (n, 1))
    mixed = current.copy()
    mixed[:16, 0] = 0.95
    m = toy(current, mixed, [False] + [True] * (chunks - 1), [True] * 16 + [False] * 16, [{0}] * n)
    negatives = np.full((3, chunks), 0.9)
    negatives[0, 0] = 0.3
    mixed_negatives = negatives.copy()
    mixed_negatives[0, 0] = 0.95
    return dataclasses.replace(m, current=(current, negatives), mixed=(mixed, mixed_negatives))


def stamp_check(refused=frozenset({"old"}), refusal="refusing to search: …") -> StampCheck:
    return StampCheck(2, refusal, refused)


def test_entries_follow_the_ledger_rule():
    m = half_migrated()
    part = migration.entries(m, stamp_check())
    assert [e.claim for e in part] == [
        "migration-loses-stale@R5",
        "migration-current-half@R5",
        "migration-confident-nonsense",
        "migration-refused",
    ]
    lost, same, nonsense, refused = part
    assert lost.verdict is Verdict.REPRODUCES
    assert lost.here.startswith("+8/")
    assert lost.estimate == pytest.approx(1.0)
    # The current half is untouched: every question's difference is 0, which says nothing
    assert same.estimate == 0.0
    assert same.verdict is Verdict.NO_VARIATION
    assert same.margin == 0.05 and same.ci[0] < -same.margin < same.margin < same.ci[1]
    # Chunks at 0.5 pass the 0.6 cutoff while the needle is out of the context: 16 vs 0.
    assert nonsense.here == "16 vs 0 of 16 queries"
    assert nonsense.verdict is Verdict.REPRODUCES
    assert nonsense.estimate == pytest.approx(1.0) and nonsense.p_adjusted is None
    assert lost.p_adjusted == lost.p  # a family of one
    # The stamps' refusal must name exactly the stale documents.
    assert refused.verdict is Verdict.REPRODUCES
    wrong = migration.entries(m, stamp_check(refused=frozenset({"new"})))[3]
    assert wrong.verdict is Verdict.CONTRADICTED
    went_ahead = stamp_check(refused=frozenset(), refusal=None)
    assert migration.entries(m, went_ahead)[3].verdict is Verdict.CONTRADICTED


def test_the_bluffs_table_counts_each_index():
    bluffs = migration.bluffs_table(half_migrated()).frame
    assert bluffs.loc["stale half: answered", [CURRENT, MIXED]].tolist() == [16, 16]
    assert bluffs.loc["… needle not in top 5", [CURRENT, MIXED]].tolist() == [0, 16]
    assert bluffs.loc["nearest chunk is stale"].tolist() == ["–", 16, 32]
    assert bluffs.loc["… for the stale half's queries"].tolist() == ["–", 16, 16]
    assert bluffs.loc["negatives answered", [CURRENT, MIXED]].tolist() == [1, 0]


def test_the_distances_table_gives_each_distribution_in_numbers():
    table = migration.distances_table(half_migrated())
    frame = table.frame
    # Here the stale chunks (0.5) are nearer than the needle's (0.95): found, and first.
    assert frame.loc["stale chunks (older pipeline)"].tolist() == [32, 0.5, 32]
    current = frame.loc["current chunks"]
    assert current["median distance"] == pytest.approx(0.575)  # 0.2 or 0.95, half each
    assert current["within the cutoff"] == 16
    assert frame.loc["negatives, whole index"].tolist() == [3, 0.9, 1]
    assert table.width <= 100


class Tokens:
    """Token matrices whose first row is a known, non-unit [CLS] vector."""

    fingerprint = Fingerprint("m", "w", "mean_tokens", True, 256, 3)

    def tokens(self, texts):
        return [np.array([[3.0, 0.0, 4.0], [1.0, 1.0, 1.0]]) * (i + 1) for i, _ in enumerate(texts)]


def test_cls_pooling_takes_the_first_token_and_stamps_differently():
    old = ClsPooled(Tokens())
    v = old.encode(["a", "b"])
    assert v == pytest.approx(np.array([[0.6, 0.0, 0.8], [0.6, 0.0, 0.8]]))
    assert old.fingerprint.pooling == "cls"
    assert old.fingerprint.key != Tokens.fingerprint.key
    assert old.encode([]).shape == (0, 3)
