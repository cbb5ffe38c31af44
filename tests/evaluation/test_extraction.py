"""The extraction suite (notebook 11's measures) on tiny documents and PDFs made in the test.

No corpus, no encoder: documents are built here, PDFs typeset into ``tmp_path`` with known
ground truth (:func:`rag_lab.sources.pdf.typeset.typeset`), and the cache is pointed at
``tmp_path`` so that no test reads what an earlier run left. The word-piece counts of
:func:`~rag_lab.evaluation.extraction.waste_row` load the packaged tokenizer only
(``tokenizer.json``, no weights), marked ``model`` as the other tokenizer tests are.
"""

from __future__ import annotations

import math
import string
from types import SimpleNamespace

import pandas as pd
import pytest
from hand_counted import ocr_records

from rag_lab.chunking import Chunk
from rag_lab.documents import Document
from rag_lab.evaluation import extraction as measures
from rag_lab.evaluation import extraction_pdfs as pdfs
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


def _text(text: str, extractor: str = "pdfium") -> ex.PdfText:
    return ex.PdfText(extractor, "index" if extractor == "rag-lab" else "default", (text,))


# --- text normalisation ----------------------------------------------------------------------


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


def test_the_cache_keys_on_each_readers_library_and_the_apps_reader_version(monkeypatch):
    versions = pdfs.library_versions()
    assert list(versions) == [*ex.EXTRACTORS, "rag-lab"]
    assert versions["rag-lab"] == f"reader {pdf_document.READER_VERSION}, {versions['pdfium']}"
    monkeypatch.setattr(pdf_document, "READER_VERSION", "next")  # a new reader: a new key
    assert pdfs.library_versions()["rag-lab"] != versions["rag-lab"]


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


def test_extracted_docs_leaves_the_apps_text_as_it_removed_it():
    pages = ("H\nbody one\nPage 1", "H\nbody two\nPage 2")
    docs = [Document("d", "D", "# D\n")]
    for extractor, mode in (("pdfium", "default"), ("rag-lab", "index")):
        by_doc = {"d": ex.PdfText(extractor, mode, pages)}
        (kept,) = pdfs.extracted_docs(docs, by_doc)
        (removed,) = pdfs.extracted_docs(docs, by_doc, remove_running=True)
        assert kept.text == pdfs.canonical(pages) and kept.title == "D"
        want = "body one\f\nbody two" if extractor == "pdfium" else pdfs.canonical(pages)
        assert removed.text == want and removed.format == "plain"


# --- needles, runs and table rows --------------------------------------------------------------

NEEDLES = {"d1": ["alpha beta", "gamma  delta"], "d2": ["`x` is one"]}


def test_kept_vector_normalises_whitespace_and_follows_fold():
    texts = {"d1": "alpha\nbeta and gamma delta", "d2": "\u2018x\u2018 is one"}
    assert measures.kept_vector(NEEDLES, texts).tolist() == [True, True, False]  # the ` is lost
    got = measures.kept_vector(NEEDLES, {"d1": "alpha beta", "d2": ""})
    assert got.dtype == bool and got.tolist() == [True, False, False]


def _placement(body: tuple[str, ...], pages: tuple[str, ...] | None = None, needles=None):
    return Placement("one-column", pages or body, body, needles or {})


def test_runs_kept_counts_eight_word_runs_in_order():
    line1, line2 = "w1 w2 w3 w4 w5", "w6 w7 w8 w9 w10"
    placed = {"d": _placement((f"{line1}\n{line2}",))}
    # 10 words: 3 runs of 8. Identical text (however wrapped) keeps all of them.
    assert measures.runs_kept(placed, {"d": f"{line1} {line2}"}) == 1.0
    assert measures.runs_kept(placed, {"d": f"{line1}\n\f\n{line2}"}) == 1.0
    # The two lines swapped: w6..w10 w1..w5 has none of w1..w8, w2..w9, w3..w10.
    assert measures.runs_kept(placed, {"d": f"{line2} {line1}"}) == 0.0
    # One word dropped in the middle (w5): every run spans it.
    assert measures.runs_kept(placed, {"d": "w1 w2 w3 w4 w6 w7 w8 w9 w10"}) == 0.0
    # w10 dropped: w1..w8 and w2..w9 kept, w3..w10 lost.
    assert measures.runs_kept(placed, {"d": "w1 w2 w3 w4 w5 w6 w7 w8 w9"}) == pytest.approx(2 / 3)


