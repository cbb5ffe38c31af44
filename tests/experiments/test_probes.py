from __future__ import annotations

import pandas as pd
import pytest

from rag_lab import paths
from rag_lab.chunking import chunk_corpus
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.experiments import present
from rag_lab.experiments import probes as pr
from rag_lab.questions import Query, Question, load_questions


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
            assert any(pr.mentions(text, i) for i in ids), (q.id, phrasing, sorted(ids))


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
    assert pr.mentions("why does y.backward() fail", "backward")
    assert not pr.mentions("backwards in time", "backward")
    assert pr.mentions("the RoofType_nan column", "rooftype_nan")


def queries_of(n_questions: int) -> list[Query]:
    questions = [Question(f"p{i}", "d", "n", "c", "t") for i in range(n_questions)]
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


def traps_of(distances: list[float], holds: list[bool]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "distance": distances,
            "passes": [d < 0.675 for d in distances],
            "holds rare term": holds,
        },
        index=[f"t{i}" for i in range(1, len(distances) + 1)],
    )


def test_reading_says_what_the_numbers_say():
    # 12 questions: BM25 finds both phrasings of every one at rank 1, dense none of them
    # within 8, the hybrid ranks each 9th. Per question BM25 wins 12/0, p = 2/2^12 = 0.00049,
    # which Holm over the family of six identifier claims keeps under 0.05.
    queries = queries_of(12)
    ranks = {"dense": [None] * 24, "BM25": [1] * 24, "hybrid": [9] * 24}
    paired = pr.identifier_comparisons(ranks, queries)
    row = pr.identifier_view(paired).set_index(["pair", "k"]).loc[("BM25 vs dense", 1)]
    assert (row["questions"], row["p"]) == ("+12/−0", "0.00049")
    assert row["a − b by question"].startswith("+1.000 [")
    traps = traps_of([0.66, 0.70, 0.61, 0.80], [True, False, False, False])
    bullets = pr.reading(ranks, traps)
    assert all(b.startswith("- **") for b in bullets)
    text = "\n".join(bullets)
    assert "dense 0.000 / 0.000, BM25 1.000 / 1.000, hybrid 0.000 / 0.000" in text
    judged = {e.claim: e for e in pr.entries(ranks, queries)}
    assert [judged[f"BM25>dense@R{k}:identifiers"].verdict for k in pr.KS] == [
        Verdict.REPRODUCES
    ] * 3
    # the hybrid finds nothing by 8 either: no difference with dense, and the chapter gives
    # no effect to exclude
    assert judged["hybrid>dense@R8:identifiers"].verdict is Verdict.INCONCLUSIVE
    line = "- **BM25>dense@R1:identifiers** (BM25 catches identifiers that dense misses (R@1))"
    assert line in present.every_claim(list(judged.values()))
    assert (
        "2 of 4 pass the chapter's cutoff 0.675 (strictly under it): t3 at 0.610, t1 at 0.660"
        in text
    )
    assert "1 of them lands on a chunk holding its rare term" in text
    assert "nearest trap is 0.610 from a chunk, the farthest 0.800" in text


def test_reading_with_no_difference_and_no_trap_through():
    queries = queries_of(8)
    ranks = {"dense": [1] * 16, "BM25": [1] * 16, "hybrid": [1] * 16}
    paired = pr.identifier_comparisons(ranks, queries)
    assert set(pr.identifier_view(paired)["a − b by question"]) == {
        "+0.000 [-0.169, +0.169]"
    }  # ±t(9)·se of 8 zeros and ±1/2
    traps = traps_of([0.70, 0.90], [False, False])
    judged = pr.entries(ranks, queries)
    assert {e.verdict for e in judged} == {Verdict.INCONCLUSIVE}  # no difference at all
    text = "\n".join(pr.reading(ranks, traps))
    assert "**Inconclusive (detects ±" in present.every_claim(judged)
    assert "0 of 2 pass the chapter's cutoff 0.675 (strictly under it); 0 of them land" in text


def test_failure_kinds_and_their_legend():
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
    legend = pr.kinds_legend().splitlines()
    assert [line.split("*")[1] for line in legend] == list(pr.KINDS)
    assert legend[-1].endswith(".") and all(line.endswith(";") for line in legend[:-1])
