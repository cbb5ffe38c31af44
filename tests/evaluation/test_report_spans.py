"""`rag-lab evaluate` on a question file in Chroma's CSV format: notebook 10's tables."""

from __future__ import annotations

import csv
import json

import pytest
from fakes import HashEncoder, write

from rag_lab.chunking import TARGET
from rag_lab.evaluation import runner
from rag_lab.evaluation.spans import SpanEvaluation
from rag_lab.questions import QuestionsError

PAD = "Arrays of numbers are the basic data structure of this library, used everywhere. "
CUT = "Tensors can live on a GPU, which makes large matrix products much faster."
KEPT = "Gradients accumulate until you reset them."


def corpus(folder):
    # CUT starts 30 characters before the first blind cut: A splits it, boundaries do not.
    alpha = PAD * 3 + "\n\n" + "x" * (TARGET - 30 - len(PAD) * 3 - 3) + " " + CUT + "\n"
    assert alpha.index(CUT) == TARGET - 30
    beta = f"# not a heading in Chroma's format\n\nBackward applies the chain rule. {KEPT}\n"
    write(folder, {"alpha.md": alpha, "beta.md": beta})
    return alpha, beta


def chroma_csv(path, rows):
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["question", "references", "corpus_id"])
        for question, doc, text, excerpt in rows:
            start = text.index(excerpt)
            refs = [{"content": excerpt, "start_index": start, "end_index": start + len(excerpt)}]
            out.writerow([question, json.dumps(refs), doc])
    return path


@pytest.fixture
def report(tmp_path):
    alpha, beta = corpus(tmp_path / "docs")
    questions = chroma_csv(
        tmp_path / "q.csv",
        [
            ("what hardware speeds up matrix products?", "alpha", alpha, CUT),
            ("when do gradients stop accumulating?", "beta", beta, KEPT),
            ("is a hash line a heading here?", "beta", beta, "# not a heading"),
        ],
    )
    return runner.run(tmp_path / "docs", questions, tmp_path / "out", encoder=HashEncoder())


def test_spans_get_notebook_10s_tables_and_offsets_decide_what_is_destroyed(report):
    ev, written = report
    measured = ev.result(SpanEvaluation)
    destroyed = measured.destroyed
    assert destroyed.loc["A", "excerpts destroyed"] == 1  # CUT, across the blind cut
    assert destroyed.loc["C", "excerpts destroyed"] == 0
    assert destroyed.loc["B", "excerpts destroyed"] == 0  # the overlap holds it whole
    # Read as plain text, the '#' line is chunked like any other: its excerpt is retrievable.
    recall = measured.recall_view()
    assert list(recall.index) == list("ABCDEF") and set(recall["n"]) == {3}
    assert recall.loc["C", "no hit"] == 0
    titles = {t.caption for s in ev.sections() for t in s.tables}
    assert {"Chroma's span metrics", "paired tests between systems"} <= titles
    assert ev.to_json()["kind"] == "spans" and ev.notes() == []
    md = written.markdown.read_text()
    assert "excerpts by offsets (notebook 10)" in md and "Chroma's span metrics" in md


def test_chroma_csv_without_a_corpus_is_refused(tmp_path):
    alpha, _ = corpus(tmp_path / "docs")
    questions = chroma_csv(tmp_path / "q.csv", [("q?", "alpha", alpha, CUT)])
    with pytest.raises(QuestionsError, match="needs the corpus it points into"):
        runner.run(None, questions, tmp_path / "out", encoder=HashEncoder())
