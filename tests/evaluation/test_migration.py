"""The half-migrated index's measurements, on distances small enough to check by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import migration
from rag_lab.evaluation.migration import CURRENT, MIXED, ClsPooled, Migration
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
    assert m.top_is_stale().tolist() == [True, False]


def test_recall_table_splits_by_half():
    current = np.array([[0.2, 0.5], [0.3, 0.4]])
    mixed = np.array([[0.7, 0.5], [0.3, 0.4]])
    m = toy(current, mixed, [False, True], [True, False], [{0}, {0}])
    table = migration.recall_table(m, ks=(1,))
    assert table.loc[("stale half", 1), CURRENT] == 1.0
    assert table.loc[("stale half", 1), MIXED] == 0.0
    assert table.loc[("current half", 1), MIXED] == 1.0


def test_entries_follow_the_ledger_rule():
    # 16 questions, 2 phrasings each; the first 8 are in the stale half, where the needle's
    # chunk 0 falls behind six others (beyond k = 5) in the mixed index.
    n, chunks = 32, 7
    current = np.tile([0.2] + [0.5] * (chunks - 1), (n, 1))
    mixed = current.copy()
    mixed[:16, 0] = 0.95
    stale = [True] * 16 + [False] * 16
    m = toy(current, mixed, [False] + [True] * (chunks - 1), stale, [{0}] * n)
    by = {e.claim: e for e in migration.entries(m)}
    lost = by["migration-loses-stale@R5"]
    assert lost.verdict is Verdict.REPRODUCES
    assert lost.here.startswith("+8/")
    assert lost.estimate == pytest.approx(1.0)
    # The current half is untouched: every question's difference is 0, which says nothing
    same = by["migration-current-half@R5"]
    assert same.estimate == 0.0
    assert same.verdict is Verdict.NO_VARIATION
    assert same.margin == 0.05 and same.ci[0] < -same.margin < same.margin < same.ci[1]
    nonsense = by["migration-confident-nonsense"]
    # Chunks at 0.5 pass the 0.6 cutoff while the needle is out of the context: 16 vs 0.
    assert nonsense.here == "16 vs 0 of 16 queries"
    assert nonsense.verdict is Verdict.REPRODUCES
    assert nonsense.estimate == pytest.approx(1.0) and nonsense.p_adjusted is None
    assert lost.p_adjusted == lost.p  # a family of one


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
