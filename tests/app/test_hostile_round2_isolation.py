# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab`` against one bad file in a folder, and silent damage (issue 26, "isolation").

Each row: what is put in the folder (or the question file) first, the command, the exit
status, a fragment of what it says (stdout or stderr), and the state the index is left
in. One bad file never stops the others: it ends ``failed`` with its reason. The PDFs
are written byte by byte here, so each is broken in exactly one way.
"""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from fakes import write
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hostile import EVALUATE, NEGATIVE, QUESTION, state

from rag_lab.app import exits
from rag_lab.chunking import (
    MAX_FACTOR,
    STRATEGIES,
    TARGET,
    chunk_bounded,
    chunk_document,
    offset_errors,
)
from rag_lab.documents import Document
from rag_lab.sources import folder as folder_module
from rag_lab.sources.pdf import extract

TEXT = "BT /F1 12 Tf 72 720 Td (Tensors hold numbers.) Tj ET"
PAGE = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
CONTENT = f"<< /Length {len(TEXT)} >>\nstream\n{TEXT}\nendstream"
FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf_bytes(objects: list[str], trailer: str = "") -> bytes:
    """A PDF of ``objects`` (numbered from 1, the first the catalog), with its xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{at:010d} 00000 n \n".encode() for at in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R {trailer}>>\n".encode()
    return bytes(out + f"startxref\n{xref}\n%%EOF\n".encode())


CATALOG = "<< /Type /Catalog /Pages 2 0 R >>"
# The page tree lists itself among its kids: PDFium's "Failed to load page" on page 2.
LOOP = pdf_bytes([CATALOG, "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>", PAGE, CONTENT, FONT])
# A title of one UTF-16 high surrogate, alone: not text in any encoding.
SURROGATE = pdf_bytes(
    [
        CATALOG,
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        PAGE,
        CONTENT,
        FONT,
        "<< /Title <FEFFD800> >>",
    ],
    "/Info 6 0 R ",
)
# A blank page of 200 × 200 inches (14,400 points a side): at 300 dpi, 3.6 billion pixels.
HUGE = pdf_bytes(
    [
        CATALOG,
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 14400 14400] /Contents 4 0 R >>",
        "<< /Length 0 >>\nstream\n\nendstream",
    ]
)
# No paragraph and no sentence break: words and spaces only.
UNBROKEN = "tensor " * 14_287  # 100,009 characters
BUDGET = MAX_FACTOR * TARGET


def add(name: str, content: bytes | str):
    def setup(docs, tmp_path, monkeypatch):
        write(docs, {name: content})

    return setup


def needs_tesseract(setup):
    def checked(docs, tmp_path, monkeypatch):
        if shutil.which("tesseract") is None:
            pytest.skip("Tesseract is not installed (apt-get install tesseract-ocr)")
        setup(docs, tmp_path, monkeypatch)

    return checked


