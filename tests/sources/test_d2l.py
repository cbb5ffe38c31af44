from __future__ import annotations

import shutil

import pytest

from rag_lab.checksums import sha256_bytes
from rag_lab.markdown import structure
from rag_lab.sources.d2l import CorpusError, load_corpus


def _tiny_corpus(folder, files: dict[str, bytes], sums: bool = True):
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    if sums:
        lines = [f"{sha256_bytes(d)}  {n}" for n, d in files.items()]
        (folder / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.corpus
def test_the_lab_corpus_matches_its_published_statistics(docs):
    assert len(docs) == 20
    assert [d.id for d in docs] == sorted(d.id for d in docs)
    assert docs[2].id == "03-linear-algebra" and docs[2].title == "Linear Algebra"
    totals = {}
    for d in docs:
        for key, value in structure(d.text).items():
            totals[key] = totals.get(key, 0) + value
    # SOURCE.md of the mirror: 321,526 characters, 124 sections, 170 code blocks,
    # 2 tables, 97 display equations, 1,223 inline math spans.
    assert totals["characters"] == 321_526
    assert totals["sections"] == 124
    assert totals["code blocks"] == 170
    assert totals["tables"] == 2
    assert totals["display equations"] == 97
    assert totals["inline math"] == 1_223


def test_documents_are_read_exactly_and_titled_by_their_first_heading(tmp_path):
    text = "# Title here\n\nBody with a ü.\r\n"
    folder = _tiny_corpus(tmp_path / "c", {"01-a.md": text.encode(), "02-b.md": b"no title\n"})
    (folder / "notes.md").write_text("not a corpus document")
    docs = load_corpus(folder)
    assert [(d.id, d.title) for d in docs] == [("01-a", "Title here"), ("02-b", "02-b")]
    assert docs[0].text == text


def test_an_altered_file_is_named_with_both_checksums(tmp_path):
    folder = _tiny_corpus(tmp_path / "c", {"01-a.md": b"# A\n", "02-b.md": b"# B\n"})
    (folder / "02-b.md").write_bytes(b"# B, edited\n")
    with pytest.raises(CorpusError) as err:
        load_corpus(folder)
    message = str(err.value)
    assert "02-b.md: sha256" in message and sha256_bytes(b"# B\n") in message
    assert "01-a.md" not in message
    assert "RAG_LAB_CORPUS" in message


def test_missing_and_extra_files_are_all_reported(tmp_path):
    folder = _tiny_corpus(tmp_path / "c", {"01-a.md": b"# A\n", "02-b.md": b"# B\n"})
    (folder / "01-a.md").unlink()
    (folder / "03-c.md").write_bytes(b"# C\n")
    with pytest.raises(CorpusError, match=r"(?s)01-a.md: missing.*03-c.md: not in the manifest"):
        load_corpus(folder)


def test_a_missing_corpus_says_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LAB_CORPUS", str(tmp_path / "nowhere"))
    with pytest.raises(CorpusError, match=r"nowhere \(\$RAG_LAB_CORPUS\).*make data"):
        load_corpus()


@pytest.mark.corpus
def test_the_environment_variable_is_checked_against_the_pinned_sums(docs, monkeypatch, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(docs[0].path.parent, copy, ignore=shutil.ignore_patterns("raw"))
    (copy / "05-autograd.md").chmod(0o644)
    with (copy / "05-autograd.md").open("a") as f:
        f.write("one more line\n")
    monkeypatch.setenv("RAG_LAB_CORPUS", str(copy))
    with pytest.raises(CorpusError, match=r"05-autograd\.md: sha256"):
        load_corpus()


def test_non_utf8_is_reported_with_its_byte_offset(tmp_path):
    folder = _tiny_corpus(tmp_path / "c", {"01-a.md": b"# A\n\xff\n"}, sums=False)
    with pytest.raises(CorpusError, match=r"01-a.md: not UTF-8 at byte 4"):
        load_corpus(folder)
