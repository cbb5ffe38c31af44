"""PDFs typeset with known ground truth, read back by three libraries, OCR'd by Tesseract.

Every PDF here is made in the test from a small document, so the tests need neither the
corpus nor files in the repo. The ``pdf`` extra is part of ``make setup``, so its absence
fails here; only the OCR tests skip, saying so, when the ``tesseract`` program is absent.
"""

from __future__ import annotations

import hashlib

import pytest

from rag_lab.documents import Document
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf.typeset import (
    LAYOUTS,
    Placement,
    page_break_needle,
    pages_of,
    scan,
    typeset,
)
from rag_lab.text import flat

NEEDLES = [f"Needle number {i} says the value of item {i} is {i * 7} units." for i in range(6)]
WORDS = "tensors shapes axes matrices vectors scalars norms sums products of rank".split()
ALL_MODES = [(name, mode) for name, modes in ex.MODES.items() for mode in modes]


def _doc(paragraphs: int = 90) -> Document:
    """A heading, code, a table, and prose long enough for several pages, needles spread in it."""
    parts = ["# Tiny Tensors", "", "Some prose before the code.", "", "```python", "x = 1", "```"]
    parts += ["", "| name | value |", "|:--|--:|", "| alpha | 1 |", "| beta | 2 |", ""]
    for p in range(paragraphs):
        words = WORDS[p % len(WORDS) :] + WORDS[: p % len(WORDS)]  # no two alike, digits aside
        parts.append(" ".join(f"{' '.join(words)} {p}-{k}." for k in range(3)))
        if p % 15 == 7:
            parts.append(NEEDLES[p // 15])
        parts.append("")
    return Document("tiny", "Tiny Tensors", "\n".join(parts))


@pytest.fixture(scope="module")
def one_column(tmp_path_factory):
    path = tmp_path_factory.mktemp("pdf") / "one.pdf"
    return path, typeset(_doc(), "one-column", path, NEEDLES)


def _found_on(needle: str, text: ex.PdfText) -> tuple[int, ...]:
    return pages_of(needle, text.pages)


def test_pages_of_normalises_whitespace_and_spans_a_page_break():
    assert pages_of("b  c", ["a b", "c\nd"]) == (1, 2)
    assert pages_of("c d", ["a b", "c\nd"]) == (2,)
    assert pages_of("e", ["a b", "c d"]) == ()


def test_flat_makes_every_whitespace_run_one_space():
    assert flat("  a\r\n\tb\f\n\nc  ") == "a b c"
    assert flat("") == ""


def test_page_break_needle_joins_the_lines_on_either_side_of_a_page_break():
    body = ("one\ntwo three", "four five\nsix", "seven")
    placed = Placement("one-column", body, body, {})
    assert page_break_needle(placed) == "two three four five"
    assert page_break_needle(placed, page=2) == "six seven"
    assert pages_of(page_break_needle(placed), placed.body) == (1, 2)


def test_every_needle_is_placed_and_the_document_spans_pages(one_column):
    _, placed = one_column
    assert len(placed.pages) >= 3
    assert all(placed.needles[n] for n in NEEDLES)
    assert len({placed.needles[n] for n in NEEDLES}) >= 3  # on more than one page
    assert placed.replaced == 0
    assert placed.body == placed.pages  # no running lines in this layout


@pytest.mark.parametrize(("extractor", "mode"), ALL_MODES)
def test_each_extractor_finds_each_needle_on_its_recorded_page(one_column, extractor, mode):
    path, placed = one_column
    text = ex.extract(path, extractor, mode)
    assert len(text.pages) == len(placed.pages)
    for needle in NEEDLES:
        assert _found_on(needle, text) == placed.needles[needle], needle


def test_offsets_map_to_pages(one_column):
    path, _ = one_column
    text = ex.extract(path, "pdfium")
    for number, start in enumerate(text.starts, start=1):
        assert text.page_of(start) == number
        assert text.text[start : start + len(text.pages[number - 1])] == text.pages[number - 1]
    needle = NEEDLES[3]
    at = flat(text.text).find(needle)  # pdfium breaks lines with \r\n
    assert at >= 0


@pytest.mark.parametrize("layout", LAYOUTS)
def test_typesetting_is_byte_for_byte_stable(tmp_path, layout):
    a, b = tmp_path / "a.pdf", tmp_path / "b.pdf"
    typeset(_doc(20), layout, a)
    typeset(_doc(20), layout, b)
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()


def test_two_column_rows_interleaves_in_drawing_order_and_layout_analysis_undoes_it(tmp_path):
    cols = typeset(_doc(20), "two-column", tmp_path / "c.pdf")
    rows = typeset(_doc(20), "two-column-rows", tmp_path / "r.pdf")
    assert rows.pages == cols.pages  # the same lines on the same pages, in reading order
    column_start = " ".join(cols.pages[0].split("\n")[:2])  # column 1's first two lines

    def first_page(extractor: str, path) -> str:
        return flat(ex.extract(path, extractor).pages[0])

    assert column_start in first_page("pypdf", tmp_path / "c.pdf")
    assert column_start not in first_page("pypdf", tmp_path / "r.pdf")  # a column-2 line between
    assert column_start in first_page("pdfminer", tmp_path / "r.pdf")  # text boxes keep columns


def test_characters_the_core_fonts_lack_are_drawn_as_question_marks(tmp_path):
    doc = Document("greek", "Greek", "# Greek\n\nThe angle α is small, é is fine.\n")
    placed = typeset(doc, "one-column", tmp_path / "g.pdf", ["The angle ? is small, é is fine."])
    assert placed.replaced == 1
    assert placed.needles["The angle ? is small, é is fine."] == (1,)
    assert "é is fine" in ex.extract(tmp_path / "g.pdf", "pypdf").text


def test_the_tables_layout_draws_one_row_of_cells_per_table_row(tmp_path):
    tables = typeset(_doc(2), "tables", tmp_path / "t.pdf")
    plain = typeset(_doc(2), "one-column", tmp_path / "p.pdf")
    assert "alpha 1" in tables.pages[0].split("\n")
    assert "| alpha | 1 |" in plain.pages[0].split("\n")
    assert "alpha" in ex.extract(tmp_path / "t.pdf", "pdfminer").pages[0]


def test_repeated_lines_hand_computed():
    pages = ["Guide\nintro text\nPage 1", "Guide\nGuide\nmore text\nPage 2", "Guide\nend\nPage 10"]
    kept, removed = ex.remove_repeated_lines(pages)
    assert kept == ["intro text", "Guide\nmore text", "end"]  # a second "Guide" is body
    assert removed == [(1, "Guide"), (1, "Page 1"), (2, "Guide"), (2, "Page 2"),
                       (3, "Guide"), (3, "Page 10")]  # fmt: skip
    assert ex.remove_repeated_lines(["Guide\nonly page\n1"])[1] == []  # one page: no repetition


@pytest.mark.parametrize(("extractor", "mode"), ALL_MODES)
def test_running_header_and_footer_are_removed_and_body_lines_kept(tmp_path, extractor, mode):
    path = tmp_path / "rh.pdf"
    placed = typeset(_doc(), "running-header", path, NEEDLES)
    text = ex.extract(path, extractor, mode)
    kept, removed = ex.remove_repeated_lines(text.pages)
    n = len(placed.pages)
    assert sorted(flat(line) for _, line in removed) == sorted(
        ["Tiny Tensors"] * n + [f"Page {i}" for i in range(1, n + 1)]
    )
    for number, (page, drawn, body) in enumerate(zip(kept, placed.pages, placed.body, strict=True)):
        assert drawn.split("\n") == ["Tiny Tensors", *body.split("\n"), f"Page {number + 1}"]
        for line in body.split("\n"):
            assert flat(line) in flat(page)
    assert "Tiny Tensors" in flat(kept[0])  # the title heading stays


@pytest.fixture(scope="module")
def encrypted(one_column, tmp_path_factory):
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=one_column[0])
    writer.encrypt("secret", algorithm="AES-256")
    path = tmp_path_factory.mktemp("pdf") / "encrypted.pdf"
    writer.write(path)
    return path


@pytest.mark.parametrize("extractor", ex.EXTRACTORS)
def test_an_encrypted_pdf_fails_with_the_parsers_reason(encrypted, extractor):
    with pytest.raises(ex.PdfError) as err:
        ex.extract(encrypted, extractor)
    assert err.value.reason.startswith(f"encrypted: {extractor}: ")


@pytest.mark.parametrize("extractor", ex.EXTRACTORS)
@pytest.mark.parametrize("data", [b"", b"%PDF-1.4\nnot a PDF at all\n"])
def test_a_malformed_pdf_fails_with_the_parsers_reason(tmp_path, extractor, data):
    (tmp_path / "bad.pdf").write_bytes(data)
    with pytest.raises(ex.PdfError) as err:
        ex.extract(tmp_path / "bad.pdf", extractor)
    assert err.value.reason.startswith(f"malformed: {extractor}: ")
    assert len(err.value.reason) > len(f"malformed: {extractor}: ")


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pdf")
    doc = Document("s", "Scan", "# Scanned Page\n\n" + NEEDLES[0] + "\n\nA second short line.\n")
    typeset(doc, "one-column", folder / "s.pdf", NEEDLES[:1])
    assert scan(folder / "s.pdf", folder / "scan.pdf", dpi=100) == 1
    return folder / "scan.pdf"


@pytest.mark.parametrize(("extractor", "mode"), ALL_MODES)
def test_a_scanned_pdf_has_no_text_layer(scanned, extractor, mode):
    text = ex.extract(scanned, extractor, mode)
    assert len(text.pages) == 1
    assert not text.has_text


def test_ocr_reads_the_scan_with_a_confidence(scanned):
    try:
        ex.tesseract_version()
    except ex.OcrUnavailable as err:
        pytest.skip(str(err))
    (page,) = ex.ocr(scanned, dpi=200)
    assert "Scanned Page" in page.text
    assert "second short line" in page.text
    assert 50 < page.confidence <= 100
    assert page.words >= 15


def test_ocr_without_tesseract_says_so(scanned, monkeypatch):
    pytesseract = pytest.importorskip("pytesseract")
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    with pytest.raises(ex.OcrUnavailable, match="Tesseract is not installed"):
        ex.ocr(scanned)


def test_a_needle_cut_by_a_page_break_is_on_both_pages_and_found_once_headers_go(tmp_path):
    path = tmp_path / "rh.pdf"
    needle = page_break_needle(typeset(_doc(), "running-header", path))
    placed = typeset(_doc(), "running-header", path, [needle])
    assert placed.needles[needle] == (1, 2)
    text = ex.extract(path, "pdfminer")
    assert pages_of(needle, text.pages) == ()  # "Page 1" and the title lie between its halves
    assert pages_of(needle, ex.remove_repeated_lines(text.pages)[0]) == (1, 2)
