from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fakes import GOOD, HashEncoder, write

from rag_lab.app import index, ingest
from rag_lab.app.store import Status
from rag_lab.checksums import sha256_bytes as sha256
from rag_lab.chunking import chunk_all, chunk_document, offset_errors
from rag_lab.documents import Document
from rag_lab.sources import folder


class CrashingEncoder(HashEncoder):
    """Raises on its ``at``-th call: a failure after some chunks of a document are written."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def encode(self, texts, *, progress=None):
        if self.calls + 1 == self.at:
            raise RuntimeError("simulated crash in the encoder")
        return super().encode(texts, progress=progress)


def rows(store, sql: str, *params) -> list[tuple]:
    """Read the SQLite file directly, independently of the store's own queries."""
    with sqlite3.connect(store.path) as db:
        return db.execute(sql, params).fetchall()


@pytest.fixture
def docs(tmp_path):
    return write(tmp_path / "docs", GOOD)


@pytest.fixture
def store(tmp_path):
    with index.open_index(tmp_path / "index.sqlite") as s:
        yield s


# --- reading files ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty file"),
        (b"# Title\n\x00\x01\x02", "binary: a NUL byte at byte 8"),
        (b"caf\xe9 au lait", "not UTF-8: invalid continuation byte at byte 3"),
        (b"\xff\xfe# Title", "not UTF-8: invalid start byte at byte 0"),
        (b"# Only a title\n\n## And a section\n", "nothing to index: no text outside headings"),
        (b"  \n\n\t\n", "only whitespace (6 bytes)"),
        (
            "Tea.\n".encode("utf-16"),
            "UTF-16 text (little-endian, with a byte-order mark): save it as UTF-8",
        ),
    ],
)
def test_each_broken_file_fails_with_its_reason_and_the_others_are_indexed(
    docs, store, content, reason
):
    write(docs, {"broken.md": content})
    report = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert report.failed == {"broken": reason}
    assert report.indexed == ["a", "b", "sub/c"]
    record = store.document("broken")
    assert (record.status, record.reason, record.chunk_count, record.stamp) == (
        Status.FAILED,
        reason,
        None,
        None,
    )
    assert record.sha256 == sha256(content)
    assert rows(store, "SELECT COUNT(*) FROM chunks WHERE doc_id = 'broken'") == [(0,)]


def test_a_file_over_the_size_limit_fails_before_it_is_read(docs, store, monkeypatch):
    monkeypatch.setattr(folder, "MAX_BYTES", 60)  # a.md is 76 bytes, b.md 52
    report = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    size = len(GOOD["a.md"].encode())
    assert report.failed == {"a": f"too large: {size} bytes, over the 60-byte limit"}
    assert store.document("a").sha256 is None  # never read, so never hashed


def test_an_unreadable_file_fails_and_the_others_are_indexed(docs, store, monkeypatch):
    read_bytes = Path.read_bytes

    def deny(path):
        if path.name == "b.md":
            raise PermissionError(13, "Permission denied", str(path))
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", deny)
    report = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert report.failed == {"b": "unreadable: Permission denied"}
    assert report.indexed == ["a", "sub/c"]


def test_two_files_with_one_id_the_second_fails(docs, store):
    write(docs, {"b.txt": "Also beta."})
    report = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert report.failed == {"b.txt": "same document id as b.md; rename one of them"}
    assert store.document("b").status is Status.INDEXED


def test_discover_sorts_skips_hidden_folders_and_strips_suffixes(docs):
    write(docs, {".git/x.md": "hidden", "z.markdown": "# Z\n\nzed", "image.png": "not text"})
    found = [(s.id, s.path) for s in folder.discover(docs)]
    assert found == [
        ("a", "a.md"),
        ("b", "b.md"),
        ("sub/c", "sub/c.txt"),
        ("z", "z.markdown"),
    ]


def test_a_manifest_lists_the_files(docs):
    (docs / "SHA256SUMS").write_text(f"{'0' * 64}  b.md\n{'0' * 64}  LICENSE\n")
    assert [s.id for s in folder.discover(docs)] == ["b"]


def test_plain_text_is_one_section_titled_by_its_file_name(tmp_path):
    text = "# not a heading, a shell comment\n\nSecond paragraph.\n"
    write(tmp_path, {"notes.txt": text})
    doc, digest = folder.read(folder.discover(tmp_path)[0])
    assert (doc.id, doc.title, digest) == ("notes", "notes", sha256(text.encode()))
    [chunk] = chunk_document(doc, "E")
    assert chunk.section == ""
    assert chunk.content == text.strip()
    assert chunk.text == f"[notes]\n{text.strip()}"
    # Read as Markdown, the first line would be a title and vanish from every chunk.
    as_markdown = Document("notes", "notes", text)
    assert [c.content for c in chunk_document(as_markdown, "E")] == ["Second paragraph."]