def test_runs_kept_pools_runs_over_documents():
    placed = {"a": _placement((" ".join(f"a{i}" for i in range(9)),)), "b": _placement(("b " * 8,))}
    # a: 2 runs, kept; b: 8 equal words, one distinct run, lost: 2 of 3.
    got = measures.runs_kept(placed, {"a": " ".join(f"a{i}" for i in range(9)), "b": ""})
    assert got == pytest.approx(2 / 3)


TABLE_DOC = Document(
    "t",
    "T",
    "# T\n\nIntro with value 7 in it.\n\n| name | value |\n|:--|--:|\n| alpha | 1 |\n"
    "| beta gamma | 22 |\n\nAfter the table.\n",
)


def test_rows_table_finds_rows_whose_cells_come_out_in_order():
    # The header row and two data rows, the rule row left out.
    extracted = {
        ("tables", "pdfium default"): {"t": _text("name value\nalpha 1\nbeta\ngamma 22")},
        ("tables", "pypdf default"): {"t": _text("name alpha value 1 beta gamma 22", "pypdf")},
        ("one-column", "pdfium default"): {"t": _text("")},  # another layout: not counted
    }
    table = measures.rows_table([TABLE_DOC], extracted)
    assert list(table.index) == ["pdfium default", "pypdf default"]
    assert table["kept"].tolist() == [3, 1] and table["rows"].tolist() == [3, 3]
    assert table["tables"].tolist() == [1, 1]
    assert table.loc["pypdf default", ["lo", "hi"]].tolist() == pytest.approx(wilson(1, 3))


def test_rows_table_on_the_tables_layout(tmp_path):
    typeset(TABLE_DOC, "tables", tmp_path / "t.pdf")
    extracted = {("tables", "pdfium default"): {"t": ex.extract(tmp_path / "t.pdf", "pdfium")}}
    table = measures.rows_table([TABLE_DOC], extracted)
    assert table.loc["pdfium default", ["kept", "rows", "tables"]].tolist() == [3, 3, 1]


def test_needles_in_tables_counts_needles_inside_a_table_row():
    needles = {"t": ["beta gamma | 22", "value 7", "alpha"], "tiny": ["Some prose"]}
    # "alpha" lies in a row; "value 7" only in prose ("value" is in the header row, "7" not).
    assert measures.needles_in_tables([TABLE_DOC, _doc(1)], needles) == 2
    fenced = Document("f", "F", "# F\n\n```\n| in code |\n```\n")
    assert measures.needles_in_tables([fenced], {"f": ["in code"]}) == 0  # a code line, no table


# --- survival and the sign tests against one column --------------------------------------------


def _layout_sets(needles: list[str], layouts=("one-column", "two-column")):
    body = ("\n".join(needles),)
    placed = {"d": Placement("x", body, body, {n: (1,) for n in needles})}
    return {lay: pdfs.Typeset(lay, {"d": f"{lay}.pdf"}, placed) for lay in layouts}


