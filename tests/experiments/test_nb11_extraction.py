"""Notebook 11's measures on tiny documents and PDFs made in the test.

No corpus, no encoder: documents are built here, PDFs typeset into ``tmp_path`` with known
ground truth (:func:`rag_lab.sources.pdf.typeset.typeset`), and the cache is pointed at
``tmp_path`` so that no test reads what an earlier run left. The word-piece counts of
:func:`~rag_lab.experiments.nb11_extraction.measures.waste_row` load the packaged tokenizer only
(``tokenizer.json``, no weights), marked ``model`` as the other tokenizer tests are.
"""

from __future__ import annotations

import dataclasses
import math
import string

import pandas as pd
import pytest

from rag_lab.chunking import Chunk
from rag_lab.claims import claim as declared
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation.paired import Finding
from rag_lab.experiments import nb11_extraction as nb
from rag_lab.experiments.nb11_extraction import measures, pdfs, run, views
from rag_lab.experiments.nb11_extraction.measures import loss_table
from rag_lab.experiments.nb11_extraction.run import mitigations
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Query, Question
from rag_lab.sources.pdf import document as pdf_document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf import typeset as ts
from rag_lab.sources.pdf.typeset import Placement, page_break_needle, typeset
from rag_lab.stats import wilson
from rag_lab.text import flat

