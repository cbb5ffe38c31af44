from __future__ import annotations

import json

import pytest
from fakes import HashEncoder, write

from rag_lab.chunking import TARGET
from rag_lab.evaluation import runner
from rag_lab.evaluation.chunking import Chunking
from rag_lab.evaluation.deploy import Deployment
from rag_lab.evaluation.failures import Failures
from rag_lab.evaluation.power import Power
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.retrieval import Strategies, Systems
from rag_lab.evaluation.sections import GateSkipped
from rag_lab.evaluation.twins import Calibration

# --- a tiny corpus of our schema, built so that blind cuts destroy exactly one needle ------

NEEDLE_1 = "Tensors can live on a GPU, which makes large matrix products much faster than on a CPU."
NEEDLE_2 = "Gradients accumulate in the grad field until you reset them."
PAD = "Arrays of numbers are the basic data structure of this library, used everywhere. "


def tiny_corpus(folder):
    intro = "# Tensors\n\n" + PAD * 5 + "\n\n## Devices\n\n"
    # The needle starts 30 characters before the first blind cut at TARGET and ends after it.
    filler = "x" * (TARGET - 30 - len(intro) - 1)
    alpha = f"{intro}{filler} {NEEDLE_1}\n"
    assert alpha.index(NEEDLE_1) == TARGET - 30
    beta = (
        "# Gradients\n\nAutomatic differentiation records every operation on a graph.\n\n"
        f"## Backward\n\nCalling backward applies the chain rule. {NEEDLE_2}\n"
    )
    gamma = "Plain notes about data loading.\n\nA data loader yields shuffled minibatches.\n"
    return write(folder, {"alpha.md": alpha, "beta.md": beta, "gamma.txt": gamma})


QUESTIONS = f"""\
questions:
  - id: t1
    doc: alpha
    needle: "{NEEDLE_1}"
    course: "What hardware speeds up big multiplications of arrays?"
    ticket: "is my graphics card useful for matmuls"
  - id: t2
    doc: beta
    needle: "{NEEDLE_2}"
    course: "Why do derivative values keep growing over repeated backward passes?"
    ticket: "grad keeps getting bigger each step??"
negatives:
  - id: n1
    kind: offtopic
    query: "What is the best recipe for sourdough bread?"
  - id: n2
    kind: uncovered
    query: "How do convolutional layers share weights?"
"""


