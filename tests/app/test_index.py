from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rag_lab.app import index
from rag_lab.app.store import DocumentRecord, SQLiteStore, Stamp, Status, StoreError
from rag_lab.chunking import Chunk
from rag_lab.models.minilm import Fingerprint

STAMP = Stamp("m", "key1", 2, "p1", "1")


class FixedEncoder:
    """Stands in for the model: each known text maps to a fixed unit vector."""

    def __init__(self, table: dict[str, list[float]], name: str = "m") -> None:
        # A fingerprint whose name, key and dimensions match STAMP's where the test wants.
        self.fingerprint = Fingerprint(name, "0" * 64, "none", True, 256, 2)
        self.table = {
            t: np.array(v, dtype=np.float32) / np.linalg.norm(v) for t, v in table.items()
        }

    def encode(self, texts, *, progress=None):
        return np.stack([self.table[t] for t in texts])


def chunks(doc_id: str, n: int) -> list[Chunk]:
    return [Chunk(doc_id, i, f"t{i}", f"c{i}", "S", 10 * i, 10 * i + 2) for i in range(n)]


def unit(*rows: list[float]) -> np.ndarray:
    v = np.array(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def put(store: SQLiteStore, doc_id: str, n: int, stamp: Stamp = STAMP, title: str = "T") -> None:
    with store.replacing(doc_id) as w:
        w.add(chunks(doc_id, n), unit(*[[1.0, float(i)] for i in range(n)]))
        w.finish(f"{doc_id}.md", "sha-" + doc_id, title, stamp)


def dump(path) -> tuple[list, list]:
    with sqlite3.connect(path) as db:
        return (
            db.execute("SELECT * FROM documents ORDER BY id").fetchall(),
            db.execute("SELECT * FROM chunks ORDER BY doc_id, idx").fetchall(),
        )


@pytest.fixture
def store(tmp_path):
    with SQLiteStore(tmp_path / "i.sqlite") as s:
        yield s


# --- the store ----------------------------------------------------------------------


def test_a_document_is_written_with_its_stamp_and_the_count_the_store_counted(store):
    put(store, "d", 3)
    record = store.document("d")
    assert (record.status, record.reason, record.chunk_count) == (Status.INDEXED, None, 3)
    assert (record.path, record.sha256, record.title, record.stamp) == ("d.md", "sha-d", "T", STAMP)
    stored, vectors = store.chunks(["d"])
    assert stored == chunks("d", 3)
    np.testing.assert_array_equal(vectors, unit([1, 0], [1, 1], [1, 2]))


def test_replacing_a_document_drops_its_old_chunks(store):
    put(store, "d", 3)
    put(store, "d", 1)
    assert store.document("d").chunk_count == 1
    assert [c.id for c in store.chunks(["d"])[0]] == ["d#0"]


def test_an_exception_between_chunks_and_finish_leaves_the_previous_state(store):
    put(store, "d", 2)
    put(store, "e", 1)
    before = dump(store.path)
    with pytest.raises(KeyboardInterrupt), store.replacing("d") as w:
        w.add(chunks("d", 1), unit([0, 1]))
        raise KeyboardInterrupt  # Ctrl-C after one chunk of the new version is written
    assert dump(store.path) == before


def test_a_writer_closed_without_finish_is_rolled_back(store):
    put(store, "d", 2)
    before = dump(store.path)
    with pytest.raises(RuntimeError, match="without finish"), store.replacing("d") as w:
        w.add(chunks("d", 1), unit([0, 1]))
    assert dump(store.path) == before


def test_a_killed_process_mid_document_leaves_the_previous_state(store, tmp_path):
    put(store, "d", 2)
    before = dump(store.path)
    script = textwrap.dedent(f"""
        import os
        import numpy as np
        from rag_lab.chunking import Chunk
        from rag_lab.app.store import SQLiteStore
        store = SQLiteStore({str(store.path)!r})
        with store.replacing("d") as w:
            w.add([Chunk("d", i, "x", "x", "", 0, 1) for i in range(5)], np.ones((5, 2)))
            os._exit(9)  # no rollback, no cleanup: as if the power went out
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    with SQLiteStore(store.path) as reopened:  # SQLite rolls the journal back on open
        assert reopened.document("d").chunk_count == 2
    assert dump(store.path) == before
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_failure_drops_the_chunks_and_keeps_the_reason(store):
    put(store, "d", 2)
    store.fail([DocumentRecord.failure("d", "d.md", None, "unreadable: Permission denied")])
    record = store.document("d")
    assert (record.status, record.reason, record.stamp, record.chunk_count) == (
        Status.FAILED,
        "unreadable: Permission denied",
        None,
        None,
    )
    assert dump(store.path)[1] == []


def test_chunks_of_another_document_are_refused(store):
    with pytest.raises(ValueError, match="does not belong to d"), store.replacing("d") as w:
        w.add(chunks("e", 1), unit([1, 0]))


def test_a_file_that_is_not_an_index_is_refused(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("hello, not a database" * 100)
    with pytest.raises(StoreError, match="not a rag-lab index"):
        SQLiteStore(path)


def test_an_index_of_another_schema_is_refused(store):
    store.set_meta("schema", "0")
    with pytest.raises(StoreError, match="schema 0; this rag_lab reads 3"):
        SQLiteStore(store.path)


def test_stamp_differences_name_each_field():
    other = Stamp("m", "key2", 3, "p1", "1")
    assert STAMP.differences(other) == ["model_key: key1 → key2", "dimensions: 2 → 3"]
    assert STAMP.differences(STAMP) == []


# --- search and status ------------------------------------------------------------


def current_for(encoder, pipeline: str = "p1") -> Stamp:
    return index.current_stamp(encoder.fingerprint, pipeline)


def test_the_retriever_searches_stored_vectors_nearest_first(store):
    encoder = FixedEncoder({"q": [1, 1]})
    stamp = current_for(encoder)
    put(store, "d", 3, stamp, title="Doc D")
    hits = index.retriever(store, encoder, "p1").nearest("q", 2)
    # Distances 1 - cos: chunk 1 is [1, 1] itself (0); chunk 2 is [1, 2]: 1 - 3/sqrt(10).
    assert [h.chunk.id for h in hits] == ["d#1", "d#2"]
    assert hits[0].distance == pytest.approx(0.0, abs=1e-6)
    assert hits[1].distance == pytest.approx(1 - 3 / np.sqrt(10), abs=1e-6)
    assert (hits[0].document_name, hits[0].locator.fragment) == ("Doc D", "#char=10,12")


def test_failed_documents_do_not_block_a_search(store):
    encoder = FixedEncoder({"q": [1, 0]})
    put(store, "d", 1, current_for(encoder))
    store.fail([DocumentRecord.failure("bad", "bad.md", "sha", "empty file")])
    assert [h.chunk.id for h in index.retriever(store, encoder, "p1").nearest("q", 4)] == ["d#0"]


def test_mixed_stamps_are_refused_naming_the_stale_documents(store):
    encoder = FixedEncoder({"q": [1, 0]})
    put(store, "new", 1, current_for(encoder, "p2"))
    put(store, "old1", 1, current_for(encoder, "p1"))
    put(store, "old2", 1, current_for(encoder, "p1"))
    store.set_meta("folder", "/docs")
    with pytest.raises(index.StaleIndexError) as err:
        index.retriever(store, encoder, "p2")
    assert [r.id for r in err.value.stale] == ["old1", "old2"]
    assert str(err.value) == (
        "refusing to search: 2 of 3 documents are stale, embedded with another stamp than "
        "this query (pipeline_version: p1 → p2), and vectors of different stamps are not "
        "comparable. Stale: old1, old2. Rebuild them: rag-lab index /docs --rebuild"
    )


def test_a_long_stale_list_is_cut(store, monkeypatch):
    monkeypatch.setattr(index, "LISTED", 2)
    encoder = FixedEncoder({})
    for name in "abcde":
        put(store, name, 1, current_for(encoder, "p1"))
    with pytest.raises(index.StaleIndexError, match=r"Stale: a, b … and 3 more \(rag-lab status"):
        index.retriever(store, encoder, "p2")


def test_an_empty_index_is_refused(store):
    store.fail([DocumentRecord.failure("bad", "bad.md", None, "empty file")])
    with pytest.raises(index.EmptyIndexError, match="nothing is indexed yet"):
        index.retriever(store, FixedEncoder({}), "p1")


def test_status_counts_by_the_stamp_of_the_code_asking(store):
    encoder = FixedEncoder({})
    put(store, "a", 2, current_for(encoder, "p1"))
    put(store, "b", 3, current_for(encoder, "p1"))
    put(store, "c", 5, current_for(encoder, "p2"))
    store.fail([DocumentRecord.failure("x", "x.txt", None, "binary: a NUL byte at byte 0")])
    st = index.status(store, current_for(encoder, "p1"))
    assert st.counts == {"indexed": 2, "failed": 1, "stale": 1}
    assert st.chunks == 5  # a and b; c is stale, x has none
    assert [r.id for r in st.stale] == ["c"]
    assert list(st.stamps.values()) == [2, 1]
    text = index.describe(st)
    assert text.splitlines()[0] == "4 documents: 2 indexed, 1 failed, 1 stale; 5 chunks searchable"
    assert "  x.txt: binary: a NUL byte at byte 0" in text
    assert "  2 × m (fingerprint" in text and text.count("(current)") == 1
    # A stamp takes two lines: the model, then what built the chunks, under the same indent.
    two = text.splitlines()[text.splitlines().index("stamps:") + 1 :][:2]
    assert two[0].startswith("  2 × m (fingerprint ")
    assert two[1] == "      pipeline p1, reader 1 (current)"


def test_the_status_view_fits_a_page_with_real_names(store):
    """What `rag-lab status` prints for the lab's own index in the middle of an upgrade:
    the model's full name, the pipeline versions, a folder, a failure: every line <= 100."""
    encoder = FixedEncoder({}, name="sentence-transformers/all-MiniLM-L6-v2")
    old = index.current_stamp(encoder.fingerprint, "chunk=E/512/64;embed=minilm;v1")
    new = index.current_stamp(encoder.fingerprint, "chunk=E/512/64;embed=minilm;v2")
    put(store, "20-environment-and-distribution-shift", 2, old)
    put(store, "05-autograd", 1, new)
    store.fail(
        [
            DocumentRecord.failure(
                "21-wiki-export", "21-wiki-export.md", None, "not UTF-8: invalid continuation byte"
            )
        ]
    )
    store.set_meta("folder", "/home/someone/projects/course-notes/docs")
    text = index.describe(index.status(store, new))
    assert max(map(len, text.splitlines())) <= index.WIDTH
    assert "  rag-lab index /home/someone/projects/course-notes/docs --rebuild" in text.splitlines()
    assert text.count("pipeline chunk=E/512/64;embed=minilm;v") == 2


# --- the readers people have: reST, HTML, and what is skipped -----------------------------

RST_DOC = """\
Setup guide
===========

Before anything.

Install
-------

The rst needle is in Install.

::

   make setup
"""
HTML_DOC = (
    "<html><head><title>ignored</title><script>no()</script></head><body>"
    "<h1>Field notes</h1><p>Opening words.</p><h2>Usage</h2><p>The html needle is in Usage."
    "<pre>rag-lab ask</pre></body></html>"
)


def test_index_reads_rst_and_html_with_their_sections_and_counts_what_it_skips(run, tmp_path):
    pytest.importorskip("docutils")
    from fakes import write

    docs = write(
        tmp_path / "docs",
        {
            "guide.rst": RST_DOC,
            "notes/page.html": HTML_DOC,
            "a.png": b"\x89PNG",
            "b.png": b"\x89PNG",
            "notes/c.PNG": b"\x89PNG",
            "data.csv": "x\n",
            "Makefile": "all:\n",
            ".hidden.png": b"\x89PNG",
        },
    )
    status, out, _ = run("index", docs)
    assert status == 0
    assert "2 indexed, 0 unchanged, 0 failed, 0 stale, 0 removed" in out
    assert "skipped: 3 .png, 1 without a suffix, 1 .csv (not a type rag-lab reads)" in out
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        titles = dict(db.execute("SELECT id, title FROM documents"))
        rows = db.execute("SELECT doc_id, section, content FROM chunks").fetchall()
    assert titles == {"guide": "Setup guide", "notes/page": "Field notes"}

    def where(needle: str) -> list[tuple[str, str]]:
        return [(doc, section) for doc, section, content in rows if needle in content]

    assert where("The rst needle is in Install.") == [("guide", "Install")]
    assert where("```\nmake setup\n```") == [("guide", "Install")]
    assert where("The html needle is in Usage.") == [("notes/page", "Usage")]
    assert where("```\nrag-lab ask\n```") == [("notes/page", "Usage")]
    assert where("no()") == [] and where("ignored") == []
