"""Notebook 11's ledger entries and views, on records made by hand or by the suite's
functions on tiny inputs (the measures themselves: ``tests/evaluation/test_extraction.py``)."""

from __future__ import annotations

import pandas as pd
from hand_counted import ocr_records

from rag_lab.claims import claim as declared
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import extraction
from rag_lab.evaluation.extraction_pdfs import APP_READER, READERS, Typeset
from rag_lab.evaluation.paired import paired_table
from rag_lab.experiments import nb11_extraction as nb
from rag_lab.questions import Query, Question
from rag_lab.sources.pdf import extract as ex
from rag_lab.sources.pdf.typeset import Placement


def _question(i: int, doc: str, needle: str) -> Question:
    return Question(f"q{i}", doc, needle, f"course {i}", f"ticket {i}")


def _queries(questions) -> list[Query]:
    """Both phrasings of each question, course first, as a QuestionSet orders them."""
    return [Query(q, p) for p in ("course", "ticket") for q in questions]


def _text(text: str) -> ex.PdfText:
    return ex.PdfText("pdfium", "default", (text,))


# --- views ------------------------------------------------------------------------------------


def test_the_losses_and_grids_of_the_survival_table():
    needles = [f"needle number {i} here" for i in range(8)]
    body = ("\n".join(needles),)
    placed = {"d": Placement("x", body, body, {n: (1,) for n in needles})}
    sets = {lay: Typeset(lay, {"d": f"{lay}.pdf"}, placed) for lay in ("one-column", "two-column")}
    readers = ("pypdf default", "pdfminer default", "pdfium default")
    extracted = {("one-column", r): {"d": _text(body[0])} for r in readers}
    extracted["two-column", "pypdf default"] = {"d": _text("nothing")}  # loses all 8
    extracted["two-column", "pdfminer default"] = {"d": _text("\n".join(needles[6:]))}  # loses 6
    extracted["two-column", "pdfium default"] = {"d": _text(body[0])}  # loses none
    docs = [Document("d", "D", "unused")]
    table = extraction.survival_table(docs, sets, extracted, {"d": needles})
    shown = nb.losses(table).frame  # only where a needle differs: pdfium keeps the same 8
    assert shown["reader"].tolist() == ["pypdf default", "pdfminer default"]
    assert shown["p"].tolist() == ["0.0078", "0.031"]
    assert shown["p Holm"].tolist() == ["0.023", "0.062"]
    grid = nb.grid(table, "needles kept").frame
    assert list(grid.columns) == ["one-column", "two-column"]
    assert list(grid.index) == list(readers) and grid["two-column"].tolist() == [0, 2, 8]


def test_with_p_shows_two_significant_digits():
    frame = pd.DataFrame({"pages": [1, 2, 3], "p": [0.4, 1.0, 0.0004]})
    assert nb.with_p(frame).frame["p"].tolist() == ["0.40", "1.0", "0.00040"]
    assert nb.with_p(frame).frame["pages"].tolist() == [1, 2, 3]


def test_the_loss_tables_pair_each_corpus_with_the_clean_one_by_question():
    queries = _queries([_question(i, "d", f"needle {i}") for i in range(8)])
    lost = "running-header · pypdf default · lines removed"
    systems = {"Markdown": [1] * 16, lost: [None] * 16, "same": [1] * 16}
    family = paired_table(
        systems,
        [(n, "Markdown") for n in (lost, "same")],
        (4, 20),
        [q.question.id for q in queries],
    )
    at4, at20 = nb.loss(family)  # one table per k, a row per corpus
    assert at4.frame.index.tolist() == at20.frame.index.tolist() == [lost, "same"]
    assert at4.frame["finding"].tolist() == ["worse", "–"]  # +0/−8, Holm 4 × 0.0078
    assert at20.frame["questions"].tolist() == ["+0/\u22128", "+0/\u22120"]
    assert at4.frame["p Holm"].tolist() == ["0.031", "1.0"]
    assert at4.frame["a − b by question"].iloc[0].startswith("-1.000 [")


NEEDLE = "call `foo` now please"


