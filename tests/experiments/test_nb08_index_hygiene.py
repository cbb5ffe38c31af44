"""Notebook 08's day of an index, on two small documents and a stand-in encoder: every step
recorded, the status views laid out in tables that fit, the reading in the ledger's words."""

from __future__ import annotations

import pytest
from fakes import HashEncoder

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
    assert hygiene.files == 4
    assert sorted(hygiene.first.failed) == ["21-wiki-export", "22-placeholder"]
    assert hygiene.counts_agree and hygiene.fresh_chunks == 2
    assert hygiene.first_search.chunks == 2
    # The upgrade re-embeds the edited document only; both pipelines are then refused.
    assert hygiene.upgrade.indexed == ["05-autograd"] and hygiene.upgrade.stale == ["01-tensors"]
    assert list(hygiene.refusals) == [V2, "chunk=E/512/64;embed=minilm;v1"]
    assert all("<folder>" in m and "/tmp" not in m for m in hygiene.refusals.values())
    assert hygiene.rebuilt_search.chunks == 2  # the edit fits its document's one chunk
    assert hygiene.retry.indexed == ["21-wiki-export"] and list(hygiene.retry.failed) == [
        "22-placeholder"
    ]
    assert hygiene.final.counts == {"indexed": 3, "failed": 1, "stale": 0}
    assert hygiene.final.chunks == 3  # the fixed export is searchable now


def test_the_status_view_names_no_machine_path_and_fits(hygiene):
    text = hygiene.describe(hygiene.upgrade_status)
    assert "  rag-lab index <folder> --rebuild" in text.splitlines()
    assert max(map(len, text.splitlines())) <= 100


def test_the_tables_lay_out_the_records(hygiene):
    records = nb08.records_table(hygiene).frame
    assert records.loc["indexed"].tolist() == [2, 2, "1–1", "equal"]
    assert records.loc["failed"].tolist() == [2, "–", "–", "–"]
    status = nb08.status_table(hygiene.upgrade_status).frame
    assert status["documents"].tolist() == [1, 2, 1]
    assert status.loc["stale", "which"] == "01-tensors.md"
    stamps = nb08.stamps_table(hygiene.upgrade_status)
    assert stamps.frame["current"].tolist() == ["", "yes"]  # the most documents first
    assert "all by test/hash-bow" in stamps.caption and "model" not in stamps.frame
    cited = nb08.citations_table(hygiene.first_search).frame
    assert cited.index.name == "[n]" and cited["link"].str.contains("#char=").all()


def test_the_reading_says_the_ledgers_verdicts(hygiene):
    text = nb08.reading(hygiene)
    assert text.count("(by construction)") == 3
    assert "queries with 2 of 2 pipeline versions were refused" in text
    assert "3 of 4 documents indexed, 1 failed, 0 stale; 1 stamp in the index" in text
    assert [e.claim for e in nb08.entries(hygiene)] == list(nb08.HEADLINE)