def test_plain_text_chunks_slice_back_under_every_strategy(tmp_path):
    paragraph = "Word " * 60 + "end."
    text = "\n\n".join(f"# line {i}\n{paragraph}" for i in range(6)) + "\n"
    write(tmp_path, {"long.txt": text})
    doc, _ = folder.read(folder.discover(tmp_path)[0])
    for name, chunks in chunk_all([doc]).items():
        assert len(chunks) > 1, name
        assert offset_errors(chunks, [doc]) == [], name
        assert all(c.section == "" for c in chunks), name
        assert all("x line" not in c.text for c in chunks), name  # the mask never leaks


def test_load_folder_lists_every_problem_with_its_file(docs):
    write(docs, {"bad.md": b"\xff", "empty.txt": b""})
    with pytest.raises(folder.IngestError) as err:
        folder.load_folder(docs)
    assert err.value.problems == [
        f"{docs / 'bad.md'}: not UTF-8: invalid start byte at byte 0",
        f"{docs / 'empty.txt'}: empty file",
    ]


def test_load_folder_checks_a_manifest(docs):
    good = sha256(GOOD["a.md"].encode())
    (docs / "SHA256SUMS").write_text(f"{good}  a.md\n{'1' * 64}  b.md\n{'2' * 64}  gone.md\n")
    with pytest.raises(folder.IngestError) as err:
        folder.load_folder(docs)
    assert err.value.problems == [
        f"{docs / 'b.md'}: sha256 {sha256(GOOD['b.md'].encode())}, SHA256SUMS says {'1' * 64}",
        f"{docs / 'gone.md'}: listed in SHA256SUMS but missing",
    ]


# --- indexing -------------------------------------------------------------------------


def test_the_indexer_records_the_chunk_count_it_wrote(docs, store):
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    record = store.document("a")
    doc, _ = folder.read(folder.discover(docs)[0])
    expected = len(chunk_document(doc, "E"))
    assert expected == 2  # the intro and "Shapes"
    assert record.chunk_count == expected
    assert rows(store, "SELECT COUNT(*) FROM chunks WHERE doc_id = 'a'") == [(expected,)]
    assert record.stamp == index.current_stamp(HashEncoder().fingerprint)
    assert record.stamp.pipeline_version == "chunk=E/512/64;embed=minilm;v1"


def test_unchanged_files_are_skipped_and_changed_ones_reindexed(docs, store):
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    encoder = HashEncoder()
    again = ingest.index_folder(docs, store, encoder, progress=False)
    assert (again.skipped, again.indexed, encoder.calls) == (["a", "b", "sub/c"], [], 0)

    write(docs, {"b.md": GOOD["b.md"] + "\nA new paragraph.\n"})
    (docs / "sub" / "c.txt").unlink()
    third = ingest.index_folder(docs, store, encoder, progress=False)
    assert (third.indexed, third.skipped, third.removed) == (["b"], ["a"], ["sub/c"])
    assert store.document("sub/c") is None
    assert rows(store, "SELECT COUNT(*) FROM chunks WHERE doc_id = 'sub/c'") == [(0,)]


def test_retry_reattempts_only_the_failed_documents(docs, store):
    write(docs, {"broken.md": b"\xff\xfe"})
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    before = {r.id: r.updated_at for r in store.documents()}

    nothing_fixed = ingest.retry(store, HashEncoder(), progress=False)
    assert nothing_fixed.failed == {"broken": "not UTF-8: invalid start byte at byte 0"}

    write(docs, {"broken.md": "# Fixed\n\nNow it reads.\n"})
    encoder = HashEncoder()
    fixed = ingest.retry(store, encoder, progress=False)
    assert (fixed.indexed, fixed.failed, encoder.texts) == (["broken"], {}, 1)
    record = store.document("broken")
    assert (record.status, record.reason, record.chunk_count, record.title) == (
        Status.INDEXED,
        None,
        1,
        "Fixed",
    )
    assert {r.id: r.updated_at for r in store.documents() if r.id != "broken"} == {
        k: v for k, v in before.items() if k != "broken"
    }


def test_retry_removes_failed_documents_whose_file_is_gone(docs, store):
    write(docs, {"broken.md": b""})
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    (docs / "broken.md").unlink()
    report = ingest.retry(store, HashEncoder(), progress=False)
    assert report.removed == ["broken"]
    assert store.document("broken") is None


def test_an_index_holds_one_folder(docs, store, tmp_path):
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    other = write(tmp_path / "other", {"x.md": "# X\n\nx"})
    with pytest.raises(folder.IngestError, match=r"this index holds .*docs, not .*other"):
        ingest.index_folder(other, store, HashEncoder(), progress=False)


# --- stamps ---------------------------------------------------------------------------


