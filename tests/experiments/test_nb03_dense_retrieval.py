"""Notebook 03's tables: the chapter's view of recall, the overlap on ranking alone, the
wording, what the overlap rescues, the baseline, the quoted hits and the pull."""

from __future__ import annotations

from rag_lab.evaluation import chapter
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.evaluation.retrieval import strategies_of
from rag_lab.experiments import nb02_chunking as nb02
from rag_lab.experiments import nb03_dense_retrieval as nb03
from rag_lab.models.encoder import Timing
from rag_lab.questions import Query, Question


def queries_of(n: int) -> list[Query]:
    """Both phrasings of ``n`` questions, course first, as a QuestionSet orders them."""
    questions = [Question(f"q{i}", "d", "x" * (50 + 5 * i), "c?", "t?") for i in range(n)]
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


def rescued_on_tickets():
    """10 questions, 20 queries. A destroys 8 needles (the ticket phrasing of q2..q9); B
    rescues them all (rank 3) and ranks like A elsewhere."""
    a = [1] * 12 + [None] * 8
    b = [1] * 12 + [3] * 8
    ranks = {"A": a, "B": b, "C": b, "E": [1] * 20, "F": [1] * 20}
    return strategies_of(ranks, queries_of(10))


def test_ranking_alone_leaves_out_the_rescued_needles():
    dense = rescued_on_tickets()
    # on every query, each question A loses on its ticket phrasing is half a question's recall
    whole = dense.paired.get("B", "A", 20).difference
    assert round(whole.estimate, 3) == 0.4
    table = nb03.ranking_table(dense)
    # on the 12 queries both keep (10 questions: q0..q9 course, q0..q1 ticket), B ranks as A
    frame = table.frame
    assert frame["k"].tolist() == [8, 20]
    assert frame["a − b by question"].str.startswith("+0.000 [").all()
    assert frame["questions"].tolist() == ["+0/−0", "+0/−0"]
    assert table.width <= 100


def test_the_wording_is_paired_by_question():
    queries = queries_of(10)
    # the course wording always first; the ticket wording of q0..q2 never found
    ranks = [1] * 10 + [None] * 3 + [1] * 7
    dense = strategies_of({s: ranks for s in "ABCEF"}, queries)
    frame = nb03.wording_table(dense, queries).frame
    assert frame.index.tolist() == [s for s in "ABCEF" for _ in (8, 20)]
    assert frame["course − ticket by question"].str.startswith("+0.300 [").all()
    assert frame["questions"].unique().tolist() == ["+3/−0"]
    assert nb03.wording_table(dense, queries).width <= 100


def test_the_rescues_are_notebook_02s_count_from_the_same_record():
    destroyed = Destroyed(
        {"A": ("q0", "q1", "q2", "q9"), "B": ("q9",), "C": (), "D": (), "E": (), "F": ()}, 16
    )
    quoted_cut = {"B": ["q0", "q1", "q2"], "D": [], "F": []}
    table = nb03.rescue_table(destroyed, quoted_cut)
    frame = table.frame
    assert frame["twin"].tolist() == ["A", "C", "E"]
    assert frame["twin destroys"].tolist() == [4, 0, 0]
    assert frame["rescued"].tolist() == [3, 0, 0] and frame["quoted cut"].tolist() == [3, 0, 0]
    assert frame.loc["B", "rescued questions"] == "q0, q1, q2"
    assert frame.loc["D", "rescued questions"] == ""
    # notebook 02 shows the same count, from the same function on the same record
    assert nb02.destroyed_table(destroyed).frame.loc["B", "rescued"] == frame.loc["B", "rescued"]
    assert table.width <= 100


def test_the_chapters_table_holds_its_intervals_where_it_gives_them():
    dense = rescued_on_tickets()
    recall, misses = nb03.recall_tables(dense)
    frame = misses.frame
    lo, hi = chapter.WILSON_R20["A"]
    assert frame.loc["A", "chapter R@20"] == f"[{lo:.3f}, {hi:.3f}]"
    assert frame.loc["C", "chapter R@20"] == "–"
    assert frame.loc["A", "queries missed"] == 8
    assert recall.width <= 100 and misses.width <= 100


def test_index_cost_beside_the_chapter():
    frame = nb03.index_cost_table(Timing(texts=64, computed=64, seconds=4.768), "onnx").frame
    assert frame.loc["here", "ms per chunk"] == 74.5
    assert frame.loc["here", "chunks timed"] == 64
    assert frame.loc["the chapter", "ms per chunk"] == chapter.INDEX_MS_PER_CHUNK
