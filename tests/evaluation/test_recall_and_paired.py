"""Recall tables and paired families (the library), and how the notebooks word them."""

from __future__ import annotations

import pytest

from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import chapter, hypotheses
from rag_lab.evaluation.paired import Finding, paired_table
from rag_lab.evaluation.recall import recall_table
from rag_lab.evaluation.retrieval import strategies_of, systems_of, two_by_two
from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
from rag_lab.metrics import hits_at
from rag_lab.questions import Query, Question
from rag_lab.stats import paired_difference


def test_the_recall_view_formats_value_and_wilson_bounds():
    table = recall_table({"x": [1, 2, None, 9]}, ks=(1, 8)).view()
    # 1 of 4 at k=1: Wilson 95 % [0.0456, 0.6994]; 2 of 4 at k=8: [0.1500, 0.8500].
    assert table.loc["x", "R@1"] == "0.250 [0.046, 0.699]"
    assert table.loc["x", "R@8"] == "0.500 [0.150, 0.850]"
    assert table.loc["x", "MRR"] == f"{(1 + 1 / 2 + 1 / 9) / 4:.3f}"
    assert table.loc["x", "no hit"] == 1


def test_two_by_two_counts_agreement_and_disagreement():
    a = [1, 1, 5, None, 2]
    b = [1, 9, 1, None, None]
    table = two_by_two(a, b, 1, ("a", "b"))
    assert table.loc["a hit", "b hit"] == 1
    assert table.loc["a hit", "b miss"] == 1
    assert table.loc["a miss", "b hit"] == 1
    assert table.loc["a miss", "b miss"] == 2


def test_paired_view_puts_the_chapter_beside_our_result():
    systems = {"E": [1] * 20 + [None] * 4, "A": [None] * 18 + [1] * 6}
    view = paired_table(systems, [("E", "A")], ks=(20,)).view(chapter.paired_reference, None)
    row = view.iloc[0]
    assert (row["wins"], row["losses"]) == (18, 4)
    assert row["chapter"] == "+18/−3, p = 0.0015"


def _clusters(queries):
    return [q.question.id for q in queries]


def queries_of(n_questions: int) -> list[Query]:
    """Both phrasings of ``n_questions`` questions, course first, as a QuestionSet orders them."""
    questions = [Question(f"q{i}", "d", "n", "c", "t") for i in range(n_questions)]
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


def test_a_difference_made_of_both_phrasings_is_one_trial_per_question():
    # 12 questions; a hits both phrasings of q0..q3, which b misses, and both agree elsewhere.
    queries = queries_of(12)
    a = [1] * 24
    b = [None if q.question.id in {"q0", "q1", "q2", "q3"} else 1 for q in queries]
    paired = paired_table({"a": a, "b": b}, [("a", "b")], (1,), _clusters(queries))
    row = paired.view(columns=None).iloc[0]
    # Per query: 8 wins, 0 losses, p = 2 / 2^8 = 0.0078. Per question: 4 wins, p = 2 / 2^4.
    assert row["per query"] == "+8/−0, p = 0.0078"
    assert (row["questions"], row["p"]) == ("+4/−0", "0.12")
    assert row["p Holm"] == "0.12"  # a family of one: Holm changes nothing
    assert row["finding"] == "per query only"
    # 4 of 12 questions gain a whole question's worth of recall: +1/3 by question.
    assert row["a − b by question"].startswith("+0.333 [")
    assert list(paired.view().columns) == [
        "pair",
        "k",
        "a − b by question",
        "questions",
        "p",
        "per query",
        "chapter",
    ]
    assert paired.get("a", "b", 1).finding is Finding.PER_QUERY_ONLY


def test_the_verdict_names_a_direction_only_when_the_question_level_test_says_so():
    queries = queries_of(8)
    a = [1] * 16
    b = [None] * 8 + [1] * 8  # a wins the course phrasing of all 8 questions
    paired = paired_table({"a": a, "b": b}, [("a", "b")], (1,), _clusters(queries))
    row = paired.view(columns=None).iloc[0]
    assert (row["questions"], row["p"], row["finding"]) == ("+8/−0", "0.0078", "a > b")
    assert paired.get("a", "b", 1).finding is Finding.A_BETTER


