from __future__ import annotations

import re

import pandas as pd
import pytest

from rag_lab import paths
from rag_lab.chunking import chunk_corpus
from rag_lab.claims import claim
from rag_lab.claims.verdicts import Verdict
from rag_lab.experiments import present
from rag_lab.experiments import probes as pr
from rag_lab.questions import Query, Question, load_questions


def mentions(text: str, identifier: str) -> bool:
    """Does ``text`` contain ``identifier`` as a whole word, ignoring case?"""
    word = rf"(?<![A-Za-z0-9_]){re.escape(identifier)}(?![A-Za-z0-9_])"
    return re.search(word, text, re.I) is not None


@pytest.fixture(scope="module")
def probes(docs):
    return pr.load(docs)  # raises QuestionsError, listing every violation, if any rule breaks


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
    # "Identifier" as pr.identifiers defines it: backticked, with _ or a digit, a capital
    # after the first letter, or capitalised inside the sentence; matched as a whole word.
    for q in probes.questions:
        ids = pr.identifiers(q.needle)
        assert ids, q.id
        for phrasing in ("course", "ticket"):
            text = getattr(q, phrasing)
            assert any(mentions(text, i) for i in ids), (q.id, phrasing, sorted(ids))


@pytest.mark.corpus
def test_every_trap_names_a_term_found_in_at_most_three_chunks_of_e(probes, chunks_e):
    # Rare: an identifier of the query held by 1 to RARE_MAX_CHUNKS (3) of the ~900 chunks.
    assert pr.RARE_MAX_CHUNKS == 3
    for n in probes.negatives:
        assert pr.rare_terms(n.query, chunks_e), n.id


def test_identifiers_and_mentions():
    assert pr.identifiers("Invoking `backward` in PyTorch on SGD, as Gauss did.") == {
        "backward",
        "sgd",
        "gauss",
    }
    assert pr.identifiers("Unfortunately, RKHS-based methods (Vapnik, 1998).") >= {"rkhs", "vapnik"}
    assert mentions("why does y.backward() fail", "backward")
    assert not mentions("backwards in time", "backward")
    assert mentions("the RoofType_nan column", "rooftype_nan")


def queries_of(n_questions: int) -> list[Query]:
    questions = [Question(f"p{i}", "d", "n", "c", "t") for i in range(n_questions)]
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


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


def test_the_probe_tables_say_what_the_numbers_say():
    # 12 questions: BM25 finds both phrasings of every one at rank 1, dense none of them
    # within 8, the hybrid ranks each 9th. Per question BM25 wins 12/0, p = 2/2^12 = 0.00049,
    # which Holm over the family of six identifier claims keeps under 0.05.
    queries = queries_of(12)
    ranks = {"dense": [None] * 24, "BM25": [1] * 24, "hybrid": [9] * 24}
    paired = pr.identifier_comparisons(ranks, queries)
    row = paired.view().set_index(["pair", "k"]).loc[("BM25 vs dense", 1)]
    assert (row["questions"], row["p"]) == ("+12/−0", "0.00049")
    assert row["a − b by question"].startswith("+1.000 [")
    recall = pr.recall_view(ranks, queries).frame
    assert [recall.loc[name, "R@1"][:5] for name in ranks] == ["0.000", "1.000", "0.000"]
    assert [recall.loc[name, "R@8"][:5] for name in ranks] == ["0.000", "1.000", "0.000"]
    assert recall.loc["dense", "queries missed"] == 24
    judged = {e.claim: e for e in pr.entries(ranks, queries)}
    assert [judged[f"BM25>dense@R{k}:identifiers"].verdict for k in pr.KS] == [
        Verdict.REPRODUCES
    ] * 3
    # the hybrid finds nothing by 8 either: it and dense differ on no question
    assert judged["hybrid>dense@R8:identifiers"].verdict is Verdict.NO_VARIATION
    line = f"- **BM25>dense@R1:identifiers** ({claim('BM25>dense@R1:identifiers').statement})"
    assert line in present.every_claim(list(judged.values()))


def test_the_trap_tables_show_where_each_trap_lands_and_what_it_shares():
    traps = traps_of([0.66, 0.70, 0.61, 0.80], [True, False, False, False])
    where, why = pr.trap_tables(traps)
    assert where.frame["passes"].tolist() == [True, False, True, False]
    assert where.frame["distance"].tolist() == [0.66, 0.70, 0.61, 0.80]
    assert why.frame["holds rare term"].tolist() == [True, False, False, False]
    assert list(why.frame.columns) == ["rare terms", "holds rare term", "kind", "shared"]
    assert where.width <= 100 and why.width <= 100


def test_no_difference_at_all_is_no_variation():
    queries = queries_of(8)
    ranks = {"dense": [1] * 16, "BM25": [1] * 16, "hybrid": [1] * 16}
    paired = pr.identifier_comparisons(ranks, queries)
    assert set(paired.view()["a − b by question"]) == {
        "+0.000 [-0.169, +0.169]"
    }  # ±t(9)·se of 8 zeros and ±1/2
    judged = pr.entries(ranks, queries)
    assert {e.verdict for e in judged} == {Verdict.NO_VARIATION}  # no difference at all
    assert "**No variation (every question's difference is 0)**" in present.every_claim(judged)


def test_failure_kinds():
    assert pr.classify(
        "what is the capital of france", "…asking what is the capital of France needs no reasoning"
    ) == ("literal match", "what is the capital of france")
    # three words in a row are not a literal match: the run must reach LITERAL_WORDS
    assert pr.classify("capital of france trivia", "the capital of France")[0] == "near miss"
    assert pr.classify("does weight decay touch the kv cache", "Weight decay adds a penalty.") == (
        "near miss",
        "decay, weight",
    )
    assert pr.classify("how do i bake bread", "Tensors hold numbers.") == ("semantic only", "")