def test_misses_set_what_ocr_read_under_each_needle_it_lost():
    needles = pd.DataFrame(
        {
            "document": ["d", "d"],
            "needle": [NEEDLE, "first page words"],
            "kept": [False, True],
            "kept, marks ignored": [True, True],
            "text": ["Before it we\ncall \u2018foo\u2018 now please and more", "first page words"],
        }
    )
    assert nb.misses(needles).splitlines() == [
        "d (marks ignored: kept)",
        f"  needle   {NEEDLE}",
        "  OCR read call \u2018foo\u2018 now please",
    ]


TABLE_DOC = Document("t", "T", "# T\n\n| name | value |\n|:--|--:|\n| alpha | 1 |\n| beta | 22 |\n")


def test_table_of_rows_and_an_excerpt_from_that_row():
    assert nb.table_of_rows([Document("p", "P", "# P\n\nprose\n"), TABLE_DOC]) == (
        "t",
        ("alpha", "1"),
    )
    by_doc = {"t": ex.PdfText("pdfium", "default", ("T\nname value\n", "\nalpha 1\nbeta 22"))}
    assert nb.excerpt(by_doc, "t", lines=2, start="alpha") == "alpha 1\nbeta 22"
    assert nb.excerpt(by_doc, "t", lines=3) == "T\nname value\nalpha 1"  # blank lines left out
    assert nb.excerpt({"t": _text("x" * 120)}, "t") == "x" * 99 + "…"


# --- the claims -------------------------------------------------------------------------------

ROWS_LOST = ("pypdf default", "pypdf layout", "pdfium default", "pdfium bounded", APP_READER)


def _finding(layout: str, reader: str) -> str:
    lost = (layout == "two-column" and reader == "pypdf layout") or (
        layout == "two-column-rows" and reader in ROWS_LOST
    )
    return "loses needles" if lost else "no loss shown"


def _results(ocr: bool = True) -> dict:
    """The records the claims count on, by hand."""
    layouts = ("two-column", "two-column-rows", "running-header")
    survival = pd.DataFrame(
        [[lay, r, _finding(lay, r)] for lay in layouts for r in READERS],
        columns=["layout", "reader", "finding"],
    )
    rows = pd.DataFrame(
        {"kept": [5, 2], "rows": [5, 5]}, index=["pypdf default", "pdfminer default"]
    )
    waste = pd.DataFrame(
        {
            "chunks": [4, 8, 10],
            "carrying one": [2, 2, 0],
            "word-pieces wasted": [123, 61, 0],
            "word-pieces embedded": [10_000, 10_000, 9_000],
        },
        index=["pypdf default", "pdfium default", APP_READER],
    )
    queries = _queries([_question(i, "d", f"needle {i}") for i in range(8)])
    lost, same = "two-column-rows · pypdf default", "one-column · pdfium default"
    systems = {"Markdown": [1] * 16, lost: [None] * 16, same: [1] * 16}
    ids = [q.question.id for q in queries]
    r = {
        "survival": survival,
        "rows": rows,
        "needles_in_tables": 0,
        "waste": waste,
        "loss": paired_table(systems, [(lost, "Markdown"), (same, "Markdown")], (4, 20), ids),
        "text_layer": pd.Series([0, 0], name="characters"),
        "tesseract": "5.3.0" if ocr else None,
    }
    if ocr:
        r["ocr_pages"], r["ocr_needles"] = ocr_records()
    return r


def test_the_claims_count_on_the_records():
    entries = {e.claim: e for e in nb.chapter_claims(_results())}
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
    assert entries["interleave:two-column-rows"].here.startswith("5 of 7 readers lose needles")
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


def test_with_no_tesseract_the_scans_claim_is_not_measured():
    scans = nb.chapter_claims(_results(ocr=False))[4]
    assert scans.verdict is Verdict.NOT_MEASURED
    assert scans.here == "0 characters from any of the 2 readers"


def test_no_reader_losing_needles_contradicts_an_interleaving_claim():
    r = _results()
    r["survival"] = r["survival"].assign(finding="no loss shown")
    claim = nb.chapter_claims(r)[0]
    assert claim.verdict is Verdict.CONTRADICTED
    assert claim.here == "no reader loses needles against one column"


def test_every_chunk_carrying_a_running_line_reproduces_the_chapter():
    r = _results()
    r["waste"]["carrying one"] = r["waste"]["chunks"]
    r["waste"]["word-pieces wasted"] = 0
    assert nb.chapter_claims(r)[3].verdict is Verdict.REPRODUCES