def test_survival_table_sign_tests_each_layout_against_one_column_with_holm():
    needles = [f"needle number {i} here" for i in range(8)]
    every = "\n".join(needles)
    readers = ("pypdf default", "pdfminer default", "pdfium default")
    extracted = {("one-column", r): {"d": _text(every)} for r in readers}
    extracted["two-column", "pypdf default"] = {"d": _text("nothing")}  # loses all 8
    extracted["two-column", "pdfminer default"] = {"d": _text("\n".join(needles[6:]))}  # loses 6
    extracted["two-column", "pdfium default"] = {"d": _text(every)}  # loses none
    docs = [Document("d", "D", "unused")]
    table = measures.survival_table(docs, _layout_sets(needles), extracted, {"d": needles})
    assert table["needles kept"].tolist() == [8, 8, 8, 0, 2, 8] and set(table["n"]) == {8}
    tested = table[table["layout"] == "two-column"]
    assert tested["wins"].tolist() == [0, 0, 0] and tested["losses"].tolist() == [8, 6, 0]
    # Sign tests: 2/2^8, 2/2^6, 1. Holm: 3 × 0.0078 = 0.023, 2 × 0.031 = 0.062, 1.
    assert tested["p"].tolist() == pytest.approx([2 / 2**8, 2 / 2**6, 1.0])
    assert tested["p Holm"].tolist() == pytest.approx([3 * 2 / 2**8, 2 * 2 / 2**6, 1.0])
    # pdfminer's 6 losses are significant alone (0.031), not after Holm.
    assert tested["finding"].tolist() == ["loses needles", "no loss shown", "no loss shown"]
    assert table[table["layout"] == "one-column"]["p Holm"].isna().all()  # not tested


def test_survival_table_says_when_a_layout_gains_needles():
    needles = [f"needle number {i} here" for i in range(6)]
    extracted = {
        ("one-column", "pypdf default"): {"d": _text("none", "pypdf")},
        ("tables", "pypdf default"): {"d": _text(" ".join(needles), "pypdf")},
    }
    sets = _layout_sets(needles, ("one-column", "tables"))
    table = measures.survival_table([Document("d", "D", "")], sets, extracted, {"d": needles})
    assert table["finding"].tolist()[1] == "gains needles"  # p = 2/64


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


def test_relevance_with_whitespace_folded_finds_a_needle_split_across_lines():
    chunks = [
        _chunk("d", 0, "[D]\nthe answer\nis here", "the answer\nis here", 0),
        _chunk("d", 1, "nothing", "nothing", 20),
        _chunk("d", 2, "and the answer  is here too", "and the answer  is here too", 30),
    ]
    questions = [_question(0, "d", "answer is here"), _question(1, "d", "absent")]
    got = relevant_chunks(chunks, _queries(questions), fold=flat)
    assert got == [{0, 2}, set(), {0, 2}, set()]  # course, course, ticket, ticket
    assert relevant_chunks(chunks, questions) == [set(), set()]  # unfolded, nothing matches


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
    first = pdfs.extract_cached(path, "pdfium default")
    assert first == pdfium
    assert len(list((fresh_cache / "pdf-text").glob("*.json"))) == 1

    def fail(*args, **kwargs):
        raise AssertionError("extracted again: the cache was not read")

    monkeypatch.setattr(ex, "extract", fail)
    monkeypatch.setattr(pdf_document, "read_pdf", fail)
    assert pdfs.extract_cached(path, "pdfium default") == first
    with pytest.raises(AssertionError, match="extracted again"):  # another reader: a miss
        pdfs.extract_cached(path, "pdfium bounded")


def test_extract_cached_with_the_app_reader_has_running_lines_removed(running):
    path, placed, _, _ = running
    app = pdfs.extract_cached(path, pdfs.APP_READER)
    assert (app.extractor, app.mode) == ("rag-lab", "index")
    assert app.pages == pdf_document.read_pdf(path).pages
    assert len(app.pages) == len(placed.pages)
    for number, page in enumerate(app.pages, start=1):
        lines = [ln.strip() for ln in page.split("\n")]
        assert f"Page {number}" not in lines
        assert lines.count(TITLE) == (number == 1)  # only the first page's heading stays
    assert pdfs.extract_cached(path, pdfs.APP_READER) == app  # from the cache, the same


