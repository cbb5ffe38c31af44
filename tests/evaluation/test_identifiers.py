"""Identifier probes: the file, what counts as an identifier, the paired claims, the traps' words,
and the interaction (a difference of per-question gaps, bootstrapped by group)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rag_lab import paths
from rag_lab.chunking import chunk_corpus
from rag_lab.claims import claim
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import identifiers
from rag_lab.evaluation.identifiers import classify
from rag_lab.experiments import present
from rag_lab.questions import Query, Question, load_questions
from rag_lab.stats import bootstrap_interaction, per_question


def test_per_question_averages_phrasings():
    assert per_question([1, 0, 1, 1], ["a", "a", "b", "b"]).tolist() == [0.5, 1.0]


def test_bootstrap_interaction_centres_on_the_difference_of_means():
    rng = np.random.default_rng(1)
    first, second = rng.normal(0.3, 0.2, 40), rng.normal(0.0, 0.2, 40)
    m, lo, hi = bootstrap_interaction(first, second)
    assert m == pytest.approx(first.mean() - second.mean())
    assert lo < m < hi
    # About a normal interval's width: 2 · 1.96 · sqrt(0.2²/40 · 2) ≈ 0.18.
    assert 0.12 < hi - lo < 0.24
    with pytest.raises(ValueError):
        bootstrap_interaction([], [1.0])


def test_entries_read_the_interval():
    # BM25 wins every identifier question at k = 4 and ties every ordinary one.
    probe = {"BM25": [1, 1, 1, 1] * 4, "dense": [None] * 16}
    probe_clusters = [f"p{i // 2}" for i in range(16)]
    ordinary = {"BM25": [1] * 16, "dense": [1] * 16}
    clusters = [f"q{i // 2}" for i in range(16)]
    (e,) = identifiers.interaction_entries(probe, probe_clusters, ordinary, clusters)
    assert e.claim == "identifier-interaction@R4"
    assert e.verdict is Verdict.REPRODUCES
    assert e.estimate == pytest.approx(1.0)
    assert e.statement == claim(e.claim).statement and e.reason == claim(e.claim).rule
    assert e.ci == pytest.approx((1.0, 1.0)) and e.method == identifiers.METHOD
    (flipped,) = identifiers.interaction_entries(ordinary, clusters, probe, probe_clusters)
    assert flipped.verdict is Verdict.CONTRADICTED


def test_interaction_table_on_the_probes_and_the_questions():
    probe = {"BM25": [1, 1, 1, 1, 9, 9], "dense": [9, 9, 9, 9, 9, 9]}
    probe_clusters = [f"p{i}" for i in range(3) for _ in ("course", "ticket")]
    ordinary, clusters = {"BM25": [1] * 8, "dense": [1] * 8}, [f"q{i // 2}" for i in range(8)]
    table = identifiers.interaction_table(probe, probe_clusters, ordinary, clusters)
    assert table.loc[4, "identifier gap"] == pytest.approx(2 / 3)
    assert table.loc[4, "questions"] == "3 + 4" and table.index.name == "R@k"


def test_an_interval_across_zero_is_inconclusive():
    # BM25 wins half the identifier questions at k = 4 and loses the other half.
    probe = {"BM25": [1, 1, None, None] * 4, "dense": [None, None, 1, 1] * 4}
    probe_clusters = [f"p{i // 2}" for i in range(16)]
    ordinary = {"BM25": [1] * 16, "dense": [1] * 16}
    clusters = [f"q{i // 2}" for i in range(16)]
    (e,) = identifiers.interaction_entries(probe, probe_clusters, ordinary, clusters)
    assert e.estimate == pytest.approx(0.0) and e.ci[0] < 0 < e.ci[1]
    # inconclusive, with what an interval of that width could detect (no paired design)
    assert e.verdict is Verdict.INCONCLUSIVE and e.detectable > (e.ci[1] - e.ci[0]) / 2 > 0


def mentions(text: str, identifier: str) -> bool:
    """Does ``text`` contain ``identifier`` as a whole word, ignoring case?"""
    word = rf"(?<![A-Za-z0-9_]){re.escape(identifier)}(?![A-Za-z0-9_])"
    return re.search(word, text, re.I) is not None


@pytest.fixture(scope="module")
def probes(docs):
    # raises QuestionsError, listing every violation, if any rule breaks
    return identifiers.load(docs)


@pytest.fixture(scope="module")
def chunks_e(docs):
    return chunk_corpus(docs, "E")


@pytest.mark.corpus
def test_the_probe_file_validates_and_has_the_promised_size(probes, docs):
    assert len(probes.questions) >= 16
    traps = [n for n in probes.negatives if n.id.startswith("t")]
    assert len(traps) >= 8 and all(n.kind == "uncovered" for n in traps)
    assert len({q.doc for q in probes.questions}) >= 12  # spread over many documents
    assert all(q.id.startswith("p") for q in probes.questions)


@pytest.mark.corpus
def test_the_probes_are_apart_from_the_chapter_questions(probes, docs):
    chapter = load_questions(paths.QUESTIONS, docs)
    assert not {q.id for q in probes.questions} & {q.id for q in chapter.questions}
    assert not {n.id for n in probes.negatives} & {n.id for n in chapter.negatives}
    assert not {q.needle for q in probes.questions} & {q.needle for q in chapter.questions}


@pytest.mark.corpus
def test_every_phrasing_names_an_identifier_of_its_needle(probes):
    # "Identifier" as identifiers.terms defines it: backticked, with _ or a digit, a capital
    # after the first letter, or capitalised inside the sentence; matched as a whole word.
    for q in probes.questions:
        ids = identifiers.terms(q.needle)
        assert ids, q.id
        for phrasing in ("course", "ticket"):
            text = getattr(q, phrasing)
            assert any(mentions(text, i) for i in ids), (q.id, phrasing, sorted(ids))


@pytest.mark.corpus
def test_every_trap_names_a_term_found_in_at_most_three_chunks_of_e(probes, chunks_e):
    # Rare: an identifier of the query held by 1 to RARE_MAX_CHUNKS (3) of the ~900 chunks.
    assert identifiers.RARE_MAX_CHUNKS == 3
    for n in probes.negatives:
        assert identifiers.rare_terms(n.query, chunks_e), n.id


def test_identifiers_and_mentions():
    assert identifiers.terms("Invoking `backward` in PyTorch on SGD, as Gauss did.") == {
        "backward",
        "sgd",
        "gauss",
    }
    vapnik = identifiers.terms("Unfortunately, RKHS-based methods (Vapnik, 1998).")
    assert vapnik >= {"rkhs", "vapnik"}
    assert mentions("why does y.backward() fail", "backward")
    assert not mentions("backwards in time", "backward")
    assert mentions("the RoofType_nan column", "rooftype_nan")


def queries_of(n_questions: int) -> list[Query]:
    questions = [Question(f"p{i}", "d", "n", "c", "t") for i in range(n_questions)]
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


def test_the_probe_tables_say_what_the_numbers_say():
    # 12 questions: BM25 finds both phrasings of every one at rank 1, dense none of them
    # within 8, the hybrid ranks each 9th. Per question BM25 wins 12/0, p = 2/2^12 = 0.00049,
    # which Holm over the family of six identifier claims keeps under 0.05.
    queries = queries_of(12)
    ranks = {"dense": [None] * 24, "BM25": [1] * 24, "hybrid": [9] * 24}
    paired = identifiers.comparisons(ranks, queries)
    row = paired.view().set_index(["pair", "k"]).loc[("BM25 vs dense", 1)]
    assert (row["questions"], row["p"]) == ("+12/−0", "0.00049")
    assert row["a − b by question"].startswith("+1.000 [")
    judged = {e.claim: e for e in identifiers.comparison_entries(ranks, queries)}
    assert [judged[f"BM25>dense@R{k}:identifiers"].verdict for k in identifiers.KS] == [
        Verdict.REPRODUCES
    ] * 3
    # the hybrid finds nothing by 8 either: it and dense differ on no question
    assert judged["hybrid>dense@R8:identifiers"].verdict is Verdict.NO_VARIATION
    line = f"- **BM25>dense@R1:identifiers** ({claim('BM25>dense@R1:identifiers').statement})"
    assert line in present.every_claim(list(judged.values()))


def test_no_difference_at_all_is_no_variation():
    queries = queries_of(8)
    ranks = {"dense": [1] * 16, "BM25": [1] * 16, "hybrid": [1] * 16}
    paired = identifiers.comparisons(ranks, queries)
    assert set(paired.view()["a − b by question"]) == {
        "+0.000 [-0.169, +0.169]"
    }  # ±t(9)·se of 8 zeros and ±1/2
    judged = identifiers.comparison_entries(ranks, queries)
    assert {e.verdict for e in judged} == {Verdict.NO_VARIATION}  # no difference at all
    assert "**No variation (every question's difference is 0)**" in present.every_claim(judged)


def test_failure_kinds():
    assert classify(
        "what is the capital of france", "…asking what is the capital of France needs no reasoning"
    ) == ("literal match", "what is the capital of france")
    # three words in a row are not a literal match: the run must reach LITERAL_WORDS
    assert classify("capital of france trivia", "the capital of France")[0] == "near miss"
    assert classify("does weight decay touch the kv cache", "Weight decay adds a penalty.") == (
        "near miss",
        "decay, weight",
    )
    assert classify("how do i bake bread", "Tensors hold numbers.") == ("semantic only", "")
