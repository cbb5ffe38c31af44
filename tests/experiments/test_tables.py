from __future__ import annotations

from rag_lab.experiments import nb03_dense_retrieval as nb03
from rag_lab.experiments import nb04_bm25_and_hybrid as nb04
from rag_lab.experiments import tables as rr
from rag_lab.questions import Query, Question


def test_interval_table_formats_value_and_wilson_bounds():
    table = rr.interval_table({"x": [1, 2, None, 9]}, ks=(1, 8))
    # 1 of 4 at k=1: Wilson 95 % [0.0456, 0.6994]; 2 of 4 at k=8: [0.1500, 0.8500].
    assert table.loc["x", "R@1"] == "0.250 [0.046, 0.699]"
    assert table.loc["x", "R@8"] == "0.500 [0.150, 0.850]"
    assert table.loc["x", "MRR"] == f"{(1 + 1 / 2 + 1 / 9) / 4:.3f}"
    assert table.loc["x", "no hit"] == 1


def test_two_by_two_counts_agreement_and_disagreement():
    a = [1, 1, 5, None, 2]
    b = [1, 9, 1, None, None]
    table = nb04.two_by_two(a, b, 1, ("a", "b"))
    assert table.loc["a hit", "b hit"] == 1
    assert table.loc["a hit", "b miss"] == 1
    assert table.loc["a miss", "b hit"] == 1
    assert table.loc["a miss", "b miss"] == 2


def test_paired_view_puts_the_chapter_beside_our_result():
    systems = {"E": [1] * 20 + [None] * 4, "A": [None] * 18 + [1] * 6}
    view = rr.paired_view(systems, [("E", "A")], ks=(20,))
    row = view.iloc[0]
    assert (row["wins"], row["losses"]) == (18, 4)
    assert row["chapter"] == "+18/−3, p = 0.0015"


def test_the_hybrid_reading_follows_the_numbers():
    # BM25 finds 3 queries at rank 1, dense 1: BM25 "more than doubles" dense top-1.
    ranks = {
        "dense": [1, 2, 2, 2, 3, 3],
        "BM25": [1, 1, 1, 30, 30, 30],
        "hybrid": [1, 1, 1, 2, 2, 2],
    }
    text = nb04.reading(ranks)
    assert "more than doubles dense top-1' reproduces" in text
    assert "BM25 loses by rank 8, as in the chapter" in text
    ranks["BM25"] = [2, 2, 2, 2, 2, 2]
    text = nb04.reading(ranks)
    assert "does not reproduce here" in text
    assert "BM25 does not lose by rank 8 here" in text


def test_the_dense_reading_separates_rescue_from_ranking():
    # 20 queries. A destroys 8 needles (None); B rescues them all and ranks like A elsewhere.
    a = [1] * 12 + [None] * 8
    b = [1] * 12 + [3] * 8
    ranks = {"A": a, "B": b, "C": b, "E": [1] * 20, "F": [1] * 20}
    questions = [Question(f"q{i}", "d", "n", "c", "t") for i in range(10)]
    queries = [Query(q, p) for p in ("course", "ticket") for q in questions]
    text = nb03.reading(ranks, queries)
    assert "B vs A: +8/−0, p = 0.0078 at R@8" in text
    assert "only because B rescues needles that A destroys" in text
    assert "on the 12 queries whose needle survives in both: +0/−0, p = 1.0 at R@8" in text
    assert "Overlap does not significantly help ranking" in text
    assert "E vs A at R@20: +8/−0, p = 0.0078" in text and "survives the paired sign test" in text
