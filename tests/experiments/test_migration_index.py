"""A real SQLite index half-built by two pipelines: the stamps refuse it, naming the half."""

from __future__ import annotations

from fakes import HashEncoder

from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.experiments import migration

TEXTS = {
    "01-tensors": "# Tensors\n\nA tensor holds numbers along axes.\n",
    "02-pandas": "# Pandas\n\nA data frame has named columns.\n",
    "03-algebra": "# Algebra\n\nA matrix maps vectors to vectors.\n",
    "04-calculus": "# Calculus\n\nA derivative is a rate of change.\n",
}


def docs(folder):
    out = []
    for doc_id, text in TEXTS.items():
        path = folder / f"{doc_id}.md"
        path.write_text(text, encoding="utf-8")
        out.append(Document(doc_id, doc_id, text, path=path))
    return out


def test_the_half_built_index_is_refused_by_name(tmp_path):
    corpus = tmp_path / "src"
    corpus.mkdir()
    stale = frozenset({"02-pandas", "04-calculus"})
    old, current = HashEncoder("test/old-pipeline"), HashEncoder()
    check = migration.stamped_index(docs(corpus), stale, old, current, tmp_path / "index")
    assert check.documents == 4
    assert check.stale == stale
    assert check.refused == stale
    assert "2 of 4 documents are stale" in check.refusal
    assert migration.refusal_entry(check, stale).verdict is Verdict.REPRODUCES
    # Had the refusal named another set (or nothing), the claim would fail.
    wrong = migration.refusal_entry(check, frozenset({"02-pandas"}))
    assert wrong.verdict is Verdict.CONTRADICTED


def test_one_pipeline_throughout_is_searched(tmp_path):
    corpus = tmp_path / "src"
    corpus.mkdir()
    same = HashEncoder()
    check = migration.stamped_index(
        docs(corpus), frozenset({"02-pandas"}), same, same, tmp_path / "i"
    )
    assert check.refusal is None and check.stale == frozenset()
    assert migration.refusal_entry(check, frozenset({"02-pandas"})).verdict is Verdict.CONTRADICTED
