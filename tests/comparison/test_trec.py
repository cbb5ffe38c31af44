"""``rag-lab evaluate --trec DIR`` against ranx: the TREC files read by another tool give the
report's numbers.

The lab's Recall@k is "a chunk holding the needle within the top k": TREC's success@k, ranx's
``hit_rate@k``. ranx's ``recall@k`` is another metric (relevant chunks found over relevant
chunks), which differs when a needle lies in two overlapping chunks, so hit_rate is the one
compared. The lab's MRR is the mean over queries of 1/first-hit rank (0 for none), ranx's
``mrr`` the same mean; they agree because every query is in the run and in the qrels (a
query whose answer the chunking destroyed is judged 0 on one chunk, a miss for both).

The corpus is built here and embedded by the stand-in encoder (no model): three of its five
needles straddle the blind cut at 512 characters, so strategy A destroys them; one file's
name has a space, which a TREC column cannot hold. The score column must count down in the
lab's order (trec_eval re-sorts by score, ties by docid descending); the format test checks
it, since ranx keeps a run's file order among equal scores.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from fakes import HashEncoder, cli_runner, write

from rag_lab.app import cli, exits
from rag_lab.chunking import TARGET
from rag_lab.evaluation import trec
from rag_lab.questions import Query, Question

TOPICS = [  # (document, needle, course, ticket, straddles the cut at 512)
    (
        "tensors",
        "Tensors moved to a GPU multiply large matrices much faster.",
        "What hardware speeds up big matrix products?",
        "is my graphics card good for matmul",
        True,
    ),
    (
        "gradients",
        "Gradients accumulate in the grad field until they are reset.",
        "Why do derivatives keep growing across backward passes?",
        "grad keeps getting bigger",
        True,
    ),
    (
        "rate limits",
        "The API allows sixty requests per minute for each key.",
        "How many calls may a client make in a minute?",
        "throttled after too many calls",
        True,
    ),
    (
        "dropout",
        "Dropout zeroes each hidden unit with a fixed probability in training.",
        "What does dropout do to hidden units during training?",
        "dropout zeroing units why",
        False,
    ),
    (
        "momentum",
        "Momentum averages past gradients to smooth the update direction.",
        "How does momentum change the direction of updates?",
        "momentum smoothing gradients",
        False,
    ),
]
PAD = "Background words about this topic that set the scene and are not the answer. "


def _corpus(folder):
    files = {}
    for doc, needle, _, _, straddles in TOPICS:
        intro = f"# {doc.title()}\n\n{PAD * 5}\n\n## Details\n\n"
        filler = ""
        if straddles:
            filler = "Some context first. " * ((TARGET - 40 - len(intro)) // 20)
            filler += "z" * (TARGET - 40 - len(intro) - len(filler))
        files[f"{doc}.md"] = f"{intro}{filler}{needle}\n\n{PAD * 3}\n"
    return write(folder, files)


def _questions(path):
    lines = ["questions:"]
    for n, (doc, needle, course, ticket, _) in enumerate(TOPICS):
        lines += [
            f"  - id: q{n}",
            f"    doc: {doc}",
            f'    needle: "{needle}"',
            f'    course: "{course}"',
            f'    ticket: "{ticket}"',
        ]
    lines += ["negatives:", "  - id: n1", "    kind: offtopic", '    query: "sourdough bread"']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    """``rag-lab`` in this process, ``evaluate`` embedding with the stand-in encoder."""
    import rag_lab.models.encoder

    monkeypatch.setattr(rag_lab.models.encoder, "Encoder", HashEncoder)
    return cli_runner(HashEncoder, tmp_path, monkeypatch, capsys)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The corpus and its question file, and ``evaluate`` of them into a folder with the
    stand-in encoder: (report.json, stdout)."""
    root = tmp_path_factory.mktemp("trec")
    docs, questions = _corpus(root / "docs"), _questions(root / "questions.yaml")

    def evaluate(out, *args):
        import rag_lab.models.encoder

        argv = ["evaluate", "--corpus", docs, "--questions", questions, "--out", out, *args]
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()) as o:
            patch.setattr(rag_lab.models.encoder, "Encoder", HashEncoder)
            assert cli.main([str(a) for a in argv]) == exits.OK
        return json.loads((out / "report.json").read_text(encoding="utf-8")), o.getvalue()

    return root, evaluate


@pytest.fixture(scope="module")
def evaluated(corpus):
    """The corpus evaluated with ``--trec``: (report.json, the TREC folder, stdout)."""
    root, evaluate = corpus
    report, stdout = evaluate(root / "out", "--lab", "--trec", root / "trec")
    return report, root / "trec", stdout