def test_a_new_pipeline_version_marks_unchanged_documents_stale(docs, store):
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    write(docs, {"b.md": GOOD["b.md"] + "\nEdited.\n"})
    report = ingest.index_folder(
        docs, store, HashEncoder(), pipeline_version="test-v2", progress=False
    )
    assert (report.indexed, report.stale) == (["b"], ["a", "sub/c"])
    statuses = {r.id: (r.status, r.stamp.pipeline_version) for r in store.documents()}
    assert statuses == {
        "a": (Status.STALE, index.PIPELINE_VERSION),
        "b": (Status.INDEXED, "test-v2"),
        "sub/c": (Status.STALE, index.PIPELINE_VERSION),
    }
    with pytest.raises(index.StaleIndexError) as err:
        index.retriever(store, HashEncoder(), pipeline_version="test-v2")
    assert [r.id for r in err.value.stale] == ["a", "sub/c"]
    message = str(err.value)
    assert "2 of 3 documents are stale" in message
    assert f"pipeline_version: {index.PIPELINE_VERSION} → test-v2" in message
    assert "Stale: a, sub/c." in message
    assert f"rag-lab index {docs.resolve()} --rebuild" in message
    # The old pipeline refuses too: "b" is now the odd one out.
    with pytest.raises(index.StaleIndexError) as old:
        index.retriever(store, HashEncoder())
    assert [r.id for r in old.value.stale] == ["b"]

    encoder = HashEncoder()
    rebuilt = ingest.index_folder(
        docs, store, encoder, pipeline_version="test-v2", rebuild=True, progress=False
    )
    assert (rebuilt.indexed, rebuilt.skipped, rebuilt.stale) == (["a", "sub/c"], ["b"], [])
    assert {r.status for r in store.documents()} == {Status.INDEXED}
    assert index.retriever(store, HashEncoder(), pipeline_version="test-v2").nearest("x", 1)


def test_another_model_makes_every_document_stale(docs, store):
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    other = HashEncoder(name="test/other-model", dims=32)
    report = ingest.index_folder(docs, store, other, progress=False)
    assert report.stale == ["a", "b", "sub/c"]
    with pytest.raises(index.StaleIndexError, match=r"dimensions: 64 → 32.*model_name"):
        index.retriever(store, other)


def test_a_stale_document_is_current_again_when_the_stamp_comes_back(docs, store):
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    ingest.index_folder(docs, store, HashEncoder(), pipeline_version="v2", progress=False)
    report = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert report.skipped == ["a", "b", "sub/c"]
    assert {r.status for r in store.documents()} == {Status.INDEXED}


# --- crashes ----------------------------------------------------------------------------


def test_a_crash_mid_document_leaves_the_previous_state(docs, store, monkeypatch):
    monkeypatch.setattr(ingest, "WRITE_BATCH", 1)  # one chunk per step: "a" takes two steps
    ingest.index_folder(docs, store, HashEncoder(), progress=False)
    before_docs = rows(store, "SELECT * FROM documents ORDER BY id")
    before_chunks = rows(store, "SELECT * FROM chunks ORDER BY doc_id, idx")

    write(docs, {"a.md": GOOD["a.md"] + "\n## More\n\nA third section.\n"})
    # Call 1 embeds and writes a's first chunk; call 2 raises before its second.
    with pytest.raises(RuntimeError, match="simulated crash"):
        ingest.index_folder(docs, store, CrashingEncoder(at=2), progress=False)

    assert rows(store, "SELECT * FROM documents ORDER BY id") == before_docs
    assert rows(store, "SELECT * FROM chunks ORDER BY doc_id, idx") == before_chunks
    assert store.document("a").chunk_count == 2
    # Running again resumes: the change is picked up whole.
    report = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert (report.indexed, store.document("a").chunk_count) == (["a"], 3)


def test_an_unchanged_failed_file_is_not_written_again(docs, store, monkeypatch):
    """50 empty files and one of invalid UTF-8: each run reports the 51 failed, and a run
    with nothing changed writes none of their records; a failed file that changes (its
    bytes, or its reason) is written again."""
    write(docs, {f"empty{i:02}.md": "" for i in range(50)} | {"bad.md": b"\xff\xfe\x00x"})
    first = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert len(first.failed) == 51
    written = []
    fail = store.fail
    monkeypatch.setattr(
        store, "fail", lambda failed: written.extend(r.id for r in failed) or fail(failed)
    )
    again = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert (len(again.failed), again.skipped, written) == (51, ["a", "b", "sub/c"], [])
    write(docs, {"empty07.md": "# Seven\n"})  # failed still (no text), for another reason
    third = ingest.index_folder(docs, store, HashEncoder(), progress=False)
    assert (len(third.failed), written) == (51, ["empty07"])
    assert store.document("empty07").sha256 == sha256(b"# Seven\n")
