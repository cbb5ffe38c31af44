"""Notebook 04's tables: recall, the queries one retriever finds, the fusions and the
identifier interaction."""

from __future__ import annotations

import pandas as pd

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import hypotheses
from rag_lab.evaluation.fusion import FusionRuns
from rag_lab.evaluation.retrieval import systems_of
from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
from rag_lab.questions import Query, Question

N = 8
CLUSTERS = [f"q{i // 2}" for i in range(N)]
HYBRID = [1, 2, None, 3, 1, 5, 2, 1]


def systems(hybrid=HYBRID):
    ranks = {"dense": [1, 3, 4, None, 2, 1, 9, 1], "BM25": [2, 1, None, 3, 7, 8, 1, 4]}
    return systems_of({**ranks, "hybrid": list(hybrid)}, CLUSTERS)


def runs(rrf60=HYBRID):
    same = list(HYBRID)
    ranks = {f"RRF k={k}": same for k in (10, 20, 40, 100)}
    ranks["RRF k=60"] = list(rrf60)
    ranks["min-max"] = [1, 1, 2, 3, 1, 2, 2, 1]
    ranks["z-score"] = same
    return FusionRuns(ranks, {"min-max": [0.7] * 4, "z-score": [0.65] * 4}, 4)


def test_fusion_tables_show_every_run_and_each_folds_weights():
    recall, weights = nb04.fusion_tables(runs(), CLUSTERS)
    assert list(recall.frame.index) == list(runs().ranks)
    assert list(recall.frame.columns) == ["R@1", "R@4", "R@8", "MRR"]
    assert recall.frame.loc["min-max", "R@4"].startswith("1.000 [")
    assert list(weights.frame.index) == [1, 2, 3, 4]
    assert weights.frame["min-max"].tolist() == [0.7] * 4
    assert weights.frame["z-score"].tolist() == [0.65] * 4
    wide = FusionRuns(runs().ranks, {"min-max": [0.65] * 12, "z-score": [0.7] * 12}, 12)
    assert len(nb04.fusion_tables(wide, CLUSTERS)[1].frame) == 12


def test_the_convex_table_pairs_each_normalisation_with_rrf_60_at_every_k():
    frame = nb04.convex_table(runs(), CLUSTERS).frame.set_index(["pair", "k"])
    assert list(frame.index) == [
        (f"{how} vs RRF k=60", k) for how in ("min-max", "z-score") for k in (1, 4, 8)
    ]
    # At R@1 min-max wins query 1 (rank 1 against RRF's 2), half of question q0, and ties the
    # rest: +0.5 / 4 questions. z-score is RRF's own ranks.
    assert frame.loc[("min-max vs RRF k=60", 1), "a − b by question"].startswith("+0.125 [")
    assert frame.loc[("min-max vs RRF k=60", 1), "won/lost"] == "+1/−0"
    assert frame.loc[("z-score vs RRF k=60", 8), "a − b by question"].startswith("+0.000 [")


def queries_of(n_questions: int) -> list[Query]:
    """Both phrasings of ``n_questions`` questions, course first, as a QuestionSet orders them."""
    questions = [Question(f"q{i}", "d", "n", "c", "t") for i in range(n_questions)]
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


def test_the_tables_and_the_ledger_carry_what_the_reading_said():
    # BM25 finds 3 queries at rank 1, dense 1; the hybrid is at least dense's at every k.
    queries = queries_of(3)
    clusters = [q.question.id for q in queries]
    ranks = {
        "dense": [1, 2, 2, 2, 3, 3],
        "BM25": [1, 1, 1, 30, 30, 30],
        "hybrid": [1, 1, 1, 2, 2, 2],
    }
    s = systems_of(ranks, clusters)
    recall, _ = nb04.recall_tables(s)
    assert recall.frame.loc["BM25", "R@1"].startswith("0.500 [")
    assert recall.frame.loc["dense", "R@1"].startswith("0.167 [")
    agree = nb04.agreement_table(s, ks=(8,)).frame.loc["R@8"]
    assert (agree["dense only"], agree["BM25 only"]) == (3, 0)
    kept = nb04.found_by_one(s, queries, k=8)[0].frame.loc["dense only"]
    assert (kept["queries"], kept["hybrid within 8"]) == (3, 3)
    judged = {e.claim: e for e in hypotheses.system_entries(s, "04", "d2l")}
    assert judged["hybrid-every-column"].verdict is Verdict.REPRODUCES
    ranks |= {"BM25": [2] * 6, "hybrid": [2, 3, 3, 3, 3, 3]}
    judged = {e.claim: e for e in hypotheses.system_entries(systems_of(ranks, clusters))}
    assert judged["hybrid-every-column"].verdict is Verdict.CONTRADICTED
    assert judged["hybrid-every-column"].here == "below dense at R@1"


def test_the_overlap_strata_split_the_queries_by_the_words_they_share():
    from rag_lab.evaluation.retrieval import systems_of
    from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
    from rag_lab.questions import Query, Question

    # two questions: q0's phrasings share every word with the needle, q1's none
    q0 = Question("q0", "d", "alpha beta gamma", "alpha beta", "beta gamma")
    q1 = Question("q1", "d", "alpha beta gamma", "delta epsilon", "zeta eta")
    queries = [Query(q, p) for q in (q0, q1) for p in ("course", "ticket")]
    assert [nb04.word_share(q) for q in queries] == [1.0, 1.0, 0.0, 0.0]
    ranks = {"BM25": [1, 1, None, None], "dense": [None, None, 1, 1], "hybrid": [1, 1, 1, 1]}
    systems = systems_of(ranks, queries)
    frame = nb04.overlap_strata(systems, queries, ks=(1,)).frame
    assert frame["queries"].tolist() == [2, 2]
    assert frame["BM25"].tolist() == [0.0, 1.0] and frame["dense"].tolist() == [1.0, 0.0]


def test_the_probe_recall_view_counts_the_queries_missed():
    queries = queries_of(12)
    ranks = {"dense": [None] * 24, "BM25": [1] * 24, "hybrid": [9] * 24}
    recall = nb04.recall_view(ranks, queries).frame
    assert [recall.loc[name, "R@1"][:5] for name in ranks] == ["0.000", "1.000", "0.000"]
    assert [recall.loc[name, "R@8"][:5] for name in ranks] == ["0.000", "1.000", "0.000"]
    assert recall.loc["dense", "queries missed"] == 24


def traps_of(distances: list[float], holds: list[bool]) -> pd.DataFrame:
    n = len(distances)
    return pd.DataFrame(
        {
            "query": ["q?"] * n,
            "distance": distances,
            "nearest chunk": ["d > s"] * n,
            "passes": [d < 0.675 for d in distances],
            "rare terms": ["term"] * n,
            "holds rare term": holds,
            "kind": ["near miss"] * n,
            "shared": ["term"] * n,
        },
        index=pd.Index([f"t{i}" for i in range(1, n + 1)], name="id"),
    )


def test_the_trap_tables_show_where_each_trap_lands_and_what_it_shares():
    traps = traps_of([0.66, 0.70, 0.61, 0.80], [True, False, False, False])
    where, why = nb04.trap_tables(traps)
    assert where.frame["passes"].tolist() == [True, False, True, False]
    assert where.frame["distance"].tolist() == [0.66, 0.70, 0.61, 0.80]
    assert why.frame["holds rare term"].tolist() == [True, False, False, False]
    assert list(why.frame.columns) == ["rare terms", "holds rare term", "kind", "shared"]
    assert where.width <= 100 and why.width <= 100