TITLE = "Tiny Tensors"
WORDS = "tensors shapes axes matrices vectors scalars norms sums products of rank".split()


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Every test caches under its own ``tmp_path``, never under the lab's cache."""
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _code(p: int) -> str:
    """Letters naming paragraph ``p`` (``ba``, ``bb``, …): no two paragraphs share a word,
    so no two body lines are the same once digits are read as ``#``."""
    return string.ascii_lowercase[1 + p // 26] + string.ascii_lowercase[p % 26]


def _doc(paragraphs: int = 40, doc_id: str = "tiny", title: str = TITLE) -> Document:
    """A title heading and prose long enough for several pages."""
    parts = [f"# {title}", "", "Some prose before the body.", ""]
    for p in range(paragraphs):
        words = " ".join(w + _code(p) for w in WORDS)
        parts += [" ".join(f"{words} {p}-{k}." for k in range(3)), ""]
    return Document(doc_id, title, "\n".join(parts))


def _question(i: int, doc: str, needle: str) -> Question:
    return Question(f"q{i}", doc, needle, f"course {i}", f"ticket {i}")


def _queries(questions) -> list[Query]:
    """Both phrasings of each question, course first, as a QuestionSet orders them."""
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


# --- text normalisation ----------------------------------------------------------------------


def test_flat_makes_every_whitespace_run_one_space():
    assert pdfs.flat("  a\r\n\tb\f\n\nc  ") == "a b c"
    assert pdfs.flat("") == ""


def test_folded_leaves_out_quotes_backticks_and_asterisks():
    assert pdfs.folded("call `f(x)`\n**now**, \u2018it\u2019 \u201csaid\u201d 'x' \"y\"") == (
        "call f(x) now, it said x y"
    )
    assert pdfs.folded("a - b = c?") == "a - b = c?"  # other symbols stay


def test_canonical_reads_crlf_as_newline_and_joins_pages_as_the_app_does():
    assert pdf_document.PAGE_JOIN == "\f\n"
    assert pdfs.canonical(["one\r\ntwo\r", "three\rfour"]) == "one\ntwo\n\f\nthree\nfour"
    assert pdfs.canonical(["only"]) == "only"
    assert pdfs.canonical([]) == ""


def test_the_readers():
    assert pdfs.READERS[-1] == pdfs.APP_READER == "rag-lab index"
    assert len(pdfs.LIBRARY_READERS) == 6 and "pypdf layout" in pdfs.LIBRARY_READERS


# --- needles and survival --------------------------------------------------------------------


def test_needles_by_doc_keeps_each_documents_distinct_needles_in_question_order():
    questions = [
        _question(0, "b", "second doc needle"),
        _question(1, "a", "first a"),
        _question(2, "b", "second doc needle"),  # the same needle asked again
        _question(3, "a", "second a"),
    ]
    got = pdfs.needles_by_doc(_queries(questions))
    assert got == {"b": ["second doc needle"], "a": ["first a", "second a"]}
    assert list(got) == ["b", "a"]  # documents in the order their first question comes


NEEDLES = {"d1": ["alpha beta", "gamma  delta"], "d2": ["`x` is one"]}


def test_kept_vector_normalises_whitespace_and_follows_fold():
    texts = {"d1": "alpha\nbeta and gamma delta", "d2": "\u2018x\u2018 is one"}
    assert measures.kept_vector(NEEDLES, texts).tolist() == [True, True, False]  # the ` is lost
    missing = measures.kept_vector(NEEDLES, {"d1": "alpha beta"})  # no text for d2 at all
    assert missing.dtype == bool and missing.tolist() == [True, False, False]
    assert not measures.kept_vector(NEEDLES, {}).any()


def _placement(body: tuple[str, ...], pages: tuple[str, ...] | None = None) -> Placement:
    return Placement("one-column", pages or body, body, {})


def test_runs_kept_counts_eight_word_runs_in_order():
    line1 = "w1 w2 w3 w4 w5"
    line2 = "w6 w7 w8 w9 w10"
    placed = {"d": _placement((f"{line1}\n{line2}",))}
    # 10 words: 3 runs of 8. Identical text (however wrapped) keeps all of them.
    assert measures.runs_kept(placed, {"d": f"{line1} {line2}"}) == 1.0
    assert measures.runs_kept(placed, {"d": f"{line1}\n\f\n{line2}"}) == 1.0
    # The two lines swapped: w6..w10 w1..w5 has none of w1..w8, w2..w9, w3..w10.
    assert measures.runs_kept(placed, {"d": f"{line2} {line1}"}) == 0.0
    # One word dropped in the middle (w5): only runs not spanning it survive; none do.
    assert measures.runs_kept(placed, {"d": "w1 w2 w3 w4 w6 w7 w8 w9 w10"}) == 0.0
    # w10 dropped: w1..w8 and w2..w9 kept, w3..w10 lost.
    assert measures.runs_kept(placed, {"d": "w1 w2 w3 w4 w5 w6 w7 w8 w9"}) == pytest.approx(2 / 3)
    assert measures.runs_kept(placed, {}) == 0.0
    assert math.isnan(measures.runs_kept({"d": _placement(("too short",))}, {"d": "too short"}))


def test_runs_kept_pools_runs_over_documents():
    placed = {"a": _placement((" ".join(f"a{i}" for i in range(9)),)), "b": _placement(("b " * 8,))}
    # a: 2 runs, kept; b: 8 equal words, one distinct run, lost: 2 of 3.
    got = measures.runs_kept(placed, {"a": " ".join(f"a{i}" for i in range(9))})
    assert got == pytest.approx(2 / 3)


TABLE_DOC = Document(
    "t",
    "T",
    "# T\n\nIntro with value 7 in it.\n\n| name | value |\n|:--|--:|\n| alpha | 1 |\n"
    "| beta gamma | 22 |\n\nAfter the table.\n",
)


def test_rows_kept_finds_rows_whose_cells_come_out_in_order():
    # table_rows: the header row and two data rows, the rule row left out.
    assert measures.rows_kept([TABLE_DOC], {"t": "name value\nalpha 1\nbeta\ngamma 22"}) == (3, 3)
    assert measures.rows_kept([TABLE_DOC], {"t": "name alpha value 1 beta gamma 22"}) == (1, 3)
    assert measures.rows_kept([TABLE_DOC], {}) == (0, 3)
    assert measures.rows_kept([_doc(1)], {"tiny": "anything"}) == (0, 0)


def test_needles_in_tables_counts_needles_inside_a_table_row():
    needles = {"t": ["beta gamma | 22", "value 7", "alpha"], "tiny": ["Some prose"]}
    # "alpha" lies in a row; "value 7" only in prose ("value" is in the header row, "7" not).
    assert measures.needles_in_tables([TABLE_DOC, _doc(1)], needles) == 2
    fenced = Document("f", "F", "# F\n\n```\n| in code |\n```\n")
    assert measures.needles_in_tables([fenced], {"f": ["in code"]}) == 0  # a code line, no table


# --- PDFs: extraction, cached ----------------------------------------------------------------


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """A running-header PDF of three pages or more, with a needle cut by a page break, one
    inside a page and one not in the document; and its pages as PDFium reads them."""
    path = tmp_path_factory.mktemp("rh") / "tiny.pdf"
    first = typeset(_doc(), "running-header", path)
    cut = page_break_needle(first)
    inside = first.body[1].split("\n")[3]
    needles = [cut, inside, "a needle drawn nowhere"]
    placed = typeset(_doc(), "running-header", path, needles)
    return path, placed, needles, ex.extract(path, "pdfium")


def test_the_running_header_fixture_is_what_the_tests_assume(running):
    _, placed, (cut, inside, nowhere), _ = running
    assert len(placed.pages) >= 3
    assert placed.needles == {cut: (1, 2), inside: (2,), nowhere: ()}
    assert placed.pages[0].split("\n")[:2] == [TITLE, TITLE]  # header, then the heading


def test_extract_cached_reads_the_cache_the_second_time(running, fresh_cache, monkeypatch):
    path, _, _, pdfium = running
    first = nb.extract_cached(path, "pdfium default")
    assert first == pdfium
    assert len(list((fresh_cache / "pdf-text").glob("*.json"))) == 1

    def fail(*args, **kwargs):
        raise AssertionError("extracted again: the cache was not read")

    monkeypatch.setattr(ex, "extract", fail)
    monkeypatch.setattr(pdf_document, "read_pdf", fail)
    assert nb.extract_cached(path, "pdfium default") == first
    with pytest.raises(AssertionError, match="extracted again"):  # another reader: a miss
        nb.extract_cached(path, "pdfium bounded")


def test_extract_cached_with_the_app_reader_has_running_lines_removed(running):
    path, placed, _, _ = running
    app = nb.extract_cached(path, pdfs.APP_READER)
    assert (app.extractor, app.mode) == ("rag-lab", "index")
    assert app.pages == pdf_document.read_pdf(path).pages
    assert len(app.pages) == len(placed.pages)
    for number, page in enumerate(app.pages, start=1):
        lines = [ln.strip() for ln in page.split("\n")]
        assert f"Page {number}" not in lines
        assert lines.count(TITLE) == (number == 1)  # only the first page's heading stays
    assert nb.extract_cached(path, pdfs.APP_READER) == app  # from the cache, the same


def test_extract_all_extracts_what_the_cache_lacks_then_reads_it(tmp_path, monkeypatch):
    docs = [_doc(3, d, f"Doc {d}") for d in ("a", "b")]
    sets = pdfs.typeset_all(docs, {}, tmp_path, layouts=("one-column", "two-column"))
    assert list(sets) == ["one-column", "two-column"]
    assert sets["two-column"].files == {d: tmp_path / "two-column" / f"{d}.pdf" for d in "ab"}
    readers = ("pdfium default", pdfs.APP_READER)
    out = pdfs.extract_all(sets, readers, workers=1)
    assert list(out) == [(lay, r) for lay in sets for r in readers]
    for (layout, reader), by_doc in out.items():
        assert list(by_doc) == ["a", "b"]
        for d, text in by_doc.items():
            want = (
                pdf_document.read_pdf(sets[layout].files[d]).pages
                if reader == pdfs.APP_READER
                else ex.extract(sets[layout].files[d], "pdfium").pages
            )
            assert text.pages == want
            assert f"Doc {d}" in text.pages[0]

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started on a warm cache")

    monkeypatch.setattr(pdfs, "ProcessPoolExecutor", no_pool)
    assert pdfs.extract_all(sets, readers, workers=1) == out


# --- running headers and footers -------------------------------------------------------------


def test_running_spans_are_the_title_at_the_top_and_page_n_at_the_bottom(running):
    _, placed, _, pdfium = running
    text = pdfs.canonical(pdfium.pages)
    spans = measures.running_spans(placed, text)
    n = len(placed.pages)
    assert [text[s:e] for s, e in spans] == [
        line for i in range(1, n + 1) for line in (TITLE, f"Page {i}")
    ]
    starts = [0] + [i + len(pdf_document.PAGE_JOIN) for i, c in enumerate(text) if c == "\f"]
    ends = [i for i, c in enumerate(text) if c == "\f"] + [len(text)]
    for page, (start, end) in enumerate(zip(starts, ends, strict=True)):
        top, bottom = spans[2 * page], spans[2 * page + 1]
        assert top[0] == start  # the page's first line, not page 1's heading below it
        assert text[bottom[1] : end].strip() == ""  # the page's last line


def test_no_running_spans_are_left_once_repeated_lines_are_removed(running):
    _, placed, _, pdfium = running
    kept, removed = ex.remove_repeated_lines([pdfs.canonical([p]) for p in pdfium.pages])
    assert len(removed) == 2 * len(placed.pages)
    text = pdfs.canonical(kept)
    # Page 1 still has its heading, the title once: drawn twice there, so not a running line.
    assert text.split("\n")[0].strip() == TITLE
    assert measures.running_spans(placed, text) == []
    doc = _doc()
    (removed_doc,) = pdfs.extracted_docs([doc], {doc.id: pdfium}, remove_running=True)
    assert removed_doc.text == text and removed_doc.format == "plain"


def test_removal_takes_no_body_line_of_the_running_header_pdf(running):
    _, placed, _, pdfium = running
    assert measures.body_lines_removed({"tiny": placed}, {"tiny": pdfium}) == 0


def test_removal_counts_a_body_line_taken():
    drawn = ("H\nbody one\nPage 1", "H\nbody two\nPage 2", "H\nbody three\nPage 3")
    placed = {"d": _placement(tuple(p.split("\n", 1)[1].rsplit("\n", 1)[0] for p in drawn), drawn)}
    # Page 3 came out without its header; each page's body ends in "same 1", "same 2", …
    # (the same line once digits are read as #), which removal takes as a footer.
    pages = ("H\nbody one\nsame 1\nPage 1", "H\nbody two\nsame 2\nPage 2", "body three\nsame 3")
    by_doc = {"d": ex.PdfText("pdfium", "default", pages)}
    # Removed: H on 1, 2; Page N on 1, 2; "same N" on 1, 2, 3, the body lines taken.
    assert measures.body_lines_removed(placed, by_doc) == 3


def test_removal_reads_a_removed_line_with_other_spacing_as_the_running_line():
    drawn = ("Tiny Tensors\nbody one\nPage 1", "Tiny Tensors\nbody two\nPage 2")
    placed = {"d": _placement(("body one", "body two"), drawn)}
    pages = ("Tiny  Tensors\nbody one\nPage 1", "Tiny Tensors\nbody two\nPage 2")
    assert len(ex.remove_repeated_lines(pages)[1]) == 4  # both headers and footers go
    assert measures.body_lines_removed(placed, {"d": ex.PdfText("pypdf", "layout", pages)}) == 0


def _chunk(doc_id: str, index: int, text: str, content: str, start: int) -> Chunk:
    return Chunk(doc_id, index, text, content, "", start, start + len(content))


@pytest.mark.model
def test_waste_row_counts_carrying_chunks_and_the_word_pieces_of_their_running_lines():
    text = "Tiny Tensors\nthe cat sat\nPage 1"  # lines at 0–12, 13–24, 25–31
    chunks = [
        _chunk("d", 0, text[:24], text[:24], 0),
        _chunk("d", 1, text[25:], text[25:], 25),
        _chunk("e", 0, "the " * 300, "the " * 300, 0),  # 302 word-pieces, 256 embedded
    ]
    spans = {"d": [(0, 12), (25, 31)]}
    row = measures.waste_row(chunks, spans)
    # Word-pieces with [CLS] and [SEP]: "Tiny Tensors\nthe cat sat" 2 + tiny tensor ##s the
    # cat sat = 8; "Page 1" 2 + 2 = 4. The lines wasted: "Tiny Tensors" 3, "Page 1" 2.
    assert row == {
        "chunks": 3,
        "carrying running lines": 2,
        "share of chunks": 2 / 3,
        "word-pieces wasted": 5,
        "share of embedded word-pieces": 5 / (8 + 4 + 256),
    }
    assert 0 < row["share of embedded word-pieces"] < 1


@pytest.mark.model
def test_waste_row_takes_only_the_part_of_a_line_inside_a_chunk():
    text = "the cat sat\nPage 1"
    chunks = [_chunk("d", 0, text[:8], text[:8], 0), _chunk("d", 1, text[8:], text[8:], 8)]
    none = measures.waste_row(chunks, {"d": [(11, 12)], "other": [(0, 8)]})  # ends at no chunk
    assert none["carrying running lines"] == 1 and none["word-pieces wasted"] == 0  # "\n"
    assert measures.waste_row(chunks, {"d": [(8, 8)]})["carrying running lines"] == 0  # empty span
    row = measures.waste_row(chunks, {"d": [(4, 11)]})  # "cat sat" across both chunks
    assert row["carrying running lines"] == 2
    assert row["word-pieces wasted"] == 2  # "cat " in chunk 0, "sat" in chunk 1: 1 + 1


@pytest.mark.model
def test_the_word_piece_counts_read_no_weights(monkeypatch):
    from rag_lab.models import minilm

    def no_weights(*args, **kwargs):
        raise AssertionError("the weights were read")

    monkeypatch.setattr(minilm, "sha256_file", no_weights)
    monkeypatch.setattr(minilm, "minilm_fingerprint", no_weights)
    minilm.word_piece_tokenizer.cache_clear()
    assert minilm.count_word_pieces(["Page 1"]).tolist() == [4]


def _survival_rows(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["layout", "reader", "needles kept", "8-word runs kept"])


def test_best_and_worst_break_ties_by_runs_then_by_reader_order():
    table = _survival_rows(
        [
            ("two-column", "pdfium bounded", 4, 0.7),
            ("two-column", "pypdf layout", 4, 0.7),
            ("one-column", "rag-lab index", 3, 0.9),
            ("one-column", "pypdf default", 5, 0.5),
            ("one-column", "pdfminer default", 3, 0.9),
            ("one-column", "pdfium default", 5, 0.9),
        ]
    )
    got = measures.best_and_worst(table)
    assert list(got) == ["two-column", "one-column"]
    assert got["one-column"] == ("pdfium default", "pdfminer default")
    assert got["two-column"] == ("pypdf layout", "pypdf layout")  # all tied: READERS order


def test_layout_tests_sign_test_per_reader_with_holm():
    needles = {"d": [f"needle number {i} here" for i in range(8)]}
    doc = Document("d", "D", "unused")
    every = "\n".join(needles["d"])

    def texts(text: str) -> dict[str, ex.PdfText]:
        return {"d": ex.PdfText("pdfium", "default", (text,))}

    readers = ("pdfium default", "pdfminer default", "pypdf default")
    extracted = {("one-column", r): texts(every) for r in readers}
    extracted["two-column", "pdfium default"] = texts(every)  # loses none
    extracted["two-column", "pdfminer default"] = texts("\n".join(needles["d"][6:]))  # loses 6
    extracted["two-column", "pypdf default"] = texts("nothing")  # loses all 8
    table = measures.layout_tests([doc], extracted, needles)
    assert list(table.index) == [
        ("two-column", "pypdf default"),  # in READERS order, whatever the order above
        ("two-column", "pdfminer default"),
        ("two-column", "pdfium default"),
    ]
    # Sign tests: 2/2^8, 2/2^6, 1. Holm: 3 × 0.0078 = 0.023, 2 × 0.031 = 0.062, 1.
    assert table["wins"].tolist() == [0, 0, 0] and table["losses"].tolist() == [8, 6, 0]
    assert table["ties"].tolist() == [0, 2, 8]
    assert table["p"].tolist() == pytest.approx([2 / 2**8, 2 / 2**6, 1.0])
    assert table["p Holm"].tolist() == pytest.approx([3 * 2 / 2**8, 2 * 2 / 2**6, 1.0])
    # pdfminer's 6 losses are significant alone (0.031), not after Holm.
    assert table["finding"].tolist() == ["loses needles", "no loss shown", "no loss shown"]
    shown = views.losses_view(table)  # only where a needle differs: pdfium keeps the same 8
    view = shown.frame
    assert list(view.index) == ["two-column", "two-column"]
    assert view["reader"].tolist() == ["pypdf default", "pdfminer default"]
    assert view["needles +/\u2212"].tolist() == ["+0/\u22128", "+0/\u22126"]
    assert view["p"].tolist() == ["0.0078", "0.031"]
    assert view["p Holm"].tolist() == ["0.023", "0.062"]
    assert view["finding"].tolist() == ["loses needles", "no loss shown"]
    assert "Holm over all 3 comparisons; the other 1 keep the same needles" in shown.caption


def test_layout_tests_says_when_a_layout_gains_needles():
    needles = {"d": [f"needle number {i} here" for i in range(6)]}
    extracted = {
        ("one-column", "pypdf default"): {"d": ex.PdfText("pypdf", "default", ("none",))},
        ("tables", "pypdf default"): {
            "d": ex.PdfText("pypdf", "default", (" ".join(needles["d"]),))
        },
    }
    table = measures.layout_tests([Document("d", "D", "")], extracted, needles)
    assert table.loc[("tables", "pypdf default"), "finding"] == "gains needles"  # p = 2/64
    assert views.losses_view(table).frame.loc["tables", "finding"] == "gains needles"


def test_relevance_with_whitespace_folded_finds_a_needle_split_across_lines():
    chunks = [
        _chunk("d", 0, "[D]\nthe answer\nis here", "the answer\nis here", 0),
        _chunk("d", 1, "nothing", "nothing", 20),
        _chunk("d", 2, "and the answer  is here too", "and the answer  is here too", 30),
    ]
    questions = [_question(0, "d", "answer is here"), _question(1, "d", "absent")]
    got = relevant_chunks(chunks, _queries(questions), fold=flat)
    assert got == [{0, 2}, set(), {0, 2}, set()]  # course, course, ticket, ticket
    assert relevant_chunks(chunks, questions, fold=flat) == [{0, 2}, set()]
    assert relevant_chunks(chunks, questions) == [set(), set()]  # unfolded, nothing matches


# --- OCR --------------------------------------------------------------------------------------


def _run() -> measures.OcrRun:
    pages = pd.DataFrame(
        {
            "document": ["a", "a", "b", "b"],
            "page": [1, 2, 1, 2],
            "confidence": [60.0, 75.0, 85.0, 96.0],
        }
    )
    needles = pd.DataFrame(
        {
            "document": ["a", "a", "b", "b", "b"],
            "needle": ["n0", "n1", "n2", "n3", "n4"],
            "kept": [False, True, False, True, True],
            "kept, marks ignored": [True, True, True, True, True],
            "confidence": [60.0, 75.0, 85.0, 96.0, 96.0],
        }
    )
    return measures.OcrRun(pages, needles)


def test_ocr_threshold_table_splits_needles_by_their_pages_confidence():
    table = measures.ocr_threshold_table(_run())
    assert list(table.index) == [70.0, 80.0, 90.0, 95.0]
    assert table["pages flagged"].tolist() == [1, 2, 3, 3]  # 96 is not under 95
    assert table["pages"].tolist() == [4, 4, 4, 4]
    assert table["kept, flagged"].tolist() == [0, 1, 1, 1]
    assert table["needles, flagged"].tolist() == [1, 2, 3, 3]
    assert table["kept, not flagged"].tolist() == [3, 2, 2, 2]
    assert table["needles, not flagged"].tolist() == [4, 3, 2, 2]
    # Fisher's exact test on needles lost, flagged against not: at 70, 1 of 1 lost against
    # 1 of 4; at 90 and 95, 2 of 3 against 0 of 2: p = 0.4 both; at 80, 1 of 2 against 1 of 3.
    assert table["p"].tolist() == pytest.approx([0.4, 1.0, 0.4, 0.4])
    view = views.threshold_view(table).frame
    assert list(view.index) == ["70", "80 (default)", "90", "95"]  # rag-lab index --ocr's 80
    assert view["kept, flagged"].tolist() == ["0/1", "1/2", "1/3", "1/3"]
    assert view["kept, not flagged"].tolist() == ["3/4", "2/3", "2/2", "2/2"]
    assert view["pages flagged"].tolist() == ["1 of 4", "2 of 4", "3 of 4", "3 of 4"]
    assert view["p (Fisher)"].tolist() == ["0.40", "1.0", "0.40", "0.40"]
    none = measures.ocr_threshold_table(_run(), [50.0])
    assert none.iloc[0].tolist() == [0, 4, 3, 5, 0, 0, 1.0]
    assert views.threshold_view(none).frame.iloc[0].tolist() == ["0 of 4", "3/5", "0/0", "1.0"]


def test_a_page_without_words_is_flagged_at_every_threshold_as_the_app_flags_it():
    run = _run()
    run.pages.loc[0, "confidence"] = math.nan  # page a/1: no word found
    run.needles.loc[0, "confidence"] = math.nan  # n0, on it
    table = measures.ocr_threshold_table(run)
    assert table["pages flagged"].tolist() == [1, 2, 3, 3]
    assert table["kept, flagged"].tolist() == [0, 1, 1, 1]
    assert table["needles, flagged"].tolist() == [1, 2, 3, 3]


NEEDLE = "call `foo` now please"


@pytest.fixture
def scanned(tmp_path, monkeypatch):
    """A scanned document whose OCR is stood in for: the needle's backticks read as quotes."""
    pdf = tmp_path / "s.pdf"
    pdf.write_bytes(b"stand-in bytes")
    needles = {NEEDLE: (2,), "first page words": (1,), "lost somewhere": ()}
    placed = Placement("one-column", ("p1", "p2"), ("p1", "p2"), needles)
    read = {
        1: ex.OcrPage("Some first page words.", 91.5, 4),
        2: ex.OcrPage("Before it we\ncall \u2018foo\u2018 now please and more", 88.0, 9),
    }
    monkeypatch.setattr(pdfs, "ocr_cached", lambda path, pages, dpi=150: [read[n] for n in pages])
    return pdfs.Typeset("scanned one-column", {"d": pdf}, {"d": placed})


def test_ocr_run_checks_each_needle_on_its_pages(scanned):
    run = measures.ocr_run(scanned, {"d": [NEEDLE, "first page words"]})
    assert run.pages.to_dict("records") == [
        {"document": "d", "page": 1, "confidence": 91.5},
        {"document": "d", "page": 2, "confidence": 88.0},
    ]
    assert run.needles["kept"].tolist() == [False, True]
    assert run.needles["kept, marks ignored"].tolist() == [True, True]
    assert run.needles["confidence"].tolist() == [88.0, 91.5]


def test_ocr_view_shows_pages_read_and_needles_kept_with_wilson_intervals(scanned):
    run = measures.ocr_run(scanned, {"d": [NEEDLE, "first page words"]})
    (lo1, hi1), (lo2, hi2) = wilson(1, 2), wilson(2, 2)
    shown = views.ocr_view(run, scanned).frame["OCR"].to_dict()
    assert shown == {
        "pages read": "2 of 2",
        "documents read": "1 of 1",
        "page confidence, mean (range)": "89.8 (88.0–91.5)",
        "needles kept verbatim": f"1/2 [{lo1:.3f}, {hi1:.3f}]",
        "needles kept, marks ignored": f"2/2 [{lo2:.3f}, {hi2:.3f}]",
    }


def test_ocr_cached_keeps_a_page_without_words_as_nan(tmp_path, fresh_cache, monkeypatch):
    pdf = tmp_path / "s.pdf"
    pdf.write_bytes(b"stand-in bytes")
    calls = []

    def fake_ocr(path, dpi, pages, workers):
        calls.append(list(pages))
        return [ex.OcrPage("words here", 90.0, 2), ex.OcrPage("", math.nan, 0)]

    monkeypatch.setattr(ex, "tesseract_version", lambda: "5.0.0")
    monkeypatch.setattr(ex, "ocr", fake_ocr)
    first = nb.ocr_cached(pdf, [1, 3])
    again = nb.ocr_cached(pdf, [1, 3])
    assert calls == [[1, 3]]  # the second came from the cache
    for got in (first, again):
        assert got[0] == ex.OcrPage("words here", 90.0, 2)
        assert got[1].text == "" and math.isnan(got[1].confidence) and got[1].words == 0
    assert len(list((fresh_cache / "pdf-text").glob("*.json"))) == 1


# --- verdicts and the reading -----------------------------------------------------------------


def test_extracted_docs_leaves_the_apps_text_as_it_removed_it():
    pages = ("H\nbody one\nPage 1", "H\nbody two\nPage 2")
    docs = [Document("d", "D", "# D\n")]
    for extractor, mode in (("pdfium", "default"), ("rag-lab", "index")):
        by_doc = {"d": ex.PdfText(extractor, mode, pages)}
        (kept,) = pdfs.extracted_docs(docs, by_doc)
        (removed,) = pdfs.extracted_docs(docs, by_doc, remove_running=True)
        assert kept.text == pdfs.canonical(pages) and kept.title == "D"
        want = "body one\f\nbody two" if extractor == "pdfium" else pdfs.canonical(pages)
        assert removed.text == want


# The tables the notebook reads from, made by hand: 4 needles, every reader on one column
# keeps them; on two columns pypdf's layout mode keeps 1; drawn row by row, only pdfminer's
# two modes keep them; with running headers each library loses the cut needle, which


# removal by repetition restores, and the app keeps all four.
N = 4
ROWS_LOST = ("pypdf default", "pypdf layout", "pdfium default", "pdfium bounded", pdfs.APP_READER)


def _kept(layout: str, reader: str) -> int:
    if layout == "two-column" and reader == "pypdf layout":
        return 1
    if layout == "two-column-rows" and reader in ROWS_LOST:
        return 0
    if layout == "running-header" and reader != pdfs.APP_READER:
        return 3
    return N


def _findings(layouts, holm: float = 0.0) -> pd.DataFrame:
    """A :func:`layout_tests` record by hand: a reader keeping fewer needles loses them."""
    return pd.DataFrame(
        [
            {
                "layout": lay,
                "reader": r,
                "p Holm": holm,
                "finding": "loses needles" if _kept(lay, r) < N else "no loss shown",
            }
            for lay in layouts
            for r in pdfs.READERS
        ]
    ).set_index(["layout", "reader"])


def _results(needles_in_tables=0, run=True) -> nb.run.Results:
    """The records the notebook's claims and tables are made from, by hand."""
    layouts = ("one-column", "two-column", "two-column-rows", "running-header")
    kept_table = pd.DataFrame(
        [
            {"layout": lay, "reader": r, "needles kept": _kept(lay, r), "n": N}
            for lay in layouts
            for r in pdfs.READERS
        ]
    )
    removed = kept_table.copy()
    removed.loc[removed["layout"] == "running-header", "needles kept"] = N
    rows_by_reader = pd.DataFrame(
        {"kept": [5, 2], "rows": [5, 5]},
        index=pd.Index(["pypdf default", "pdfminer default"], name="reader"),
    )
    waste = pd.DataFrame(
        {
            "running lines in the text": [6, 6, 0],
            "carrying running lines": [2, 1, 0],
            "share of chunks": [0.5, 0.25, 0.0],
            "share of embedded word-pieces": [0.0123, 0.0061, 0.0],
            "left after removal": [0, 0, math.nan],
            "body lines removed": [0, 0, math.nan],
        },
        index=pd.Index(["pypdf default", "pdfium default", pdfs.APP_READER], name="reader"),
    )
    questions = [_question(i, "d", f"needle {i}") for i in range(8)]
    queries = _queries(questions)
    lost, same = "two-column-rows · pypdf default", "one-column · pdfium default"
    systems = {"Markdown": [1] * 16, lost: [None] * 16, same: [1] * 16}
    read = _run() if run else None
    destroyed = pd.DataFrame(
        {
            "chunks": [10, 12, 11],
            "in the text": [8, 0, 8],
            "destroyed": [0, 8, 1],
        },
        index=pd.Index(["Markdown", lost, same], name="corpus"),
    )
    return nb.run.Results(
        survival=kept_table,
        survival_removed=removed,
        tests=_findings(layouts[1:]),
        rows=rows_by_reader,
        waste=waste,
        needles_in_tables=needles_in_tables,
        destroyed=destroyed,
        systems=systems,
        loss=loss_table(systems, queries),
        queries=queries,
        text_layer=pd.Series([0, 0], name="characters"),
        run=read,
        thresholds=measures.ocr_threshold_table(read) if run else None,
    )


def test_the_loss_table_pairs_each_corpus_with_the_clean_one_by_question():
    loss = _results().loss
    worse, none = Finding.B_BETTER, Finding.NONE
    assert loss["difference"].tolist() == [worse, worse, none, none]
    assert loss["q losses"].tolist() == [8, 8, 0, 0] and loss["q wins"].tolist() == [0] * 4
    assert loss["p Holm"].tolist() == pytest.approx([4 * 2 / 2**8, 4 * 2 / 2**8, 1.0, 1.0])
    assert loss["a − b"].tolist() == [-1.0, -1.0, 0.0, 0.0]  # every question lost, or none
    assert loss["lo"][0] <= -1.0 < loss["hi"][0] < 0
    at4, at20 = views.loss_views(loss)  # one table per k, a row per corpus
    assert at4.frame.index.tolist() == at20.frame.index.tolist() == list(dict.fromkeys(loss["a"]))
    assert at4.frame["finding"].tolist() == ["worse", "–"]  # +0/−8, Holm 4 × 0.0078
    assert at20.frame["questions"].tolist() == ["+0/\u22128", "+0/\u22120"]
    assert at4.frame["R@4: a − b"].iloc[0] == f"-1.000 [{loss['lo'][0]:+.3f}, {loss['hi'][0]:+.3f}]"
    assert "t over questions, two pseudo-questions" in at4.caption  # the method computed


def test_with_no_tesseract_the_scans_claim_is_not_measured():
    scans = nb.run.chapter_claims(_results(run=False))[4]
    assert scans.verdict is Verdict.NOT_MEASURED and scans.here == (
        "0 characters from any of the 2 readers"
    )
    assert "Tesseract is not installed" in scans.reason


@pytest.mark.parametrize(
    ("losing", "verdict", "text"),
    [
        (0, Verdict.CONTRADICTED, "no reader loses needles against one column"),
        (7, Verdict.REPRODUCES, "7 of 7 readers lose needles against one column: "),
        (2, Verdict.REPRODUCES, "2 of 7 readers lose needles against one column: "),
    ],
)
def test_an_interleaving_claim_holds_for_the_readers_that_lose_needles(losing, verdict, text):
    lose, keep = "loses needles", "no loss shown"
    findings = [lose] * losing + [keep] * (7 - losing)
    tests = pd.DataFrame(
        {"layout": "two-column", "reader": pdfs.READERS, "finding": findings}
    ).set_index(["layout", "reader"])
    claim = run._interleave(dataclasses.replace(_results(), tests=tests), "two-column")
    assert claim.verdict is verdict and claim.here.startswith(text)
    assert claim.claim == "interleave:two-column" and claim.reason == declared(claim.claim).rule


def test_the_claims_count_on_the_records():
    entries = {e.claim: e for e in nb.run.chapter_claims(_results())}
    assert list(entries) == [
        "interleave:two-column",
        "interleave:two-column-rows",
        "word-soup",
        "running-headers",
        "scans",
        "symptom",
    ]
    verdicts = [e.verdict for e in entries.values()]
    assert verdicts == [Verdict.REPRODUCES] * 3 + [Verdict.CONTRADICTED] + [Verdict.REPRODUCES] * 2
    assert entries["interleave:two-column"].here == (
        "1 of 7 readers lose needles against one column: pypdf layout"
    )
    assert entries["interleave:two-column-rows"].here.startswith(
        f"{len(ROWS_LOST)} of 7 readers lose needles"
    )
    assert entries["word-soup"].here == (
        "1 of 2 readers scatter rows; rows with cells in order: pypdf default 5/5, "
        "pdfminer default 2/5; needles inside tables: 0"
    )
    # A quarter to a half of the libraries' chunks carry one (the app left out), not every one.
    assert entries["running-headers"].here == (
        "25.0%–50.0% of chunks carry one; 1.23% of embedded word-pieces at most"
    )
    assert entries["scans"].here == (
        "0 characters from any of the 2 readers; OCR: mean page confidence 79.0, "
        "needles 3/5 verbatim"
    )
    # one corpus worse at both cut-offs is one corpus, not two comparisons
    assert entries["symptom"].here == (
        "1 of 2 extracted corpora worse than the clean Markdown at some k (by question, Holm): "
        "two-column-rows · pypdf default; 1 with no difference shown at any k"
    )
    for e in entries.values():
        assert (e.statement, e.reason) == (declared(e.claim).statement, declared(e.claim).rule)


# --- the tables over a running-header PDF -------------------------------------------------------


def _rh_sets(running) -> dict[str, pdfs.Typeset]:
    path, placed, _, _ = running
    return {"running-header": pdfs.Typeset("running-header", {"tiny": path}, {"tiny": placed})}


def _rh_extracted(running) -> dict[tuple[str, str], dict[str, ex.PdfText]]:
    path, _, _, pdfium = running
    app = nb.extract_cached(path, pdfs.APP_READER)
    return {
        ("running-header", "pdfium default"): {"tiny": pdfium},
        ("running-header", pdfs.APP_READER): {"tiny": app},
    }


def test_layout_view_counts_pages_and_needles_cut_by_a_page_break(running):
    row = views.layout_view(_rh_sets(running)).frame.loc["running-header"].to_dict()
    assert row == {
        "documents": 1,
        "pages": len(running[1].pages),
        "needles placed": "2 of 3",
        "cut by a page break": 1,
        "characters drawn as ?": 0,
    }


def test_survival_table_on_the_running_header_pdf(running):
    _, _, needles, _ = running
    sets, extracted, docs = _rh_sets(running), _rh_extracted(running), [_doc()]
    raw = measures.survival_table(docs, sets, extracted, {"tiny": needles}).set_index("reader")
    removed = measures.survival_table(docs, sets, extracted, {"tiny": needles}, remove_running=True)
    removed = removed.set_index("reader")
    # PDFium loses the cut needle until the running lines go; the app removed them itself.
    assert raw["needles kept"].to_dict() == {"pdfium default": 1, pdfs.APP_READER: 2}
    assert removed["needles kept"].to_dict() == {"pdfium default": 2, pdfs.APP_READER: 2}
    assert raw["n"].tolist() == [3, 3]
    # PDFium loses the cut needle (the footer and the next header lie between its halves)
    # and the one drawn nowhere; the app, which removed the running lines, only that one.
    assert (raw["n"] - raw["needles kept"]).to_dict() == {"pdfium default": 2, pdfs.APP_READER: 1}
    assert raw["lost, cut by a page break"].to_dict() == {"pdfium default": 1, pdfs.APP_READER: 0}
    assert removed["lost, cut by a page break"].tolist() == [0, 0]
    assert (raw["8-word runs kept"] > 0.9).all()
    kept_, runs = views.kept_views(
        measures.survival_table(docs, sets, extracted, {"tiny": needles})
    )
    assert kept_.frame.loc["pdfium default", "running-header"] == "1/3"
    assert kept_.frame.loc[pdfs.APP_READER, "running-header"] == "2/3"
    assert list(runs.frame.columns) == ["running-header"]
    none = measures.survival_table(docs, sets, extracted, {"tiny": needles}, layouts=["tables"])
    assert none.empty


@pytest.mark.model
def test_waste_table_on_the_running_header_pdf(running):
    pages = len(running[1].pages)
    table = measures.waste_table([_doc()], _rh_sets(running), _rh_extracted(running))
    pdfium, app = table.loc["pdfium default"], table.loc[pdfs.APP_READER]
    assert pdfium["running lines in the text"] == 2 * pages
    assert pdfium["left after removal"] == 0 and pdfium["body lines removed"] == 0
    assert 0 < pdfium["carrying running lines"] < pdfium["chunks"]
    assert 0 < pdfium["share of embedded word-pieces"] < 1
    assert app["running lines in the text"] == 0 and app["carrying running lines"] == 0
    assert math.isnan(app["left after removal"]) and math.isnan(app["body lines removed"])


def test_rows_table_on_the_tables_layout(tmp_path):
    doc = TABLE_DOC
    path = tmp_path / "t.pdf"
    typeset(doc, "tables", path)
    extracted = {
        ("tables", "pdfium default"): {"t": ex.extract(path, "pdfium")},
        ("one-column", "pdfium default"): {"t": ex.PdfText("pdfium", "default", ("",))},
    }
    table = measures.rows_table([doc], extracted)
    assert list(table.index) == ["pdfium default"]
    assert table.loc["pdfium default", ["kept", "rows"]].tolist() == [3, 3]
    assert table.loc["pdfium default", "tables"] == 1
    assert views.rows_view(table).frame.loc["pdfium default"].tolist() == [
        f"3/3 [{wilson(3, 3)[0]:.3f}, 1.000]",
        1,
    ]
    assert measures.table_of_rows([_doc(1), doc]) == ("t", ("alpha", "1"))
    with pytest.raises(ValueError, match="no document has a table"):
        measures.table_of_rows([_doc(1)])


# --- the tables and figures the notebook shows ------------------------------------------------


def _survival_with_runs() -> pd.DataFrame:
    survival = _results().survival
    return survival.assign(**{"8-word runs kept": survival["needles kept"] / N})


def test_kept_views_read_reader_by_layout():
    survival = _survival_with_runs()
    kept_, runs = views.kept_views(survival)
    assert kept_.frame.loc["pypdf layout", "two-column"] == "1/4"
    assert runs.frame.loc["pypdf layout", "two-column"] == "0.250"
    assert list(kept_.frame.index) == list(pdfs.READERS)  # a row per reader
    assert list(kept_.frame.columns) == [
        "one-column",
        "two-column",
        "two-column-rows",
        "running-header",
    ]


def test_waste_views_put_counts_beside_their_shares():
    waste = pd.DataFrame(
        {
            "running lines in the text": [184, 0],
            "chunks": [730, 922],
            "carrying running lines": [112, 0],
            "share of chunks": [112 / 730, 0.0],
            "word-pieces wasted": [490, 0],
            "share of embedded word-pieces": [0.0054, 0.0],
            "left after removal": [0, math.nan],
            "body lines removed": [2, math.nan],
        },
        index=pd.Index(["pypdf default", pdfs.APP_READER], name="reader"),
    )
    survival = pd.DataFrame(
        {
            "layout": ["running-header"] * 2 + ["one-column"],
            "reader": ["pypdf default", pdfs.APP_READER, "pypdf default"],
            "needles kept": [29, 32, 30],
            "n": [32, 32, 32],
        }
    )
    survival["lost, cut by a page break"] = [3, 0, 0]
    removed = survival.iloc[:2].assign(**{"needles kept": [32, 32]})
    results = dataclasses.replace(
        _results(), waste=waste, survival=survival, survival_removed=removed
    )
    cost, removal = views.waste_views(results)
    assert cost.frame.loc["pypdf default", "chunks carrying one"] == "112 of 730 (15.3%)"
    assert cost.frame.loc["pypdf default", "word-pieces they take"] == "490 (0.54%)"
    assert removal.frame.loc["pypdf default"].tolist() == ["29/32", "32/32", "3 of 3", "0", "2"]
    assert removal.frame.loc[pdfs.APP_READER].tolist() == ["32/32", "32/32", "0 of 0", "–", "–"]


def test_the_mitigation_view_sets_each_mitigation_against_its_own_corpus():
    survival = _survival_with_runs()
    rh, rows = "running-header · pypdf default", "two-column-rows"
    hit, miss = [1] * 16, [None] * 16
    systems = {
        "Markdown": hit,
        rh: [None] * 8 + [1] * 8,
        f"{rh} · running lines removed": hit,
        f"{rows} · pdfminer default": hit,
        f"{rows} · pdfium default": miss,
    }
    results = dataclasses.replace(_results(), survival=survival, systems=systems)
    record = mitigations(results)
    assert record.loc[("remove running lines", 4), ["without", "with"]].tolist() == [0.5, 1.0]
    test = record.loc[("remove running lines", 4), "test"]
    assert (test.wins, test.losses) == (8, 0) and test.p == pytest.approx(2 / 2**8)
    r = views.mitigation_view(results).frame
    # Without removal every course query misses and every ticket query hits: each of the 8
    # questions does better with it, a sign test of 2 / 2^8.
    assert r.loc["remove running lines", "R@4"] == "0.500 → 1.000"
    assert r.loc["remove running lines", "R@4 by question"] == "+8/\u22120, p = 0.0078"
    assert r.loc["layout analysis", "R@20"] == "0.000 → 1.000"
    assert r.loc["OCR (Tesseract)"].tolist() == ["–", "not measured"] * 2
    no_ocr = dataclasses.replace(results, run=None, thresholds=None)
    assert list(views.mitigation_view(no_ocr).frame.index) == [
        "remove running lines",
        "layout analysis",
    ]


def test_the_misses_show_the_needle_above_what_ocr_read(scanned):
    read = measures.ocr_run(scanned, {"d": [NEEDLE, "first page words"]})
    assert views.misses_text(read).splitlines() == [
        "d (marks ignored: kept)",
        f"  needle   {NEEDLE}",
        "  OCR read call \u2018foo\u2018 now please",
    ]


def test_what_rag_lab_index_says_of_a_scan_and_of_a_pdf_with_text(running, tmp_path):
    path = running[0]
    ts.scan(path, tmp_path / "scan.pdf", dpi=30)
    files = {"tiny": path, "scan": tmp_path / "scan.pdf"}
    refusals = measures.app_refusals(pdfs.Typeset("scanned", files, {}))
    read, failed = refusals.index
    assert read == "read (it has text)" and failed.startswith(f"failed: {pdf_document.NO_TEXT}")
    assert refusals["scans"].tolist() == [1, 1]
    assert refusals["of"].tolist() == [2, 2]
    said = views.refusals_view(refusals)
    assert said.frame["scans"].tolist() == ["1 of 2", "1 of 2"]


def test_the_corpora_left_out_as_the_same_text():
    same = {"two-column-rows · pypdf layout": "two-column · pypdf layout"}
    assert views.left_out_view(same).frame["the same text as"].to_dict() == same


def test_the_destroyed_table_sets_each_corpus_beside_its_recall():
    results = _results()
    frame = views.destroyed_view(results.destroyed, results.systems).frame
    # chunks, needles in the text, destroyed, R@4, R@20
    assert frame.loc["Markdown"].tolist() == [10, 8, 0, 1.0, 1.0]
    assert frame.loc["two-column-rows · pypdf default"].tolist() == [12, 0, 8, 0.0, 0.0]


def test_the_loss_tables_name_the_removal_corpus_short():
    removed = "running-header · pypdf default · running lines removed"
    systems = {"Markdown": [1] * 16, removed: [None] * 8 + [1] * 8}
    queries = _queries([_question(i, "d", f"needle {i}") for i in range(8)])
    at4, _ = views.loss_views(loss_table(systems, queries))
    assert at4.frame.index.tolist() == ["running-header · pypdf default · lines removed"]
