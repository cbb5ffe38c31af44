from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from hand_counted import DOC, NEEDLE, QUESTIONS

from rag_lab.chunking import STRATEGIES, chunk_corpus
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, chunking, geometry, hypotheses
from rag_lab.experiments import nb02_chunking as chunk_report
from rag_lab.models.minilm import count_word_pieces
from rag_lab.questions import Question


def test_destroyed_answers_and_where_the_cut_falls():
    by = {name: chunk_corpus([DOC], name) for name in ("A", "B", "C")}
    assert [q.id for q in chunking.destroyed_questions(by["A"], QUESTIONS)] == ["q1"]
    assert chunking.destroyed_questions(by["B"], QUESTIONS) == []  # starts 7 before 512
    destroyed = chunking.destroyed(by, QUESTIONS)
    assert destroyed.questions == {"A": ("q1",), "B": (), "C": ()} and destroyed.of == 2
    table = destroyed.view()
    assert table["destroyed"].tolist() == [1, 0, 0] and table.loc["A", "questions"] == "q1"
    assert table.loc["B", "questions"] == "none"
    cut = chunk_report.cut_table([DOC], by, QUESTIONS).frame
    start = DOC.text.index(NEEDLE)
    assert cut.index.tolist() == ["q1"] and cut.loc["q1", "before cut"] == 512 - start
    assert (
        cut.loc["q1", "needle, ‖ at A's cut"]
        == f"{DOC.text[start:512]}‖{DOC.text[512 : start + len(NEEDLE)]}"
    )


@pytest.mark.model
def test_header_tokens_are_the_difference_with_and_without_the_header():
    by = {name: chunk_corpus([DOC], name) for name in ("C", "E")}
    pieces = chunking.word_pieces(by)
    table = pieces.table
    texts = [c.text for c in by["E"]]
    header_pieces = count_word_pieces(["[Title]", "[Title > Part]"]) - 2  # minus CLS/SEP
    assert table.loc["E", "header word-pieces"] == header_pieces.sum()
    assert table.loc["E", "embedded word-pieces"] == count_word_pieces(texts).sum()
    assert table.loc["C", "header word-pieces"] == 0
    assert table.loc["E", "header share"] == header_pieces.sum() / count_word_pieces(texts).sum()
    assert pieces.per_chunk["E"].tolist() == count_word_pieces(texts).tolist()
    assert pieces.view().loc["E", "header share"].endswith("%")
    assert f"over {pieces.window}" in pieces.view().columns
    shown = chunk_report.pieces_table(pieces, chunking.sizes(by)).frame
    assert shown.loc["E", "embedded"] == count_word_pieces(texts).sum()


LONG = "A long needle " + "that keeps going " * 7 + "until it ends."
"""Starts 104 characters before the 512 cut of :data:`FAR`: past the overlap's reach."""
FAR = Document("02-far", "Far", "# Far\n\n" + "g" * 400 + " " + LONG + "\n\nMore words here.")
BOTH = [*QUESTIONS, Question("q3", "02-far", LONG, "what keeps going", "long?")]


def test_where_the_cut_falls_and_what_the_overlap_keeps():
    by = {name: chunk_corpus([DOC, FAR], name) for name in "AB"}
    table = chunk_report.cut_table([DOC, FAR], by, BOTH)
    rows = table.frame
    assert rows.index.tolist() == ["q1", "q3"]
    assert rows["length"].tolist() == [len(NEEDLE), len(LONG)]
    # the needles start at 503 and 408: the overlap repeats 64 characters before a cut, so
    # q1 (9 before it) is kept and q3 (104) is lost
    assert (
        rows["before cut"].tolist()
        == [9, 104]
        == [512 - DOC.text.index(NEEDLE), 512 - FAR.text.index(LONG)]
    )
    assert rows["reach"].tolist() == ["within", "beyond"]
    assert rows["under B"].tolist() == ["whole", "cut"]
    assert rows.loc["q1", "needle, ‖ at A's cut"] == f"{NEEDLE[:9]}‖{NEEDLE[9:]}"
    assert rows.loc["q3", "needle, ‖ at A's cut"] == f"{LONG[:104]}‖{LONG[104:]}"
    assert table.width <= 100


def test_the_claims_judge_the_record():
    by = {name: chunk_corpus([DOC], name) for name in "ABCDEF"}
    measured = chunking.measure(by, QUESTIONS)
    judged = {e.claim: e for e in hypotheses.chunking_entries(measured, "02", "d2l")}
    assert judged["A-destroys"].verdict is Verdict.REPRODUCES
    assert (judged["A-destroys"].here, judged["A-destroys"].chapter) == ("1 of 2", "4 of 32")
    assert judged["B-destroys-none"].verdict is Verdict.REPRODUCES
    # one short document: no chunk reaches the window, so neither the header nor the
    # overlap pushes one past it
    assert judged["header-window"].verdict is Verdict.CONTRADICTED
    assert judged["overlap-window"].verdict is Verdict.CONTRADICTED
    assert set(chunk_report.HEADLINE) | {"header-share"} == set(judged)


