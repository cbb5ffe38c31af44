"""Notebook 08's day of an index, on two small documents and a stand-in encoder: every step
recorded, the claims judged on the record; and the half-migrated index stored with stamps."""

from __future__ import annotations

import tempfile

import pytest
from fakes import HashEncoder

from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.experiments import nb08_index_hygiene as nb08

TEXTS = {
    "01-tensors": "# Tensors\n\nA tensor holds numbers along axes.\n",
    "05-autograd": "# Autograd\n\nGradients accumulate in x.grad every time backward runs.\n",
}
V2 = "chunk=E/512/64;embed=minilm;v2"


@pytest.fixture(scope="module")
def hygiene(tmp_path_factory):
    src = tmp_path_factory.mktemp("corpus")
    docs = []
    for doc_id, text in TEXTS.items():
        path = src / f"{doc_id}.md"
        path.write_text(text, encoding="utf-8")
        docs.append(Document(doc_id, doc_id, text, path=path))
    return nb08.run(
        docs,
        HashEncoder(),
        question="why does x.grad keep growing every time I call backward?",
        cutoff=0.99,
        upgraded_pipeline=V2,
        edited_document="05-autograd.md",
    )


def test_every_step_is_recorded_as_it_stood(hygiene):
    reports, statuses = hygiene.reports, hygiene.statuses
    assert list(reports) == list(statuses) == ["first run", "upgrade", "rebuild", "retry"]
    assert sorted(reports["first run"].failed) == ["21-wiki-export", "22-placeholder"]
    assert hygiene.counts_agree
    assert statuses["first run"].chunks == 2
    assert len(hygiene.answers["first run"].citations) == 2  # both chunks within 0.99
    # The upgrade re-embeds the edited document only; both pipelines are then refused.
    assert reports["upgrade"].indexed == ["05-autograd"]
    assert reports["upgrade"].stale == ["01-tensors"]
    assert statuses["upgrade"].counts == {"indexed": 1, "failed": 2, "stale": 1}
    assert list(hygiene.refusals) == [V2, "chunk=E/512/64;embed=minilm;v1"]
    assert all("<folder>" in m and "/tmp" not in m for m in hygiene.refusals.values())
    assert statuses["rebuild"].chunks == 2  # the edit fits its document's one chunk
    assert reports["retry"].indexed == ["21-wiki-export"]
    assert list(reports["retry"].failed) == ["22-placeholder"]
    assert statuses["retry"].counts == {"indexed": 3, "failed": 1, "stale": 0}
    assert statuses["retry"].chunks == 3  # the fixed export is searchable now
    assert all(st.folder == nb08.FOLDER for st in statuses.values())


def test_the_claims_are_judged_on_the_record(hygiene):
    part = {e.claim: e for e in nb08.entries(hygiene)}
    assert list(part) == list(nb08.HEADLINE[:3])
    assert {e.verdict for e in part.values()} == {Verdict.BY_CONSTRUCTION}
    assert part["failed-visible"].here == "2 failed, each with its reason"
    assert part["counts-recorded"].here == "equal"
    assert part["stale-refused"].here == "2 refused"


# --- the same half-migrated index, stored with its stamps ---------------------------------------


def corpus(folder, names=("01-tensors", "02-pandas", "03-algebra", "04-calculus")):
    out = []
    for doc_id in names:
        path = folder / f"{doc_id}.md"
        path.write_text(f"# {doc_id}\n\nA sentence about {doc_id[3:]}.\n", encoding="utf-8")
        out.append(Document(doc_id, doc_id, path.read_text(encoding="utf-8"), path=path))
    return out


def test_the_half_built_index_is_refused_by_name(tmp_path):
    stale = frozenset({"02-pandas", "04-calculus"})
    old, current = HashEncoder("test/old-pipeline"), HashEncoder()
    check = nb08.stamped_index(corpus(tmp_path), stale, old, current)
    assert check.documents == 4 and check.refused == stale
    assert "2 of 4 documents are stale" in check.refusal
    assert "rag-lab index <folder> --rebuild" in check.refusal
    assert tempfile.gettempdir() not in check.refusal


def test_one_pipeline_throughout_is_searched(tmp_path):
    same = HashEncoder()
    check = nb08.stamped_index(corpus(tmp_path), frozenset({"02-pandas"}), same, same)
    assert check.refusal is None and check.refused == frozenset()
