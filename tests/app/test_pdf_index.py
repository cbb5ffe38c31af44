"""PDFs in the persistent index: read, chunked, stored with their pages, cited by page.

Every PDF is typeset in the test (:mod:`rag_lab.sources.pdf.typeset`), so where each word
landed is known without extracting it back. The pdf packages are required: a missing one
fails this module at import, it is not skipped. Only the tests that run Tesseract are
skipped when its program is not installed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pypdf
import pypdfium2  # noqa: F401  (required: fail here, loudly, when it is missing)
import pytest
import reportlab  # noqa: F401
from fakes import HashEncoder, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lab.app import exits, index, ingest
from rag_lab.app.store import SCHEMA_VERSION, SQLiteStore
from rag_lab.citations import Hit, PageChars, citation, parse_fragment, quote_matches
from rag_lab.documents import Document
from rag_lab.sources import folder
from rag_lab.sources.pdf import document as pdf
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf.typeset import pages_of, scan, typeset

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="the tesseract program is not installed (Debian: apt-get install tesseract-ocr)",
)


def _words(start: int, n: int) -> list[str]:
    """``n`` words, each unique in a test document and in no other word (``xbaaf``).

    Letters, not digits: lines that differ only in their numbers read as running lines.
    """
    return [
        "x" + "".join("abcdefghijklmnop"[i >> s & 15] for s in (12, 8, 4, 0))
        for i in range(start, start + n)
    ]


def _document(paragraphs: list[list[int]], title: str = "Manual") -> Document:
    """Paragraphs of sentences of the given word counts, every word unique."""
    parts, at = [f"# {title}"], 0
    for sentences in paragraphs:
        text = []
        for n in sentences:
            text.append(" ".join(_words(at, n)) + ".")
            at += n
        parts.append(" ".join(text))
    return Document("manual", title, "\n\n".join(parts) + "\n")


UNIQUE = re.compile(r"x[a-p]{4}")
LONG = [[12, 9, 15, 7]] * 60
"""About four A4 pages."""


def _indexed_citations(root: Path, store: SQLiteStore, **options) -> list:
    """Index ``root`` with the stand-in encoder; every stored chunk as the citation ask gives."""
    report = ingest.index_folder(
        root, store, HashEncoder(), progress=False, pdf=folder.PdfOptions(**options)
    )
    assert not report.failed, report.failed
    retriever = index.retriever(store, HashEncoder())
    chunks, _ = store.chunks(list(retriever.titles))
    hits = [Hit(c, retriever.titles[c.doc_id], 0.0, retriever.paged.get(c.doc_id)) for c in chunks]
    return [citation(i, h) for i, h in enumerate(hits, start=1)]


# --- the reader ---------------------------------------------------------------------


def test_pdfium_line_ends_and_hyphenation_markers_are_cleaned():
    assert pdf.normalise("one\r\ntwo\rthree") == "one\ntwo\nthree"
    assert pdf.normalise("exam\x02\r\nple") == "example"  # a broken word made whole
    assert pdf.normalise("exam\ufffe  \r\nple") == "example"
    assert pdf.normalise("in\ufffevisible, \x02here") == "invisible, here"
    assert pdf.normalise("a\fb") == "a\nb"


def test_a_word_hyphenated_across_lines_is_whole_again(tmp_path):
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(tmp_path / "h.pdf"), invariant=1)
    canvas.setFont("Helvetica", 10)
    canvas.drawString(72, 700, "A line that ends in a broken exam-")
    canvas.drawString(72, 688, "ple, and a dash - here.")
    canvas.save()
    raw = ex.extract(tmp_path / "h.pdf", "pdfium").pages[0]
    assert "exam\ufffeple" in raw  # PDFium's marker, the two lines joined
    assert (
        pdf.read_pdf(tmp_path / "h.pdf").text
        == "A line that ends in a broken example, and a dash - here."
    )


@pytest.mark.parametrize("layout", ["one-column", "two-column", "running-header"])
def test_paragraphs_are_found_by_the_space_between_lines(tmp_path, layout):
    doc = _document([[12, 9, 15, 7], [20], [5, 5], [30, 8, 12]] * 12)
    typeset(doc, layout, tmp_path / "a.pdf")
    got = pdf.read_pdf(tmp_path / "a.pdf")
    assert len(got.pages) >= 2
    firsts = {p.split()[0] for p in doc.text.split("\n\n")[1:]}  # each paragraph's first word
    for page in got.pages:
        starts = [p.split()[0] for p in page.split("\n\n")]
        inside = [w for w in starts[1:] if w not in firsts | {"Manual"}]
        # No break inside a paragraph, except where it goes on in the next column.
        assert len(inside) <= (1 if layout == "two-column" else 0), inside
    found = {p.split()[0] for page in got.pages for p in page.split("\n\n")}
    assert firsts <= found  # and every paragraph starts one


def test_pages_are_joined_by_a_page_break_and_a_newline():
    d = pdf.PdfDocument("T", ("one", "", "three"), "x")
    assert d.text == "one\f\n\f\nthree"
    assert d.starts == (0, 5, 7)
    assert [d.page_of(i) for i in (0, 3, 4, 5, 7)] == [1, 1, 1, 2, 3]


def test_a_sentence_cut_by_a_page_break_is_chunked_whole():
    from rag_lab.chunking import chunk_document
    from rag_lab.documents import Document

    first = "Filler words go here. " * 20 + "The pump must be primed"
    d = pdf.PdfDocument("T", (first, "before it is started. More text follows."), "x")
    chunks = chunk_document(Document("t", "T", d.text, format="plain"), "E")
    sentence = "The pump must be primed\f\nbefore it is started."
    holding = [c for c in chunks if sentence in c.content]
    assert holding
    assert d.page_of(holding[0].start) == 1 and d.page_of(holding[0].end - 1) == 2


def test_the_title_is_the_metadata_title_else_the_file_stem(tmp_path):
    typeset(_document([[5]], "Pump Manual"), "one-column", tmp_path / "a.pdf")
    assert pdf.read_pdf(tmp_path / "a.pdf").title == "Pump Manual"
    writer = pypdf.PdfWriter(clone_from=tmp_path / "a.pdf")
    for title in ("", "  ", "Untitled"):
        writer.add_metadata({"/Title": title})
        writer.write(tmp_path / "no-title.pdf")
        assert pdf.read_pdf(tmp_path / "no-title.pdf").title == "no-title"


def test_the_reading_names_the_extractor_and_its_library_version(tmp_path):
    typeset(_document([[5]]), "one-column", tmp_path / "a.pdf")
    got = pdf.read_pdf(tmp_path / "a.pdf")
    assert got.extractor.startswith("pdfium default, pypdfium2 ")
    assert "(PDFium " in got.extractor
    assert got.reading == f"pdf reader {pdf.READER_VERSION}: {got.extractor}; running lines removed"
    assert pdf.read_pdf(tmp_path / "a.pdf", extractor="pypdf").extractor == (
        f"pypdf default, pypdf {pypdf.__version__}"
    )


# --- pages and citations (property) ------------------------------------------------------

paragraphs = st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=5), min_size=1, max_size=45)


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    paragraphs=paragraphs, layout=st.sampled_from(["one-column", "running-header", "two-column"])
)
def test_every_chunk_cites_the_page_its_quote_starts_on(paragraphs, layout):
    doc = _document(paragraphs)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        root.mkdir()
        placed = typeset(doc, layout, root / "manual.pdf")
        with SQLiteStore(Path(tmp) / "i.sqlite") as store:
            cites = _indexed_citations(root, store)
            pages = store.document("manual").pages
        text = folder.read(folder.discover(root)[0])[0].text
    assert cites
    for c in cites:
        loc = parse_fragment(c.fragment)
        assert isinstance(loc, PageChars)
        assert c.href == f"manual.pdf#page={loc.page}&char={loc.start},{loc.end}"
        assert quote_matches(c, text)
        # The quote starts on page N of the extracted text …
        first = loc.start - pages.starts[loc.page - 1]
        end = pages.starts[loc.page] if loc.page < len(pages.starts) else len(text)
        page_text = text[pages.starts[loc.page - 1] : end]
        assert page_text[first:].startswith(c.quote[: len(page_text) - first])
        # … where typeset drew its first word (the title or a running line on a page
        # too short to tell them, else a unique word), and it ends on the labelled page.
        words = c.quote.split()
        drawn = [pages_of(w, placed.pages) for w in words if UNIQUE.fullmatch(w.rstrip("."))]
        if UNIQUE.fullmatch(words[0].rstrip(".")):
            assert drawn[0] == (loc.page,)
        else:
            assert words[0] in placed.pages[loc.page - 1]
        label = re.fullmatch(r"p\. (\d+)|pp\. (\d+)–(\d+)", c.locator_label)
        pages_in = [int(g) for g in label.groups() if g]
        assert pages_in[0] == loc.page
        if drawn and UNIQUE.fullmatch(words[-1].rstrip(".")):
            assert pages_in[-1] == drawn[-1][0]


def test_a_chunk_across_a_page_break_is_labelled_with_both_pages(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    placed = typeset(_document([[12, 9]] * 150), "one-column", root / "manual.pdf")
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        cites = _indexed_citations(root, store)
    across = [c for c in cites if c.locator_label.startswith("pp. ")]
    assert across
    for c in across:
        page = parse_fragment(c.fragment).page
        assert c.locator_label == f"pp. {page}–{page + 1}"
        assert "\f" in c.quote  # the page break is in the text it quotes
        assert pages_of(c.quote.split()[-1].rstrip("."), placed.body) == (page + 1,)


# --- running headers and footers -----------------------------------------------------


def test_running_headers_and_footers_are_removed_by_default_and_kept_on_request(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    placed = typeset(_document(LONG, "Pump Manual"), "running-header", root / "manual.pdf")
    n = len(placed.pages)
    assert n >= 3
    with SQLiteStore(tmp_path / "removed.sqlite") as store:
        quotes = [c.quote for c in _indexed_citations(root, store)]
        assert store.document("manual").pages.running_lines_removed == 2 * n
    assert not any(re.search(r"Page \d", q) for q in quotes)
    assert sum(q.count("Pump Manual") for q in quotes) == 1  # the title, on page 1 only
    with SQLiteStore(tmp_path / "kept.sqlite") as store:
        quotes = [c.quote for c in _indexed_citations(root, store, keep_running_lines=True)]
        record = store.document("manual")
    assert record.pages.running_lines_removed == 0
    assert record.reading.endswith("running lines kept")
    assert all(any(f"Page {p}" in q for q in quotes) for p in range(1, n + 1))


def test_the_report_says_how_many_running_lines_were_removed_and_how_to_keep_them(run, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    n = len(typeset(_document(LONG), "running-header", root / "a.pdf").pages)
    typeset(_document(LONG), "running-header", root / "b.pdf")
    status, out, _ = run("index", str(root))
    assert status == exits.OK
    assert (
        f"running headers and footers removed: {4 * n} lines in 2 PDFs (lines repeated at "
        "the top or bottom of most pages; --keep-running-lines keeps them)"
    ) in out
    _, out, _ = run("status")
    assert f"2 PDFs, {4 * n} running header and footer lines removed" in out
    _, out, _ = run("status", "--json")
    data = json.loads(out)
    assert (data["pdfs"], data["running_lines_removed"]) == (2, 4 * n)
    assert data["low_confidence_pages"] == {}


# --- failures -----------------------------------------------------------------------


@pytest.fixture
def mixed(tmp_path):
    """A good PDF, a Markdown file, and an encrypted, two malformed and a scanned PDF."""
    root = write(tmp_path / "docs", {"notes.md": "# Notes\n\nPumps need oil.\n"})
    typeset(_document([[8, 6]] * 3), "one-column", root / "good.pdf")
    writer = pypdf.PdfWriter(clone_from=root / "good.pdf")
    writer.encrypt("secret", algorithm="AES-128")
    writer.write(root / "locked.pdf")
    data = (root / "good.pdf").read_bytes()
    (root / "truncated.pdf").write_bytes(data[: len(data) // 3])
    (root / "garbage.pdf").write_bytes(b"this is not a PDF at all\n" * 10)
    typeset(_document([[12, 9, 15]] * 4, "Scanned Notes"), "one-column", tmp_path / "paper.pdf")
    scan(tmp_path / "paper.pdf", root / "scan.pdf")
    return root


def test_each_failure_has_its_reason_and_the_rest_is_indexed(run, mixed):
    status, out, _ = run("index", str(mixed))
    assert status == exits.PARTIAL
    assert "2 indexed, 0 unchanged, 4 failed" in out
    _, out, _ = run("status", "--json")
    failed = json.loads(out)["failed"]
    assert failed["locked"].startswith("encrypted: pdfium: ")
    assert "password" in failed["locked"].lower()
    assert failed["garbage"].startswith("malformed: pdfium: ")
    assert failed["truncated"].startswith("malformed: pdfium: ")
    assert failed["scan"] == (
        "no text layer (scanned?) (rag-lab index --ocr reads it with Tesseract)"
    )


def test_without_tesseract_ocr_fails_the_scan_with_the_install_hint(run, mixed, monkeypatch):
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nowhere/tesseract")
    status, out, _ = run("index", str(mixed), "--ocr")
    assert status == exits.PARTIAL
    assert "2 indexed, 0 unchanged, 4 failed" in out
    assert (
        "  failed scan.pdf: no text layer (scanned?), and OCR is unavailable: Tesseract is not "
        "installed: no `tesseract` program on PATH (Debian: apt-get install tesseract-ocr)"
    ) in out


@needs_tesseract
def test_ocr_indexes_a_scan_keeps_its_confidences_and_flags_low_pages(run, mixed, tmp_path):
    for name in ("locked", "truncated", "garbage"):
        (mixed / f"{name}.pdf").unlink()
    status, out, _ = run("index", str(mixed), "--ocr", "--ocr-min-confidence", "100")
    assert status == exits.OK, out
    assert "3 indexed" in out
    assert "  low OCR confidence scan.pdf: p. 1 (their text may be wrong" in out
    with SQLiteStore(tmp_path / "index.sqlite", readonly=True) as store:
        record = store.document("scan")
        chunks, _ = store.chunks(["scan"])
    assert record.title == "scan"  # reportlab's "untitled" is no title
    assert re.fullmatch(
        r".*; OCR tesseract 5\.\d+\.\d+, 300 dpi, pages under 100 flagged", record.reading
    )
    (confidence,) = record.pages.confidences
    assert 50 < confidence < 100
    assert record.pages.flagged == (1,)
    assert " ".join(_words(5, 2)) in " ".join(c.content for c in chunks)  # Tesseract read the words
    _, out, _ = run("status")
    assert "OCR pages of low confidence" in out and "  scan.pdf: p. 1" in out
    _, out, _ = run("status", "--json")
    assert json.loads(out)["low_confidence_pages"] == {"scan.pdf": [1]}
    question = "Scanned Notes " + " ".join(_words(0, 12))
    _, out, _ = run("ask", question, "--cutoff", "2", "-k", "5")
    assert "scan.pdf#page=1&char=" in out
    assert f"(!) low-confidence OCR text, p. 1: OCR mean word confidence {confidence:.0f}, " in out
    _, out, _ = run("ask", question, "--cutoff", "2", "-k", "5", "--json")
    cited = [c for c in json.loads(out)["citations"] if c["href"].startswith("scan.pdf")]
    assert cited
    assert all(c["warning"].startswith("p. 1: OCR mean word confidence") for c in cited)


@needs_tesseract
def test_an_unchanged_scan_is_not_ocred_again_and_another_threshold_redoes_it(
    tmp_path, monkeypatch
):
    root = tmp_path / "docs"
    root.mkdir()
    typeset(_document([[12, 9]] * 2, "Scanned"), "one-column", tmp_path / "paper.pdf")
    scan(tmp_path / "paper.pdf", root / "scan.pdf")
    calls = []
    real = pdf.ocr
    monkeypatch.setattr(pdf, "ocr", lambda *a, **k: calls.append(a) or real(*a, **k))

    def index_with(**options) -> ingest.IngestReport:
        with SQLiteStore(tmp_path / "i.sqlite") as store:
            return ingest.index_folder(
                root, store, HashEncoder(), progress=False, pdf=folder.PdfOptions(**options)
            )

    assert index_with(ocr=True).indexed == ["scan"]
    assert index_with(ocr=True).skipped == ["scan"]
    assert len(calls) == 1
    assert index_with(ocr=True, ocr_min_confidence=99.9).flagged == {"scan": (1,)}
    assert len(calls) == 2
    assert index_with().failed == {"scan": f"{pdf.NO_TEXT} {pdf.OCR_HINT}"}  # no --ocr


def test_a_manifest_lists_the_pdfs_to_index(tmp_path):
    root = write(tmp_path / "docs", {"notes.md": "# Notes\n\nPumps.\n"})
    typeset(_document([[8, 6]]), "one-column", root / "listed.pdf")
    typeset(_document([[8, 6]]), "one-column", root / "unlisted.pdf")
    digest = hashlib.sha256((root / "listed.pdf").read_bytes()).hexdigest()
    (root / "SHA256SUMS").write_text(f"{digest}  listed.pdf\n")
    assert [s.path for s in folder.discover(root)] == ["listed.pdf"]
    doc, _ = folder.read(folder.discover(root)[0])
    assert doc.format == "plain" and doc.title == "Manual"


def test_retry_reads_pdfs_with_the_options_of_the_last_run(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    typeset(_document(LONG), "running-header", root / "manual.pdf")
    (root / "bad.pdf").write_bytes(b"not a pdf")
    options = folder.PdfOptions(extractor="pypdf", keep_running_lines=True)
    with SQLiteStore(tmp_path / "i.sqlite") as store:
        ingest.index_folder(root, store, HashEncoder(), progress=False, pdf=options)
        (root / "bad.pdf").write_bytes((root / "manual.pdf").read_bytes())
        report = ingest.retry(store, HashEncoder(), progress=False)
        assert report.indexed == ["bad"]
        assert store.document("bad").reading == store.document("manual").reading
        assert "pypdf default" in store.document("bad").reading
        assert store.document("bad").reading.endswith("running lines kept")


# --- re-reading and the schema ------------------------------------------------------


def test_another_extractor_re_reads_the_pdfs_only(run, mixed, tmp_path):
    run("index", str(mixed))
    _, out, _ = run("index", str(mixed))
    assert "0 indexed, 2 unchanged" in out
    _, out, _ = run("index", str(mixed), "--pdf-extractor", "pypdf")
    assert out.splitlines()[1].startswith("1 indexed, 1 unchanged")  # good.pdf, not notes.md
    with SQLiteStore(tmp_path / "index.sqlite", readonly=True) as store:
        assert "pypdf default, pypdf " in store.document("good").reading
        assert store.document("notes").reading == "text reader 1"


def _as_schema_2(path: Path) -> None:
    """Turn a schema-3 index into the schema-2 file an older rag_lab wrote."""
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE documents DROP COLUMN pages")
        db.execute("ALTER TABLE documents DROP COLUMN reading")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
        db.execute("PRAGMA user_version = 2")


def test_a_schema_2_index_is_read_as_it_is_and_upgraded_by_the_next_run(run, tmp_path):
    root = write(tmp_path / "docs", {"a.md": "# A\n\nPumps need oil.\n", "b.txt": "Valves.\n"})
    run("index", str(root))
    path = tmp_path / "index.sqlite"
    _as_schema_2(path)
    with SQLiteStore(path, readonly=True) as store:
        assert [r.reading for r in store.documents()] == [None, None]
    status, out, _ = run("ask", "pumps oil", "--cutoff", "1.5")
    assert status == exits.OK and "a#char=" in out
    typeset(_document([[8, 6]]), "one-column", root / "c.pdf")
    status, out, _ = run("index", str(root))
    assert status == exits.OK
    assert "1 indexed, 2 unchanged" in out  # nothing re-embedded by the upgrade
    with SQLiteStore(path, readonly=True) as store:
        assert store.meta("schema") == SCHEMA_VERSION == "3"
        assert store.document("a").reading == "text reader 1"
        assert store.document("c").pages is not None
    with path.open("rb") as f:
        assert int.from_bytes(f.read(100)[60:64], "big") == 3  # user_version


def test_status_check_finds_page_starts_that_cannot_be_right(run, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    typeset(_document(LONG), "one-column", root / "manual.pdf")
    run("index", str(root))
    assert run("status", "--check")[0] == exits.OK
    with sqlite3.connect(tmp_path / "index.sqlite") as db:
        (pages,) = db.execute("SELECT pages FROM documents").fetchone()
        broken = json.loads(pages)
        broken["starts"] = broken["starts"][::-1]
        db.execute("UPDATE documents SET pages = ?", (json.dumps(broken),))
    status, out, _ = run("status", "--check")
    assert status == exits.ERROR
    assert "manual: its page starts [" in out and "do not start at 0 and increase" in out


# --- end to end ---------------------------------------------------------------------


def test_index_and_ask_a_folder_of_markdown_text_and_pdf(run, tmp_path):
    root = write(
        tmp_path / "docs",
        {"notes.md": "# Notes\n\nPumps need oil.\n", "todo.txt": "Order valves.\n"},
    )
    (root / "guides").mkdir()
    doc = _document(LONG)
    placed = typeset(doc, "running-header", root / "guides" / "manual.pdf")
    status, out, _ = run("index", str(root))
    assert status == exits.OK
    assert "3 indexed, 0 unchanged, 0 failed" in out
    question = " ".join(_words(1500, 6))
    status, out, _ = run("ask", question, "--cutoff", "1.5", "-k", "3")
    assert status == exits.OK
    hrefs = re.findall(r"guides/manual\.pdf#page=(\d+)&char=(\d+),(\d+)  Manual — pp?\. ", out)
    assert hrefs
    _, out, _ = run("ask", question, "--cutoff", "1.5", "-k", "3", "--json")
    text = pdf.read_pdf(root / "guides" / "manual.pdf").text
    cited = [c for c in json.loads(out)["citations"] if c["href"].startswith("guides/")]
    assert len(cited) == len(hrefs)
    for c in cited:
        loc = parse_fragment(c["href"].partition("#")[1] + c["href"].partition("#")[2])
        assert text[loc.start : loc.end] == c["quote"]
        assert pages_of(c["quote"].split()[0], placed.body) == (loc.page,)
        assert c["section"].startswith(f"p. {loc.page}") or c["section"].startswith(
            f"pp. {loc.page}–"
        )
    assert not math.isnan(cited[0]["distance"])