def a_reader_bug(docs, tmp_path, monkeypatch):
    """Fault injection: the PDF reader raises what no one foresaw (a library's own bug)."""
    write(docs, {"odd.pdf": SURROGATE})

    def boom(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(folder_module.pdf, "read_pdf", boom)


def question_file(text: str):
    def setup(docs, tmp_path, monkeypatch):
        (tmp_path / "q.yaml").write_text(text)

    return setup


SECOND = (
    QUESTION.replace("q1", "q2")
    .replace("doc: a", "doc: b")
    .replace("Tensors hold numbers.", "Gradients flow backwards")
)
twice_questions = question_file(f"questions:\n{QUESTION}questions:\n{SECOND}negatives:\n{NEGATIVE}")
twice_negatives = question_file(
    f"negatives:\n{NEGATIVE}questions:\n{QUESTION}negatives:\n{NEGATIVE}"
)
needle_twice = question_file(
    "questions:\n"
    + QUESTION.replace("    course:", '    needle: "A shape lists the axis lengths."\n    course:')
    + f"negatives:\n{NEGATIVE}"
)
loop_in_corpus = add("loop.pdf", LOOP)

CASES = [
    # (id, setup, argv, exit status, fragment of stdout + stderr, index state after)
    ("page tree holds itself", add("loop.pdf", LOOP), ["index", "{docs}"], 1, "failed loop.pdf: malformed: pdfium: page 2: Failed to load page", "3 indexed, 1 failed"),
    ("page tree holds itself, pdfminer", add("loop.pdf", LOOP), ["index", "{docs}", "--pdf-extractor", "pdfminer"], 0, "", "4 indexed, 0 failed"),
    ("page tree holds itself, pypdf", add("loop.pdf", LOOP), ["index", "{docs}", "--pdf-extractor", "pypdf"], 1, "failed loop.pdf: malformed: pypdf: Detected cyclic page references", "3 indexed, 1 failed"),
    ("title with a lone surrogate", add("title.pdf", SURROGATE), ["index", "{docs}"], 0, "4 indexed", "4 indexed, 0 failed"),
    ("a reader's own bug", a_reader_bug, ["index", "{docs}"], 1, "failed odd.pdf: cannot be read: RecursionError: maximum recursion depth exceeded", "3 indexed, 1 failed"),
    ("200 by 200 inches, --ocr", needs_tesseract(add("huge.pdf", HUGE)), ["index", "{docs}", "--ocr"], 1, "failed huge.pdf: page 1 is 200 by 200 inches: 3,600,000,000 pixels at 300 dpi, over the OCR limit of", "3 indexed, 1 failed"),
    ("evaluate, page tree holds itself", loop_in_corpus, ["evaluate", "--corpus", "{docs}", "--questions", "{docs}/a.md", "--out", "{tmp}/r"], 2, "loop.pdf: malformed: pdfium: page 2: Failed to load page", "absent"),
    ("evaluate, a reader's own bug", a_reader_bug, ["evaluate", "--corpus", "{docs}", "--questions", "{docs}/a.md", "--out", "{tmp}/r"], 2, "odd.pdf: cannot be read: RecursionError", "absent"),
    ("text with no break", add("long.txt", UNBROKEN), ["index", "{docs}"], 0, f"warning: long.txt: 1 passage over {BUDGET:,} characters with no paragraph or sentence break, cut into pieces of at most {TARGET}", "4 indexed, 0 failed"),
    ("questions: twice", twice_questions, EVALUATE, 2, "q.yaml:7: questions: a second 'questions:' key (the first is at line 1); YAML keeps only the last", "absent"),
    ("needle: twice in a question", needle_twice, EVALUATE, 2, "q.yaml:5: needle: a second 'needle:' field in this item (the first is at line 4)", "absent"),
    ("negatives: twice", twice_negatives, EVALUATE, 2, "q.yaml:11: negatives: a second 'negatives:' key (the first is at line 1)", "absent"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_isolation_case(env, tmp_path, monkeypatch, setup, argv, code, fragment, after):
    run, docs, path = env
    setup(docs, tmp_path, monkeypatch)
    argv = [a.format(docs=docs, tmp=tmp_path) for a in argv]
    status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert fragment in out + err, (out, err)
    if code == exits.ERROR:
        assert err.count("\n") == 1, err
    assert state(path) == after


def test_files_after_a_bad_one_are_indexed_and_a_rerun_gets_no_further_failure(env):
    run, docs, path = env
    write(docs, {"0-loop.pdf": LOOP, "1-title.pdf": SURROGATE, "z.md": "# Zed\n\nLast file.\n"})
    assert run("index", docs)[0] == exits.PARTIAL
    status, out, _ = run("index", docs)
    assert (status, out.splitlines()[1]) == (
        exits.PARTIAL,
        "0 indexed, 5 unchanged, 1 failed, 0 stale, 0 removed",
    )
    assert run("retry")[0] == exits.PARTIAL
    assert state(path) == "5 indexed, 1 failed"


def test_a_broken_title_is_kept_with_a_replacement_character(env):
    run, docs, path = env
    write(docs, {"title.pdf": SURROGATE})
    run("index", docs)
    with sqlite3.connect(path) as db:
        (title,) = db.execute("SELECT title FROM documents WHERE id = 'title'").fetchone()
    assert title == "title"  # nothing but what could not be decoded: the file's name


def test_ocr_checks_every_page_before_it_renders_one(tmp_path):
    if shutil.which("tesseract") is None:
        pytest.skip("Tesseract is not installed (apt-get install tesseract-ocr)")
    (tmp_path / "huge.pdf").write_bytes(HUGE)
    with pytest.raises(extract.PdfError, match="over the OCR limit of 50,000,000 pixels a page"):
        extract.ocr(tmp_path / "huge.pdf", 300)


def test_an_unbroken_text_is_cut_within_the_budget(env):
    run, docs, path = env
    write(docs, {"long.txt": UNBROKEN, "short.md": "# S\n\n" + "word " * 150 + "\n"})
    status, _, err = run("index", docs)
    assert status == exits.OK
    # short.md's paragraph is 750 characters: over 512, within the bound, so kept whole.
    assert "long.txt" in err and "short.md" not in err
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT doc_id, length(content) FROM chunks").fetchall()
    longest = {}
    for doc_id, n in rows:
        longest[doc_id] = max(longest.get(doc_id, 0), n)
    assert longest["long"] <= TARGET
    assert longest["short"] > TARGET  # a sentence the six strategies keep whole


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=" \nab.#", min_size=0, max_size=4000),
    st.sampled_from(sorted(STRATEGIES)),
    st.sampled_from(["markdown", "plain"]),
)
def test_bounded_chunks_slice_back_and_keep_within_the_bound(text, strategy, fmt):
    doc = Document("d", "D", text, format=fmt)
    got = chunk_bounded(doc, strategy)
    assert offset_errors(got.chunks, [doc]) == []
    assert all(c.end - c.start <= MAX_FACTOR * TARGET for c in got.chunks)
    plain = chunk_document(doc, strategy)
    assert (got.chunks == plain) == (got.cut == 0)
