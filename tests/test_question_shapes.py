"""Questions of one, two or three phrasings and of more than one passage: loaded, checked,
and scored (a chunk holding any passage is relevant; an answer is destroyed only when every
passage is cut)."""

from __future__ import annotations

import pytest
from fakes import questions_file

from rag_lab.app import exits
from rag_lab.chunking import Chunk
from rag_lab.documents import Document
from rag_lab.evaluation.chunking import destroyed, destroyed_questions
from rag_lab.evaluation.lab import Lab
from rag_lab.metrics import first_hit_ranks, hits_at, mrr, recall_at, relevant_chunks
from rag_lab.questions import Passage, Question, QuestionsError, QuestionSet, load_questions

GUIDE = (
    "# Guide\n\nInstall the package with pip before the first run.\n\n"
    "## Later\n\nRestart the server after every change of settings.\n"
)
FAQ = "# FAQ\n\nThe cache lives in a hidden folder of your home.\n\nDelete it to free disk space.\n"
DOCS = [Document("guide", "Guide", GUIDE), Document("faq", "FAQ", FAQ)]

SHAPES = """\
questions:
  - id: q1
    doc: guide
    needle: "Install the package with pip before the first run."
    phrasings:
      - "how do I set it up?"
  - id: q2
    passages:
      - doc: guide
        needle: "Restart the server after every change of settings."
      - doc: faq
        needle: "The cache lives in a hidden folder of your home."
    course: "Why are my new settings ignored?"
    ticket: "changed config, nothing happens"
  - id: q3
    doc: faq
    needle: "Delete it to free disk space."
    phrasings:
      - "My disk is full, what can I remove?"
      - "running out of space"
      - "Which files are safe to throw away?"
negatives:
  - id: n1
    kind: offtopic
    query: "how do i renew my passport"
"""


def chunk(doc: str, index: int, text: str) -> Chunk:
    return Chunk(doc, index, text, text, "", 0, len(text))


def test_questions_of_one_two_and_three_phrasings_and_two_passages_load(tmp_path):
    qset = load_questions(questions_file(tmp_path, SHAPES), DOCS)
    q2 = qset.questions[1]
    assert [q.phrasings for q in qset.questions] == [("1",), ("course", "ticket"), ("1", "2", "3")]
    assert [len(q.passages) for q in qset.questions] == [1, 2, 1]
    assert [(p.doc, p.found.start) for p in q2.passages] == [
        ("guide", GUIDE.index("Restart")),
        ("faq", FAQ.index("The cache")),
    ]
    # Every first phrasing, then every second, then the third: the chapter's order.
    assert [q.id for q in qset.queries()] == [
        "q1/1",
        "q2/course",
        "q3/1",
        "q2/ticket",
        "q3/2",
        "q3/3",
    ]
    assert qset.queries()[5].text == "Which files are safe to throw away?"
    assert Lab(DOCS, None, {}, qset=qset).clusters == ["q1", "q2", "q3", "q2", "q3", "q3"]


def test_questions_check_accepts_the_new_shapes(run, tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for d in DOCS:
        (corpus / f"{d.id}.md").write_text(d.text, encoding="utf-8")
    status, out, err = run(
        "questions", "check", questions_file(tmp_path, SHAPES), "--corpus", corpus
    )
    assert (status, err) == (exits.OK, "")
    assert out.rstrip().endswith("3 questions (6 queries), 1 negative")


def test_questions_check_names_the_line_of_a_passage_not_in_the_corpus(run, tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for d in DOCS:
        (corpus / f"{d.id}.md").write_text(d.text, encoding="utf-8")
    bad = questions_file(tmp_path, SHAPES.replace("in a hidden folder", "in a secret folder"))
    status, out, err = run("questions", "check", bad, "--corpus", corpus)
    assert (status, out) == (exits.ERROR, "")
    assert err.startswith(f"rag-lab questions: {bad}:12: q2 passages[2].needle: not found")


def test_a_passage_not_in_the_corpus_is_named_by_its_line(tmp_path):
    bad = SHAPES.replace("The cache lives in a hidden folder", "The cache lives in a secret folder")
    with pytest.raises(QuestionsError) as err:
        load_questions(questions_file(tmp_path, bad), DOCS)
    ((v,),) = [err.value.violations]
    assert (v.line, v.id, v.field) == (12, "q2", "passages[2].needle")
    assert v.message.startswith("not found verbatim in the corpus")


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        (
            '        needle: "Restart',
            '        needles: "Restart',
            (10, "q2", "passages[1].needles"),
        ),
        (
            '    course: "Why are',
            '    phrasings: ["Why"]\n    course: "Why are',
            (13, "q2", "phrasings"),
        ),
        ('      - "running out of space"', "      - 17", (20, "q3", "phrasings[2]")),
        (
            "      - doc: faq\n",
            "      - doc: faq\n        doc: faq\n",
            (12, "q2", "passages[2].doc"),
        ),
    ],
)
def test_a_wrong_shape_is_named_by_its_line_and_field(tmp_path, old, new, where):
    assert old in SHAPES
    with pytest.raises(QuestionsError) as err:
        load_questions(questions_file(tmp_path, SHAPES.replace(old, new)), DOCS)
    assert where in [(v.line, v.id, v.field) for v in err.value.violations]


