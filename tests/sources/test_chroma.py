"""Chroma's chunking benchmark: located, verified by sha256, fetched from a local server."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from fakes import serve

from rag_lab import paths
from rag_lab.checksums import VerificationError, read_manifest
from rag_lab.chunking import STRATEGIES, chunk_corpus, offset_errors
from rag_lab.metrics import chunk_spans, destroyed_spans
from rag_lab.sources import chroma
from rag_lab.sources.chroma import COMMIT, DATA_PATH, PINNED_SUMS, BenchmarkError, fetch, load
from rag_lab.sources.chroma.__main__ import main
from rag_lab.spans import Span

pytestmark = pytest.mark.corpus  # every test reads the mirror: the checksums are pinned


@pytest.fixture
def mirror() -> Path:
    if not (paths.MIRROR_CHROMA / "questions_df.csv").is_file():
        pytest.skip(f"no Chroma benchmark mirror at {paths.MIRROR_CHROMA}")
    return paths.MIRROR_CHROMA


@pytest.fixture
def copy(mirror, tmp_path) -> Path:
    """A writable copy of the mirror."""
    dest = tmp_path / "chroma"
    shutil.copytree(mirror, dest)
    for f in dest.rglob("*"):
        f.chmod(0o755 if f.is_dir() else 0o644)
    dest.chmod(0o755)
    return dest


def test_the_benchmark_matches_its_published_counts(mirror):
    docs, questions = load()
    assert [(d.id, d.title, d.format) for d in docs] == [
        (name, name, "plain")
        for name in ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")
    ]
    # SOURCE.md of the mirror: 40,000 + 737,905 + 500,000 + 48,051 + 118,372 characters.
    assert [len(d.text) for d in docs] == [40_000, 737_905, 500_000, 48_051, 118_372]
    assert len(questions) == 472
    assert sum(len(q.spans) == 1 for q in questions) == 284
    assert sum(len(q.spans) for q in questions) == 790
    assert [q.id for q in questions] == [str(i) for i in range(472)]


def test_every_reference_slices_back_to_its_content(mirror):
    # Straight from the CSV, not through the loader that enforces it.
    docs, questions = load()
    text = {d.id: d.text for d in docs}
    with (mirror / "questions_df.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    refs = [(row["corpus_id"], r) for row in rows for r in json.loads(row["references"])]
    assert len(refs) == 790
    for corpus, r in refs:
        assert text[corpus][r["start_index"] : r["end_index"]] == r["content"]
    assert [s for q in questions for s in q.spans] == [
        Span(corpus, r["start_index"], r["end_index"]) for corpus, r in refs
    ]


def test_the_environment_variable_comes_first(copy, monkeypatch):
    monkeypatch.setenv("RAG_LAB_CHROMA", str(copy))
    assert chroma.benchmark_dir() == copy.resolve()
    docs, _ = load()
    assert docs[0].path == copy.resolve() / "corpora" / "chatlogs.md"


def test_a_missing_benchmark_says_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LAB_CHROMA", str(tmp_path / "nowhere"))
    with pytest.raises(BenchmarkError, match=r"nowhere \(\$RAG_LAB_CHROMA\).*--fetch"):
        load()


def test_an_altered_file_is_named_with_both_digests(copy):
    name = "corpora/pubmed.md"
    altered = (copy / name).read_bytes().replace(b"PMID", b"PMId", 1)
    (copy / name).write_bytes(altered)
    with pytest.raises(BenchmarkError) as err:
        load(copy)
    expected = read_manifest(PINNED_SUMS)[name]
    actual = hashlib.sha256(altered).hexdigest()
    message = str(err.value)
    assert f"{name}: sha256 mismatch (expected {expected}, got {actual})" in message
    assert "finance.md" not in message


def test_missing_and_extra_files_are_all_reported(copy):
    (copy / "LICENSE").unlink()
    (copy / "corpora" / "wikitexts.md").unlink()
    (copy / "corpora" / "mine.md").write_text("extra")
    with pytest.raises(BenchmarkError) as err:
        load(copy)
    message = str(err.value)
    assert "corpora/wikitexts.md: missing" in message
    assert "LICENSE: missing" in message
    assert "corpora/mine.md: not in the manifest" in message


def test_the_command_prints_a_verified_summary(mirror, capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "chroma benchmark: 5 corpora, 1,444,328 characters; 472 questions "
        "(284 with one excerpt), 790 excerpts, every offset slicing back; verified, at "
    )
    assert "  wikitexts: 118,372 characters, 144 questions\n" in out


# --- fetch, from a local stand-in for raw.githubusercontent.com --------------------------


@pytest.fixture
def site(mirror, tmp_path):
    """The mirror laid out as the upstream repository at the pinned commit, served locally.

    Yields (folder served as ``<url>/<commit>/``, url, paths requested).
    """
    root = tmp_path / "site"
    served = root / COMMIT
    shutil.copytree(mirror, served / DATA_PATH, ignore=shutil.ignore_patterns("LICENSE"))
    shutil.copy(mirror / "LICENSE", served / "LICENSE")
    for f in served.rglob("*"):
        f.chmod(0o755 if f.is_dir() else 0o644)
    with serve(root) as (url, requested):
        yield served, url, requested


def test_fetch_downloads_verifies_and_keeps_the_files(site, tmp_path):
    _, url, requested = site
    dest = fetch(tmp_path / "fetched", base_url=url)
    assert len(requested) == 7
    assert f"/{COMMIT}/{DATA_PATH}/corpora/chatlogs.md" in requested
    assert f"/{COMMIT}/LICENSE" in requested
    assert (dest / "COMMIT").read_text() == COMMIT + "\n"
    docs, questions = load(dest)
    assert (len(docs), len(questions)) == (5, 472)
    requested.clear()
    fetch(dest, base_url=url)
    assert requested == []  # every file already there and verified


def test_fetch_refuses_a_tampered_file_by_name(site, tmp_path):
    served, url, _ = site
    name = "questions_df.csv"
    tampered = (served / DATA_PATH / name).read_bytes() + b"Injected?,[],chatlogs\n"
    (served / DATA_PATH / name).write_bytes(tampered)
    (served / "LICENSE").unlink()
    with pytest.raises(VerificationError) as err:
        fetch(tmp_path / "fetched", base_url=url)
    expected = read_manifest(PINNED_SUMS)[name]
    actual = hashlib.sha256(tampered).hexdigest()
    assert err.value.problems == [
        f"{name}: sha256 mismatch (expected {expected}, got {actual}), downloaded from "
        f"{url}/{COMMIT}/{DATA_PATH}/{name}",
        f"LICENSE: download failed, HTTP 404 from {url}/{COMMIT}/LICENSE",
    ]
    assert not (tmp_path / "fetched" / name).exists()
    assert (tmp_path / "fetched" / "corpora" / "finance.md").is_file()


def test_every_strategy_chunks_the_benchmark_into_spans_that_slice_back(mirror):
    docs, questions = load()
    text = {d.id: d.text for d in docs}
    spans = [s for q in questions for s in q.spans]
    lost = {}
    for name in STRATEGIES:
        chunks = chunk_corpus(docs, name)
        assert offset_errors(chunks, docs) == []
        covers = chunk_spans(chunks, name)
        pairs = zip(chunks, covers, strict=True)
        assert all(c.text.endswith(text[s.doc][s.start : s.end]) for c, s in pairs)
        lost[name] = len(destroyed_spans(covers, spans))
    # An overlap can only save excerpts; a header changes no offsets.
    assert lost["B"] <= lost["A"] and lost["D"] <= lost["C"]
    assert (lost["E"], lost["F"]) == (lost["C"], lost["D"])