@pytest.mark.model
def test_a_tiny_corpus_end_to_end(tmp_path):
    corpus = tiny_corpus(tmp_path / "docs")
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS)
    ev, written = runner.run(
        corpus, questions, tmp_path / "out", encoder=HashEncoder(), progress=False, lab=True
    )

    assert (written.markdown.name, written.json.name) == ("report.md", "report.json")
    assert sorted(p.name for p in written.figures) == [
        "bluff_curve.png",
        "chunk_sizes.png",
        "chunk_word_pieces.png",
        "dense_bm25_hybrid_recall.png",
        "dense_recall_by_strategy.png",
        "distance_histograms.png",
        "twin_bluff_curve.png",
    ]
    assert all(p.stat().st_size > 0 for p in (written.markdown, written.json, *written.figures))
    assert [type(r) for r in ev.results] == [
        Failures,
        Chunking,
        Strategies,
        Systems,
        Refusal,
        Calibration,
        Deployment,
        Power,
    ]

    # Blind cuts: alpha is 1 + 1 chunks (cut at 512), beta and gamma one each. Boundaries:
    # alpha intro + Devices, beta intro + Backward, gamma one section of two short paragraphs.
    chunking = ev.result(Chunking)
    assert chunking.sizes.table["chunks"].to_dict() == dict(
        zip("ABCDEF", [4, 4, 5, 5, 5, 5], strict=True)
    )
    assert {s: chunking.destroyed.count(s) for s in "ABCDEF"} == dict(
        zip("ABCDEF", [1, 0, 0, 0, 0, 0], strict=True)
    )
    assert chunking.destroyed.questions["A"] == ("t1",)  # B's 64-character overlap rescues it

    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["corpus"] == {
        "documents": 3,
        "characters": sum(len(p.read_text()) for p in corpus.iterdir()),
        "questions": 2,
        "queries": 4,
        "negatives": 2,
        "uncovered negatives": 1,
        "offtopic negatives": 1,
    }
    assert data["queries"] == ["t1/course", "t2/course", "t1/ticket", "t2/ticket"]
    assert data["bm25 tokenizer"] == "unicode"  # a user's folder: Unicode words, case-folded
    ranks_a = data["dense by strategy"]["ranks"]["A"]
    assert (ranks_a[0], ranks_a[2]) == (None, None)  # t1 is in no chunk of A
    assert data["dense by strategy"]["recall"]["A"]["no hit"] == 2
    # Without a cutoff every negative is answered and no answerable query is refused.
    assert data["gate"]["sweep"][0] == {
        "cutoff": None,
        "bluffs": 2,
        "refused": 0,
        **{k: v for k, v in data["gate"]["sweep"][0].items() if k.startswith("answered")},
    }
    assert ev.result(Refusal).at_chapter.loc["none", "bluffs"] == "2/2"
    assert [title for title, _ in ev.headline()] == [
        "found within k",
        "not found within 4, or refused",
        "dense recall by strategy",
        "dense, BM25 and hybrid",
        "gate",
        "twin-calibrated cutoff",
        "detectable difference",
    ]
    # Every report carries the stamps, the deployed configuration per query, and its power.
    assert set(data["stamps"]) >= {"corpus sha256", "questions sha256", "chunker", "encoder"}
    assert [q["id"] for q in data["deployment"]["queries"]] == data["queries"]
    assert data["power"]["questions"] == 2
    # The chapter's claims, judged on this corpus, close the report and the JSON.
    first = data["claims"][0]
    assert (first["claim"], first["benchmark"], first["verdict"]) == (
        "A-destroys",
        "docs",
        "reproduces",
    )
    ledger_file = json.loads(written.claims.read_text())
    assert ledger_file == data["claims"] and written.claims.name == "claims.json"
    verdicts = {c["claim"]: c["verdict"] for c in ledger_file}
    # two questions cannot carry a test: no paired claim reproduces, none is contradicted
    assert verdicts["E>A@R20"] in {"inconclusive", "excludes_chapter_effect"}
    assert verdicts["no-cutoff-bluffs"] == "by_construction"

    md = (tmp_path / "out" / "report.md").read_text()
    for heading in (
        "## 2 · Chunking (notebook 02)",
        "## 3 · Dense retrieval over six chunkings (notebook 03)",
        "## 4 · Dense, BM25 and hybrid on strategy E (notebook 04)",
        "## 5 · Distances and the refusal gate on strategy E (notebook 06)",
    ):
        assert heading in md
    assert "| A        | blind                         |      4 |" in md
    assert "| A        |         1 |   2 | t1        |" in md
    assert "![bluff_curve](figures/bluff_curve.png)" in md
    assert "## The chapter's claims on this corpus" in md


# --- the lab's corpus, read as a user's folder ------------------------------------------


@pytest.mark.corpus
def test_the_lab_corpus_read_as_a_folder_gives_the_same_documents():
    from rag_lab.sources.d2l import corpus_dir, load_corpus
    from rag_lab.sources.folder import load_folder

    folder = corpus_dir()
    if not (folder / "SHA256SUMS").is_file():
        pytest.skip(f"{folder} has no SHA256SUMS manifest to pick the 20 documents")
    assert load_folder(folder) == load_corpus()


def test_without_negatives_the_gate_is_skipped_and_said_so(tmp_path):
    corpus = tiny_corpus(tmp_path / "docs")
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS.split("negatives:")[0] + "negatives: []\n")
    ev, written = runner.run(
        corpus, questions, tmp_path / "out", encoder=HashEncoder(), progress=False, lab=True
    )
    assert ev.result(Refusal) is None and isinstance(ev.result(GateSkipped), GateSkipped)
    data = ev.to_json()
    assert data["gate"] is None and data["gate skipped"] == runner.NO_GATE.reason
    assert f"Not measured: {runner.NO_GATE.reason}." in written.markdown.read_text()
    assert ev.notes() == [runner.NO_GATE.reason]
    assert "gate" not in [title for title, _ in ev.headline()]
    assert ev.result(Systems) is not None
    # Without negatives the twins still calibrate a cutoff, chosen on one question of the
    # two and scored on the other
    calibrated = ev.result(Calibration)
    assert calibrated is not None and "twin-calibrated cutoff" in dict(ev.headline())
    assert len(calibrated.chosen_on) == 1 and calibrated.held_out.questions == 1
    assert calibrated.chosen_on[0] not in {q.split("/")[0] for q in calibrated.held_out.refused}
    assert data["twins"]["held out"]["questions"] == 1
    md = written.markdown.read_text()
    assert "A cutoff calibrated on unanswerable twins, strategy E (notebook 06)" in md
    assert "![twin_bluff_curve](figures/twin_bluff_curve.png)" in md
    assert "0.675-uncalibrated" in {c["claim"] for c in data["claims"]}


def test_a_record_without_a_declared_section_is_refused():
    import pytest

    from rag_lab.evaluation import sections

    with pytest.raises(TypeError, match="no report section is declared for object"):
        sections.section(object(), "corpus")