def test_what_the_overlap_rescues_is_counted_once_from_the_record():
    destroyed = chunking.Destroyed(
        {"A": ("q1", "q3", "q5"), "B": ("q3",), "C": ("q2",), "D": ("q2",), "E": (), "F": ()},
        6,
    )
    table = chunk_report.destroyed_table(destroyed).frame
    assert table["destroyed"].tolist() == [3, 1, 1, 1, 0, 0]
    assert table["rescued"].tolist() == ["–", 2, "–", 0, "–", 0]
    assert table.loc["A", "chapter"] == chapter.DESTROYED_BY_BLIND
    assert table.loc["B", "chapter"] == chapter.DESTROYED_WITH_OVERLAP
    assert table.loc["C", "chapter"] == "–"


def test_the_offsets_are_checked_per_strategy():
    by = {name: chunk_corpus([DOC, FAR], name) for name in "AC"}
    table = chunk_report.offset_table(by, [DOC, FAR]).frame
    assert table["chunks"].tolist() == [len(by["A"]), len(by["C"])]
    assert table["offset errors"].tolist() == [0, 0]
    moved = [dataclasses.replace(by["C"][0], start=by["C"][0].start + 1), *by["C"][1:]]
    table = chunk_report.offset_table({"C": moved}, [DOC, FAR]).frame
    assert table.loc["C", "offset errors"] == 1


def test_the_header_cost_per_chunk_beside_the_chapter():
    by = {name: chunk_corpus([DOC, FAR], name) for name in "CE"}
    sizes = chunking.sizes(by)
    n = sizes.chunks("E")
    counts = pd.DataFrame(
        {
            "embedded word-pieces": [1000, 1200],
            "header word-pieces": [0, 200],
            "header share": [0.0, 200 / 1200],
            "over window": [1, 2],
            "max": [300, 310],
        },
        index=pd.Index(["C", "E"], name="strategy"),
    )
    pieces = chunking.WordPieces(counts, 256, {})
    table = chunk_report.pieces_table(pieces, sizes)
    shown = table.frame
    assert shown.loc["E", "header per chunk"] == round(200 / n, 1)
    assert shown.loc["E", "body per chunk"] == round(1000 / n, 1)
    assert shown.loc["E", "header share"] == 0.167 and shown.loc["E", "over 256"] == 2
    per = chapter.CHUNKS_PER_BOUNDARY_STRATEGY
    assert shown.loc["chapter E", "header per chunk"] == round(chapter.HEADER_TOKENS / per, 1)
    assert shown.loc["chapter E", "embedded"] == chapter.EMBEDDED_TOKENS
    assert shown.loc["chapter F", "over 256"] == chapter.OVER_WINDOW["F"]
    assert shown.loc["chapter F", "header"] is None
    assert table.width <= 100


def test_the_tables_fit_a_page():
    by = {name: chunk_corpus([DOC, FAR], name) for name in "ABCDEF"}
    measured = chunking.measure(by, BOTH)
    assert chunk_report.destroyed_table(measured.destroyed).width <= 100


def test_the_geometry_table_and_claims_follow_the_counts():
    by = {name: chunk_corpus([DOC], name) for name in STRATEGIES}
    destroyed = chunking.destroyed(by, QUESTIONS)
    counts = destroyed.counts()
    lengths = [len(q.needle) for q in QUESTIONS]
    table = chunk_report.geometry_table(lengths, counts).frame
    assert table["observed"].tolist() == [1, 0] and table["overlap"].tolist() == [0, 64]
    # (L − 1)/512 for A, max(0, L − 65)/512 for B: both needles are shorter than 65
    assert table.loc["A", "expected"] == round(sum(n - 1 for n in lengths) / 512, 1)
    assert table.loc["B", "expected"] == 0.0 and table.loc["B", ["low", "high"]].tolist() == [0, 0]
    assert table.loc["A", ["low", "high"]].tolist() == [0, 1]
    assert table["in range"].tolist() == [True] * 2
    assert table["chapter"].tolist() == [chapter.DESTROYED_BY_BLIND, chapter.DESTROYED_WITH_OVERLAP]
    judged = {e.claim: e for e in geometry.entries(lengths, counts, "02", "d2l")}
    assert set(chunk_report.GEOMETRY) == set(judged)
    assert judged["geometry-A"].verdict is Verdict.REPRODUCES
    assert judged["geometry-B"].verdict is Verdict.REPRODUCES
    # two destroyed where the geometry allows at most one: outside its range
    judged = {e.claim: e for e in geometry.entries(lengths, {**counts, "A": 2}, "02", "d2l")}
    assert judged["geometry-A"].verdict is Verdict.CONTRADICTED
    assert judged["geometry-B"].verdict is Verdict.REPRODUCES