def _lines(path):
    return [line.split(" ") for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.comparison
# ranx's own numba code casts its loop index; nothing to do with the values compared.
@pytest.mark.filterwarnings("ignore:unsafe cast from uint64 to int64")
def test_ranx_on_the_trec_files_gives_the_reports_recall_and_mrr(evaluated):
    ranx = pytest.importorskip("ranx")
    report, folder, _ = evaluated
    tables = {f"dense-{s}": row for s, row in report["dense by strategy"]["recall"].items()}
    systems = report["systems"]
    tables |= {f"{name}-{systems['strategy']}": row for name, row in systems["recall"].items()}
    assert sorted(p.name for p in folder.glob("*.run")) == sorted(f"{n}.run" for n in tables)
    for name, row in tables.items():
        strategy = name.split("-")[1]
        qrels = ranx.Qrels.from_file(str(folder / f"{strategy}.qrels"), kind="trec")
        ran = ranx.Run.from_file(str(folder / f"{name}.run"), kind="trec")
        ks = [int(k) for k in row["recall"]]
        got = ranx.evaluate(qrels, ran, [f"hit_rate@{k}" for k in ks] + ["mrr"])
        want = {f"hit_rate@{k}": row["recall"][str(k)]["value"] for k in ks}
        assert got == pytest.approx({**want, "mrr": row["MRR"]}, rel=1e-12, abs=1e-12), name
    # The deployed configuration: its per-query ranks in report.json, scored by hand.
    deployed = report["deployment"]
    ranks = [q["rank"] for q in deployed["queries"]]
    name = trec.run_name("dense", deployed["strategy"])
    qrels = ranx.Qrels.from_file(str(folder / trec.qrels_name(deployed["strategy"])), kind="trec")
    got = ranx.evaluate(qrels, ranx.Run.from_file(str(folder / name), kind="trec"), ["mrr"])
    assert got == pytest.approx(sum(1 / r for r in ranks if r) / len(ranks), rel=1e-12)
    # Strategy A destroys the three answers that straddle its cut: a miss for ranx too.
    destroyed = {r[0] for r in _lines(folder / "A.qrels") if r[3] == "0"}
    assert destroyed == {f"q{n}/{p}" for n in range(3) for p in ("course", "ticket")}


def test_the_files_hold_every_query_in_the_labs_order(evaluated):
    report, folder, stdout = evaluated
    queries = report["queries"]
    chunks = {s: len({r[2] for r in _lines(folder / f"dense-{s}.run")}) for s in "ABCDEF"}
    for path in folder.glob("*.run"):
        rows = _lines(path)
        assert {len(r) for r in rows} == {6} and {r[1] for r in rows} == {"Q0"}
        assert {r[5] for r in rows} == {f"rag_lab-{path.stem}"}
        by_query = {}
        for qid, _, doc, rank, score, _ in rows:
            by_query.setdefault(qid, []).append((int(rank), int(score), doc))
        assert list(by_query) == queries
        for ranked in by_query.values():
            n = chunks[path.stem[-1]]  # the corpus is smaller than the depth: every chunk
            assert [r for r, _, _ in ranked] == list(range(1, n + 1))
            assert [s for _, s, _ in ranked] == list(range(n, 0, -1))
            assert len({d for _, _, d in ranked}) == n
    # The deployed run's first chunk per query is the report's "top chunk".
    first = {r[0]: r[2] for r in _lines(folder / "dense-E.run") if r[3] == "1"}
    tops = {q["id"]: trec.trec_id(q["top chunk"]) for q in report["deployment"]["queries"]}
    assert first == tops
    assert "rate%20limits#1" in {r[2] for r in _lines(folder / "E.qrels")}
    assert "dense-E.run" in stdout and "E.qrels" in stdout


def test_the_report_is_the_same_with_and_without_trec(corpus, evaluated):
    root, evaluate = corpus
    assert evaluate(root / "plain", "--lab")[0] == evaluated[0]


def _q(n: int) -> Query:
    return Query(Question(f"q{n}", "d", "needle", "course?", "ticket?"), "course")


def test_run_lines_go_to_the_depth_or_down_to_the_first_relevant_chunk():
    from rag_lab.chunking import Chunk

    chunks = [Chunk("d", i, "text", "text", "", 4 * i, 4 * i + 4) for i in range(5)]
    rankings = [[4, 3, 2, 1, 0], [0, 1, 2, 3, 4]]
    lines = list(trec.run_lines([_q(0), _q(1)], chunks, rankings, [{1}, {0}], "t", depth=2))
    assert lines == [
        "q0/course Q0 d#4 1 4 t",
        "q0/course Q0 d#3 2 3 t",
        "q0/course Q0 d#2 3 2 t",
        "q0/course Q0 d#1 4 1 t",  # the first relevant chunk, at rank 4 > depth 2
        "q1/course Q0 d#0 1 2 t",
        "q1/course Q0 d#1 2 1 t",
    ]
    qrels = list(trec.qrels_lines([_q(0), _q(1)], chunks, [{3, 1}, set()]))
    assert qrels == ["q0/course 0 d#1 1", "q0/course 0 d#3 1", "q1/course 0 d#0 0"]
    assert trec.trec_id("my notes 100%.md#3") == "my%20notes%20100%25.md#3"


def test_a_trec_folder_that_cannot_be_written_is_refused_before_any_work(run, tmp_path):
    docs, questions = _corpus(tmp_path / "docs"), _questions(tmp_path / "questions.yaml")
    common = ("evaluate", "--corpus", docs, "--questions", questions, "--out", tmp_path / "out")
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    for trec_dir in (a_file, a_file / "trec"):
        status, _, err = run(*common, "--trec", trec_dir)
        assert status == exits.ERROR == 2 and str(a_file) in err
        assert not (tmp_path / "out").exists()
    status, _, err = run(*common, "--index", tmp_path / "i.sqlite", "--trec", tmp_path / "t")
    assert status == exits.ERROR and "--trec" in err and not (tmp_path / "t").exists()
    chroma = tmp_path / "questions.csv"
    chroma.write_text("question,references,corpus_id\nq,[],docs\n", encoding="utf-8")
    chroma_argv = ("evaluate", "--corpus", docs, "--questions", chroma, "--out", tmp_path / "c")
    status, _, err = run(*chroma_argv, "--trec", tmp_path / "t")
    assert status == exits.ERROR and str(chroma) in err and not (tmp_path / "t").exists()
