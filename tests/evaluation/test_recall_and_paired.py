"""Recall tables and paired families (the library), and how the notebooks word them."""

from __future__ import annotations

from rag_lab.evaluation import chapter
from rag_lab.evaluation.paired import Finding, paired_table
from rag_lab.evaluation.recall import recall_table
from rag_lab.evaluation.retrieval import strategies_of, systems_of, two_by_two
from rag_lab.experiments import nb03_dense_retrieval as nb03
from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
from rag_lab.experiments import present
from rag_lab.questions import Query, Question


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


def test_the_hybrid_reading_follows_the_numbers():
    # BM25 finds 3 queries at rank 1, dense 1: BM25 "more than doubles" dense top-1.
    queries = queries_of(3)
    ranks = {
        "dense": [1, 2, 2, 2, 3, 3],
        "BM25": [1, 1, 1, 30, 30, 30],
        "hybrid": [1, 1, 1, 2, 2, 2],
    }
    systems = systems_of(ranks, _clusters(queries))
    text = nb04.reading(systems)
    # the reading gives the ratio; the verdict is the ledger's, among every claim
    assert "BM25 R@1 = 0.500, dense 0.167: 3.00× dense's (the chapter: more than double)" in text
    assert "Fusion is at least as good as dense at every k" in text
    assert (
        "At R@8, 3 queries are found only by dense and 0 only by BM25: one dominates the "
        "other. The hybrid keeps 3 of the first and 0 of the second within 8." in text
    )
    claims_text = present.every_claim(nb04.entries(systems))
    assert "- **BM25<dense@R8** (BM25 loses to dense by rank 8): by question" in claims_text
    ranks["BM25"] = [2, 2, 2, 2, 2, 2]
    ranks["hybrid"] = [2, 3, 3, 3, 3, 3]
    text = nb04.reading(systems_of(ranks, _clusters(queries)))
    assert "BM25 R@1 = 0.000, dense 0.167: 0.00× dense's" in text
    assert "Fusion is below dense at R@1 (0.000 vs 0.167)" in text


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
    summary = nb04.found_by_one_summary(systems, queries, k=8).frame
    # dense only: q1/course, q1/ticket, q2/ticket (2 questions); BM25 ranks them 30 and 10
    # (one never); the hybrid keeps q1/course (rank 4) only
    assert summary.loc["dense only"].tolist() == [3, 2, "20", 1]
    # BM25 only: q2/course (dense never finds it) and q0/ticket (dense rank 15)
    assert summary.loc["BM25 only"].tolist() == [2, 2, "15", 2]


def test_the_dense_reading_separates_rescue_from_ranking():
    # 10 questions, 20 queries. A destroys 8 needles (the ticket phrasing of q2..q9); B
    # rescues them all and ranks like A elsewhere.
    a = [1] * 12 + [None] * 8
    b = [1] * 12 + [3] * 8
    ranks = {"A": a, "B": b, "C": b, "E": [1] * 20, "F": [1] * 20}
    dense = strategies_of(ranks, queries_of(10))
    text = nb03.reading(dense, queries_of(10))
    # Each question that A loses on its ticket phrasing is worth half a question's recall.
    assert (
        "B − A by question: +0.400 [" in text and "B holds 8 needles that A's cuts destroy" in text
    )
    assert "On the 12 queries whose needle survives in both (10 questions): +0.000 [" in text
    assert "on ranking alone this design cannot tell" in text
    text = present.every_claim(nb03.entries(dense))
    # E vs A: 8 questions differ, p = 2/2^8 = 0.0078. The confirmatory family is the five
    # chapter claims (C vs A is a control, outside it); three have that p, so Holm lifts the
    # smallest to 5 × 0.0078 = 0.039: significant, and E > A reproduces.
    assert "- **E>A@R20** (boundaries with a header beat blind cuts): by question +0.400 [" in text
    assert "+8/−0 of 10 questions; question-level p = 0.0078 (Holm 0.039)" in text
    assert "**Reproduces**." in text
    # B rescues 8 needles A destroys: "overlap does not improve ranking" is contradicted here.
    assert "- **B=A@R8** (overlap does not improve ranking (R@8))" in text
    assert "(Holm 0.039); the chapter: +8/−6, p = 0.79. **Contradicted**." in text