def test_extract_all_extracts_what_the_cache_lacks_then_reads_it(tmp_path, monkeypatch):
    docs = [_doc(3, d, f"Doc {d}") for d in ("a", "b")]
    sets = pdfs.typeset_all(docs, {}, tmp_path)
    assert list(sets) == list(ts.LAYOUTS)
    assert sets["two-column"].files == {d: tmp_path / "two-column" / f"{d}.pdf" for d in "ab"}
    sets = {lay: sets[lay] for lay in ("one-column", "two-column")}
    readers = ("pdfium default", pdfs.APP_READER)
    out = pdfs.extract_all(sets, readers)
    assert list(out) == [(lay, r) for lay in sets for r in readers]
    for (layout, reader), by_doc in out.items():
        assert list(by_doc) == ["a", "b"]
        for d, text in by_doc.items():
            want = (
                pdf_document.read_pdf(sets[layout].files[d]).pages
                if reader == pdfs.APP_READER
                else ex.extract(sets[layout].files[d], "pdfium").pages
            )
            assert text.pages == want and f"Doc {d}" in text.pages[0]

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started on a warm cache")

    monkeypatch.setattr(pdfs, "ProcessPoolExecutor", no_pool)
    assert pdfs.extract_all(sets, readers) == out


def test_layout_table_counts_pages_and_needles_cut_by_a_page_break(running):
    path, placed, _, _ = running
    sets = {"running-header": pdfs.Typeset("running-header", {"tiny": path}, {"tiny": placed})}
    assert measures.layout_table(sets).loc["running-header"].tolist() == [
        1,  # documents
        len(placed.pages),
        3,  # needles
        2,  # placed: one is drawn nowhere
        1,  # cut by a page break
        0,  # drawn as ?
    ]


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
    assert removed_doc.text == text


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
    # Word-pieces with [CLS] and [SEP]: "Tiny Tensors\nthe cat sat" 2 + tiny tensor ##s the
    # cat sat = 8; "Page 1" 2 + 2 = 4. The lines wasted: "Tiny Tensors" 3, "Page 1" 2.
    assert measures.waste_row(chunks, {"d": [(0, 12), (25, 31)]}) == {
        "chunks": 3,
        "carrying one": 2,
        "word-pieces wasted": 5,
        "word-pieces embedded": 8 + 4 + 256,
    }


@pytest.mark.model
def test_waste_row_takes_only_the_part_of_a_line_inside_a_chunk():
    text = "the cat sat\nPage 1"
    chunks = [_chunk("d", 0, text[:8], text[:8], 0), _chunk("d", 1, text[8:], text[8:], 8)]
    none = measures.waste_row(chunks, {"d": [(11, 12)], "other": [(0, 8)]})  # ends at no chunk
    assert none["carrying one"] == 1 and none["word-pieces wasted"] == 0  # "\n"
    assert measures.waste_row(chunks, {"d": [(8, 8)]})["carrying one"] == 0  # empty span
    row = measures.waste_row(chunks, {"d": [(4, 11)]})  # "cat sat" across both chunks
    assert row["carrying one"] == 2
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


@pytest.mark.model
def test_running_tables_on_the_running_header_pdf(running):
    path, placed, needles, pdfium = running
    sets = {"running-header": pdfs.Typeset("running-header", {"tiny": path}, {"tiny": placed})}
    extracted = {
        ("running-header", "pdfium default"): {"tiny": pdfium},
        ("running-header", pdfs.APP_READER): {"tiny": pdfs.extract_cached(path, pdfs.APP_READER)},
    }
    cost, removal = measures.running_tables([_doc()], sets, extracted, {"tiny": needles})
    pdfium_cost, app = cost.loc["pdfium default"], cost.loc[pdfs.APP_READER]
    assert pdfium_cost["running lines"] == 2 * len(placed.pages)
    assert 0 < pdfium_cost["carrying one"] < pdfium_cost["chunks"]
    assert 0 < pdfium_cost["word-pieces wasted"] < pdfium_cost["word-pieces embedded"]
    assert app["running lines"] == 0 and app["carrying one"] == app["word-pieces wasted"] == 0
    # PDFium loses the cut needle (the footer and the next header lie between its halves)
    # and the one drawn nowhere; removal brings the cut one back. The app has no row.
    assert list(removal.index) == ["pdfium default"]
    assert removal.loc["pdfium default"].tolist() == [1, 1, 2, 0, 0]


