"""Reranking: ordering, top-n handling, the unavailable path and the stand-in.

The stand-in is built once per session from the packaged MiniLM (a few seconds).
"""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab import rerank
from rag_lab.evaluation import joint, latency
from rag_lab.evaluation.latency import Latency
from rag_lab.experiments import nb05_reranking as rerank_report
from rag_lab.models import cross_encoder
from rag_lab.models.cross_encoder import RerankerUnavailable
from rag_lab.questions import Query, Question

# --- ordering (no model) -------------------------------------------------------------


def test_the_top_n_is_reordered_by_score_and_the_rest_keeps_its_place():
    ranking = [7, 3, 5, 0, 9, 2]
    assert rerank.rerank(ranking, [0.1, 0.9, 0.5], n=3).tolist() == [3, 5, 7, 0, 9, 2]


def test_ties_keep_first_stage_order():
    ranking = [4, 2, 8, 6]
    # 2 and 6 tie at the top and come out in their hybrid order; so do 4 and 8 below.
    assert rerank.rerank(ranking, [0.0, 1.0, 0.0, 1.0], n=4).tolist() == [2, 6, 4, 8]


def test_a_ranking_shorter_than_n_is_reordered_whole():
    assert rerank.rerank([1, 0], [-2.0, 3.0], n=25).tolist() == [0, 1]


def test_scores_must_match_the_candidates_and_n_must_be_positive():
    with pytest.raises(ValueError, match="2 scores for 3 candidates"):
        rerank.rerank([0, 1, 2, 3], [1.0, 2.0], n=3)
    with pytest.raises(ValueError, match="n must be >= 1"):
        rerank.rerank([0, 1], [], n=0)


QUESTION = Question("q1", "01-d", "needle", "find it", "pls find it")
QUERIES = [Query(QUESTION, "course"), Query(QUESTION, "ticket")]
TEXTS = ["zero", "one", "two", "three", "four"]


def test_rerank_all_scores_only_the_top_n_texts_of_each_query():
    seen = []

    def by_length(query: str, texts):
        seen.append((query, list(texts)))
        return np.array([len(t) for t in texts], dtype=float)

    rankings = [np.array([1, 0, 4, 2, 3]), np.array([3, 2, 1, 0, 4])]
    out = rerank.rerank_all(rankings, QUERIES, TEXTS, by_length, n=3)
    # Lengths: zero 4, one 3, four 4 -> zero and four tie, hybrid order (0 before 4) decides.
    assert out[0].tolist() == [0, 4, 1, 2, 3]
    assert out[1].tolist() == [3, 2, 1, 0, 4]  # three 5, two 3, one 3
    assert seen == [("find it", ["one", "zero", "four"]), ("pls find it", ["three", "two", "one"])]


def test_movement_counts_up_down_same_and_out_of_reach():
    systems = {"hybrid": [1, 3, 2, 30, None], "x": [2, 1, 2, 30, None]}
    table = rerank_report.movement_table(systems, n=25).frame
    assert table.loc["x"].to_dict() == {"up": 1, "down": 1, "same": 1, "beyond 25": 2}


def test_cost_table_divides_by_the_cheapest_stage():
    lat = [
        Latency("BM25 (score + rank)", np.array([0.5, 0.5])),
        Latency("cross-encoder × 25 pairs, x", np.array([500.0, 500.0])),
    ]
    table = latency.cost_table(lat)
    assert table["× cheapest"].tolist() == [1.0, 1000.0]
    assert table["chapter ×"].tolist() == [1.0, round(569.0 / 1.14, 1)]


# --- loading -------------------------------------------------------------------------


def test_a_failed_hub_load_becomes_unavailable_with_the_way_to_provide_it(monkeypatch):
    def offline(name):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files")

    monkeypatch.delenv(cross_encoder.ENV_VAR, raising=False)
    monkeypatch.setattr(cross_encoder, "_cross_encoder", offline)
    with pytest.raises(RerankerUnavailable) as err:
        cross_encoder.load_reranker()
    message = str(err.value)
    assert "RAG_LAB_RERANKER=/path/to/ms-marco-MiniLM-L-6-v2" in message
    assert "config.json" in message and "Hugging Face cache" in message


@pytest.mark.model
def test_the_hub_id_loads_the_real_model_or_nothing(monkeypatch):
    # Offline (the lab's default), this reads the local HF cache: here it is empty.
    monkeypatch.delenv(cross_encoder.ENV_VAR, raising=False)
    try:
        reranker = cross_encoder.load_reranker()
    except RerankerUnavailable:
        return
    assert not reranker.standin and reranker.label == "ms-marco-MiniLM-L-6-v2"


def test_a_folder_without_a_model_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv(cross_encoder.ENV_VAR, str(tmp_path))
    with pytest.raises(RerankerUnavailable, match=r"no config\.json\. Set RAG_LAB_RERANKER="):
        cross_encoder.load_reranker()


@pytest.fixture(scope="session")
def standin_folder(tmp_path_factory):
    return cross_encoder.standin_path(tmp_path_factory.mktemp("standin"))


@pytest.mark.model
def test_the_env_var_is_taken_and_a_standin_is_labelled_as_such(monkeypatch, standin_folder):
    monkeypatch.setenv(cross_encoder.ENV_VAR, str(standin_folder))
    reranker = cross_encoder.load_reranker()
    assert reranker.source == str(standin_folder)
    assert reranker.standin and reranker.label == "stand-in (meaningless scores)"
    assert joint.system_name(reranker) == "hybrid + stand-in (meaningless scores)"
    assert (
        "NOT cross-encoder/ms-marco" in (standin_folder / cross_encoder.STANDIN_MARKER).read_text()
    )


@pytest.mark.model
def test_the_standin_scores_pairs_deterministically_in_text_order(standin_folder):
    reranker = cross_encoder.load_reranker(standin_folder)
    texts = ["A tensor is an n-dimensional array.", "Paella needs saffron.", "Gradients."]
    scores = reranker.score("what is a tensor", texts)
    assert scores.shape == (3,) and scores.dtype == np.float64 and np.isfinite(scores).all()
    np.testing.assert_allclose(reranker.score("what is a tensor", texts[::-1]), scores[::-1])
    assert reranker.score("what is a tensor", []).shape == (0,)


LATENCIES = [
    Latency("BM25 (score + rank)", np.array([0.05])),
    Latency("vector scan (distances + rank)", np.array([0.25])),
    Latency("late interaction (query tokens + MaxSim) × 25", np.array([15.0])),
    Latency("cross-encoder × 25 pairs, stand-in (meaningless scores)", np.array([600.0])),
]
RANKS = {"hybrid": [1, 2, 30, 1], "hybrid + late interaction": [2, 1, 30, 1]}
FOUR = [
    Query(Question(f"q{i}", "d", "n", "c", "t"), p) for p in ("course", "ticket") for i in (1, 2)
]


@pytest.mark.model
def test_two_processes_building_the_stand_in_at_once_both_get_it(tmp_path):
    """Two builds of the stand-in into one cache at once (a notebook and a test did, and
    one deleted the other's half-written folder): both finish, one folder, no leftovers."""
    import threading

    root = tmp_path / "reranker-standin"
    errors: list[BaseException] = []

    def build() -> None:
        try:
            cross_encoder.standin_path(root)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    (folder,) = root.iterdir()
    assert (folder / cross_encoder.STANDIN_MARKER).is_file()