def test_the_question_level_interval_is_wider_when_phrasings_move_together():
    queries = queries_of(16)
    together = [1 if q.question.id in {f"q{i}" for i in range(8)} else None for q in queries]
    row = recall_table({"x": together}, ks=(1,), clusters=_clusters(queries))["x"]
    lo, hi = row.by_question[1]
    assert hi - lo > row.recall[1].hi - row.recall[1].lo  # 16 independent trials, not 32


def test_agreement_and_the_queries_only_one_retriever_finds():
    # 3 questions, both phrasings: q0..q2 course, then q0..q2 ticket
    queries = queries_of(3)
    ranks = {
        "dense": [1, 2, None, 15, 1, 3],
        "BM25": [1, None, 5, 2, 30, 10],
        "hybrid": [1, 4, 6, 3, 12, None],
    }
    systems = systems_of(ranks, _clusters(queries))
    agree = nb04.agreement_table(systems, ks=(1, 8)).frame
    assert agree.loc["R@8"].tolist() == [1, 3, 2, 0, 2, 2]  # both, dense/BM25 only, neither, …
    assert agree.loc["R@1"].tolist() == [1, 1, 0, 4, 1, 0]
    summary = nb04.found_by_one(systems, queries, k=8)[0].frame
    # dense only: q1/course, q1/ticket, q2/ticket (2 questions); BM25 ranks them 30 and 10
    # (one never); the hybrid keeps q1/course (rank 4) only
    assert summary.loc["dense only"].tolist() == [3, 2, "20", 1]
    # BM25 only: q2/course (dense never finds it) and q0/ticket (dense rank 15)
    assert summary.loc["BM25 only"].tolist() == [2, 2, "15", 2]


def test_the_dense_claims_follow_the_numbers():
    # 10 questions, 20 queries. A destroys 8 needles (the ticket phrasing of q2..q9); B
    # rescues them all and ranks like A elsewhere.
    a = [1] * 12 + [None] * 8
    b = [1] * 12 + [3] * 8
    ranks = {"A": a, "B": b, "C": b, "E": [1] * 20, "F": [1] * 20}
    dense = strategies_of(ranks, queries_of(10))
    lost = {"A": tuple(f"q{i}" for i in range(2, 10)), "B": ()}
    judged = {e.claim: e for e in hypotheses.strategy_entries(dense, destroyed=lost)}
    # E vs A: 8 questions differ by half a question's recall each: +0.400. The confirmatory
    # family is the five chapter claims (C vs A is a control, outside it): the verdict reads
    # the t interval at 1 − 0.05/5, the interval the entry shows, and the p it inverts.
    d = paired_difference(hits_at(ranks["E"], 20), hits_at(a, 20), _clusters(queries_of(10)))
    e_a = judged["E>A@R20"]
    assert e_a.estimate == pytest.approx(0.4) and e_a.p == pytest.approx(d.p)
    assert e_a.p_adjusted == pytest.approx(5 * d.p) and e_a.ci == pytest.approx(
        (d.at(0.99).lo, d.at(0.99).hi)
    )
    assert e_a.verdict is Verdict.REPRODUCES and e_a.ci[0] > 0
    # B rescues the 8 needles A destroys: that is rescue (B-destroys-none), not ranking. On
    # the two questions neither destroys, B and A rank alike: no variation to judge.
    assert judged["B=A@R8"].verdict is Verdict.NO_VARIATION
    assert "of 2 questions" in judged["B=A@R8"].here
    # judged on every question instead, rescue would read as overlap improving ranking
    everyone = {"A": (), "B": ()}
    confounded = {e.claim: e for e in hypotheses.strategy_entries(dense, destroyed=everyone)}
    assert confounded["B=A@R8"].verdict is Verdict.CONTRADICTED
    assert judged["B=A@R8"].chapter == "+8/−6, p = 0.79"
