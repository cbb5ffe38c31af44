"""RRF against cross-validated score fusion: folds by question, weights never fit on their
own fold, one code path for any notion of a hit."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluation.fusion import Scores, assign_folds, best_weight, fuse
from rag_lab.metrics import first_hit_ranks


def test_folds_keep_a_question_whole_and_are_balanced():
    clusters = [f"q{i}" for i in range(10) for _ in range(2)]
    folds = assign_folds(clusters, 5)
    for i in range(0, 20, 2):
        assert folds[i] == folds[i + 1]
    assert sorted(np.bincount(folds)) == [4] * 5  # two questions, four queries per fold
    assert (assign_folds(clusters, 5) == folds).all()  # seeded
    with pytest.raises(ValueError, match="2 ≤ folds ≤ questions"):
        assign_folds(clusters, 11)


def test_the_weight_is_chosen_on_the_other_folds():
    # 8 questions × 2 queries, 3 chunks; chunk 2 is always the answer. On the questions of
    # fold 0 only BM25 ranks it first; everywhere else only dense does. Fitted on its own
    # questions, fold 0 would trust BM25 and hit; cross-validated, it gets the weight the
    # other folds chose (dense) and misses: its answer falls to rank 3. (At w = 0.5 every
    # chunk ties and chunk 0 comes first: a miss too, so no weight serves both.)
    n = 16
    clusters = [f"q{i // 2}" for i in range(n)]
    fold0 = assign_folds(clusters, 4) == 0
    good, bad = np.array([0.0, 0.5, 1.0]), np.array([1.0, 0.5, 0.0])
    sim = np.stack([bad if f else good for f in fold0])
    bm25 = np.stack([good if f else bad for f in fold0])
    hits = lambda r: first_hit_ranks(r, [{2}] * n)  # noqa: E731
    runs = fuse(Scores(sim, bm25), hits, clusters, folds=4, objective_k=1)
    assert set(runs.ranks) == {f"RRF k={k}" for k in (10, 20, 40, 60, 100)} | {"min-max", "z-score"}
    for how in ("min-max", "z-score"):
        ranks = np.array(runs.ranks[how])
        assert (ranks[fold0] == 3).all() and (ranks[~fold0] == 1).all(), how
        assert runs.weights[how][0] > 0.5  # fold 0 was ranked with dense trusted


def test_a_tie_goes_to_the_middle():
    assert best_weight({0.0: 1.0, 0.5: 1.0, 1.0: 1.0}) == 0.5
    assert best_weight({0.3: 1.0, 0.7: 1.0}) == 0.3


def test_mismatched_inputs_are_named():
    with pytest.raises(ValueError, match="one row and one cluster per query"):
        fuse(Scores(np.zeros((2, 3)), np.zeros((2, 3))), lambda r: [1, 1], ["q0"])


def test_claims_compare_every_run_with_rrf_60():
    from rag_lab.claims.verdicts import Verdict
    from rag_lab.evaluation.fusion import FusionRuns, claims, entries

    n = 32
    clusters = [f"q{i // 2}" for i in range(n)]
    same = [1] * n
    runs = FusionRuns(
        {**{f"RRF k={k}": same for k in (10, 20, 40, 60, 100)}, "min-max": same, "z-score": same},
        {"min-max": [0.5], "z-score": [0.5]},
        8,
    )
    ids = [c.claim for c in claims(runs)]
    assert ids == [
        "RRF10~RRF60@R4", "RRF20~RRF60@R4", "RRF40~RRF60@R4", "RRF100~RRF60@R4",
        "min-max>RRF@R4", "z-score>RRF@R4",
    ]  # fmt: skip
    by = {e.claim: e for e in entries(runs, clusters, "04", "d2l")}
    # Identical runs on 16 questions: no variation, for "the same" as for "better"
    assert by["RRF10~RRF60@R4"].verdict is Verdict.NO_VARIATION
    assert by["RRF10~RRF60@R4"].estimate == 0.0 and by["RRF10~RRF60@R4"].margin == 0.05
    assert by["min-max>RRF@R4"].verdict is Verdict.NO_VARIATION
    assert all(e.p_adjusted is None for e in by.values())  # all exploratory