# --- retrieval over the extracted text ----------------------------------------------------------


def test_the_destroyed_table_sets_each_corpus_beside_its_recall():
    doc = Document("d", "D", "the needle here")
    questions = [_question(i, "d", "the needle") for i in range(2)]
    whole, split = (
        _chunk("d", 0, "the needle here", "the needle here", 0),
        _chunk("d", 0, "the", "the", 0),
    )
    lab = SimpleNamespace(
        docs=[doc], qset=SimpleNamespace(questions=questions), chunks_by={"E": [whole]}
    )
    measured = {"cut": ([doc], [split, _chunk("d", 1, "needle here", "needle here", 4)])}
    systems = {"Markdown": [1, 1, 1, 1], "cut": [None, 30, 3, None]}
    table = measures.destroyed_table(lab, measured, systems)
    # chunks, needles in the text, destroyed, R@4, R@20
    assert table.loc["Markdown"].tolist() == [1, 2, 0, 1.0, 1.0]
    assert table.loc["cut"].tolist() == [2, 2, 2, 0.25, 0.25]


def test_mitigations_set_each_corpus_without_against_with_it_by_question():
    ids = [q.question.id for q in _queries([_question(i, "d", "n") for i in range(8)])]
    systems = {"rh": [None] * 8 + [1] * 8, "rh removed": [1] * 16, "rows": [None] * 16}
    pairs = {"remove running lines": ("rh", "rh removed"), "layout analysis": ("rows", "rh")}
    table = measures.mitigations(systems, pairs, ids).set_index(["mitigation", "k"])
    assert table.loc[("remove running lines", 4), ["without", "with"]].tolist() == [0.5, 1.0]
    # Without removal every course query misses and every ticket query hits: each of the 8
    # questions does better with it, a sign test of 2 / 2^8.
    test = table.loc[("remove running lines", 4), "with over without, by question"]
    assert (test.wins, test.losses) == (8, 0) and test.p == pytest.approx(2 / 2**8)
    assert table.loc[("layout analysis", 20), ["without", "with"]].tolist() == [0.0, 0.5]


# --- OCR --------------------------------------------------------------------------------------


def test_ocr_threshold_table_splits_needles_by_their_pages_confidence():
    table = measures.ocr_threshold_table(*ocr_records())
    assert list(table.index) == [70, 80, 90, 95]
    assert table["default"].tolist() == [False, True, False, False]  # rag-lab index --ocr's
    assert table["pages flagged"].tolist() == [1, 2, 3, 3]  # 96 is not under 95
    assert table["kept flagged"].tolist() == [0, 1, 1, 1]
    assert table["of all"].tolist() == [1, 2, 3, 3]
    assert table["kept unflagged"].tolist() == [3, 2, 2, 2]
    assert table["of"].tolist() == [4, 3, 2, 2]
    # Fisher's exact test on needles lost, flagged against not: at 70, 1 of 1 lost against
    # 1 of 4; at 90 and 95, 2 of 3 against 0 of 2: p = 0.4 both; at 80, 1 of 2 against 1 of 3.
    assert table["p"].tolist() == pytest.approx([0.4, 1.0, 0.4, 0.4])


def test_a_page_without_words_is_flagged_at_every_threshold_as_the_app_flags_it():
    pages, needles = ocr_records()
    pages.loc[0, "confidence"] = math.nan  # page a/1: no word found
    needles.loc[0, "confidence"] = math.nan  # n0, on it
    table = measures.ocr_threshold_table(pages, needles)
    assert table["pages flagged"].tolist() == [1, 2, 3, 3]
    assert table["kept flagged"].tolist() == [0, 1, 1, 1]
    assert table["of all"].tolist() == [1, 2, 3, 3]