def test_a_query_hits_when_only_the_second_passage_is_retrieved():
    q2 = Question(
        "q2",
        "guide",
        "Restart the server after every change of settings.",
        "Why are my new settings ignored?",
        "changed config, nothing happens",
        others=(Passage("faq", "The cache lives in a hidden folder of your home."),),
    )
    qset = QuestionSet((q2,), ())
    chunks = [
        chunk("guide", 0, "# Guide Install the package with pip before the first run."),
        chunk("guide", 1, "Restart the server after every"),  # the first passage, cut
        chunk("faq", 0, "# FAQ The cache lives in a hidden folder of your home."),
    ]
    queries = qset.queries()
    relevant = relevant_chunks(chunks, queries)
    assert relevant == [{2}, {2}]
    ranks = first_hit_ranks([[0, 2, 1], [2, 0, 1]], relevant)
    assert ranks == [2, 1]
    assert list(hits_at(ranks, 1)) == [False, True]
    assert (recall_at(ranks, 1), recall_at(ranks, 2), mrr(ranks)) == (0.5, 1.0, 0.75)
    # Destroyed only when every passage is cut: here one is held whole.
    assert destroyed_questions(chunks, [q2]) == []
    both_cut = [chunks[0], chunks[1], chunk("faq", 0, "# FAQ The cache lives in a hidden")]
    assert destroyed({"A": chunks, "B": both_cut}, [q2]).questions == {"A": (), "B": ("q2",)}


def test_one_passage_keeps_the_old_relevance():
    q = Question("q", "faq", "Delete it to free disk space.", "c", "t")
    chunks = [chunk("faq", 0, "Delete it to free disk space."), chunk("faq", 1, "Delete it")]
    assert relevant_chunks(chunks, [q]) == [{0}]
    assert destroyed_questions(chunks[1:], [q]) == [q]


def test_a_question_needs_one_shape_of_phrasings():
    with pytest.raises(ValueError, match="q9"):
        Question("q9", "faq", "x", "course", "ticket", asked=("one",))
    with pytest.raises(ValueError, match="q9"):
        Question("q9", "faq", "x")


def test_evaluate_runs_every_suite_on_uneven_phrasings_and_two_passages(tmp_path):
    from fakes import HashEncoder

    from rag_lab.evaluation.deploy import Deployment
    from rag_lab.evaluation.runner import evaluate

    qset = load_questions(questions_file(tmp_path, SHAPES), DOCS)
    ev = evaluate(DOCS, qset, HashEncoder(), tokenizer="unicode", progress=False, lab=True)
    deployed = ev.result(Deployment)
    assert deployed.queries == ("q1/1", "q2/course", "q3/1", "q2/ticket", "q3/2", "q3/3")
    assert deployed.clusters == ("q1", "q2", "q3", "q2", "q3", "q3")
    assert (deployed.ranks, deployed.destroyed) == ((2, 2, 1, 1, 1, 2), ())
    assert len(ev.sections()) == len(ev.results) == 8  # the failures first, then the lab's seven