NEEDLE = "call `foo` now please"


@pytest.fixture
def scanned(tmp_path, monkeypatch):
    """A scanned document whose OCR is stood in for: the needle's backticks read as quotes."""
    pdf = tmp_path / "s.pdf"
    pdf.write_bytes(b"stand-in bytes")
    needles = {NEEDLE: (2,), "first page words": (1,), "lost somewhere": ()}
    placed = Placement("one-column", ("p1", "p2", "p3"), ("p1", "p2", "p3"), needles)
    nothing = Placement("one-column", ("q1",), ("q1",), {})
    read = {
        1: ex.OcrPage("Some first page words.", 91.5, 4),
        2: ex.OcrPage("Before it we\ncall \u2018foo\u2018 now please and more", 88.0, 9),
    }
    monkeypatch.setattr(pdfs, "ocr_cached", lambda path, pages, dpi=150: [read[n] for n in pages])
    return pdfs.Typeset("scanned", {"d": pdf, "e": pdf}, {"d": placed, "e": nothing})


def test_ocr_run_checks_each_needle_on_its_pages(scanned):
    pages, needles = measures.ocr_run(scanned, {"d": [NEEDLE, "first page words"]})
    assert pages.values.tolist() == [["d", 1, 91.5], ["d", 2, 88.0]]  # "e" holds no needle
    assert needles["kept"].tolist() == [False, True]
    assert needles["kept, marks ignored"].tolist() == [True, True]
    assert needles["confidence"].tolist() == [88.0, 91.5]
    read, kept = measures.ocr_tables(scanned, pages, needles)
    # pages read of all, documents read of all, mean, lowest and highest confidence
    assert read.iloc[0].tolist() == [2, 4, 1, 2, pytest.approx(89.75), 88.0, 91.5]
    assert kept.loc["kept"].tolist() == pytest.approx([1, 2, *wilson(1, 2)])
    assert kept.loc["kept, marks ignored"].tolist() == pytest.approx([2, 2, *wilson(2, 2)])


def test_ocr_cached_keeps_a_page_without_words_as_nan(tmp_path, fresh_cache, monkeypatch):
    pdf = tmp_path / "s.pdf"
    pdf.write_bytes(b"stand-in bytes")
    calls = []

    def fake_ocr(path, dpi, pages, workers):
        calls.append(list(pages))
        return [ex.OcrPage("words here", 90.0, 2), ex.OcrPage("", math.nan, 0)]

    monkeypatch.setattr(ex, "tesseract_version", lambda: "5.0.0")
    monkeypatch.setattr(ex, "ocr", fake_ocr)
    first = pdfs.ocr_cached(pdf, [1, 3])
    again = pdfs.ocr_cached(pdf, [1, 3])
    assert calls == [[1, 3]]  # the second came from the cache
    for got in (first, again):
        assert got[0] == ex.OcrPage("words here", 90.0, 2)
        assert got[1].text == "" and math.isnan(got[1].confidence) and got[1].words == 0
    assert len(list((fresh_cache / "pdf-text").glob("*.json"))) == 1


def test_what_rag_lab_index_says_of_a_scan_and_of_a_pdf_with_text(running, tmp_path):
    ts.scan(running[0], tmp_path / "scan.pdf", dpi=30)
    files = {"tiny": running[0], "scan": tmp_path / "scan.pdf"}
    refusals = measures.app_refusals(pdfs.Typeset("scanned", files, {}))
    read, failed = refusals.index
    assert read == "read (it has text)" and failed.startswith(f"failed: {pdf_document.NO_TEXT}")
    assert refusals["scans"].tolist() == [1, 1] and refusals["of"].tolist() == [2, 2]
    extracted = {("scans", r): {"s": _text(t)} for r, t in (("a", " \n\f "), ("b", "ab c"))}
    assert measures.text_characters(extracted).to_dict() == {"a": 0, "b": 3}
