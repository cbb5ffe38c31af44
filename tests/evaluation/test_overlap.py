"""What overlap rescues and its pull, on inputs small enough to check by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.chunking import chunk_document
from rag_lab.claims.verdicts import Verdict
from rag_lab.documents import Document
from rag_lab.evaluation import overlap
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Question


def test_a_needle_whole_only_in_the_overlap_is_found_but_quoted_cut():
    # A needle straddling B's first cut: B's second chunk holds it in its overlap + content.
    text = "a" * 500 + " the needle spans the cut " + "b" * 600
    needle = "the needle spans the cut"
    chunks = chunk_document(Document("d", "d", text, format="plain"), "B")
    q = Question("q1", "d", needle, "course?", "ticket?")
    assert relevant_chunks(chunks, [q]) == [{1}]
    assert relevant_chunks(overlap.quoted(chunks), [q]) == [set()]


def test_quoted_table_counts_found_but_cut():
    ranks = {"B": {"embedded": [1, 2, None, 3], "quoted": [1, None, None, 3]}}
    table = overlap.quoted_table(ranks, ks=(1, 5))
    assert table.loc[("B", 5), "R@k embedded"] == 0.75
    assert table.loc[("B", 5), "R@k quoted"] == 0.5
    assert table.loc[("B", 5), "found, quoted cut"] == 1
    assert table.loc[("B", 1), "found, quoted cut"] == 0


def test_rescued_entries_fail_when_any_rescue_is_cut():
    ranks = {"B": {"embedded": [1, 1], "quoted": [1, 1]}}
    entries = overlap.quoted_entries(ranks, {"B": ["q3"]}, ["q1", "q1"], 32)
    by = {e.claim: e for e in entries}
    assert by["B-rescues-whole"].verdict is Verdict.CONTRADICTED
    assert by["B-rescues-whole"].here == "1 of 32: q3"
    assert by["B-rescues-whole"].estimate == 1
    # the same ranking scored both ways: no difference, judged within the declared margin
    assert by["B-quoted@R5"].estimate == 0.0 and by["B-quoted@R5"].margin == 0.05
    assert overlap.quoted_entries(ranks, {"B": []}, ["q1", "q1"], 32)[1].verdict is (
        Verdict.REPRODUCES
    )


def test_pull_by_document_averages_documents_not_chunks():
    # Document x has three chunks each +0.1, y one chunk +0.3: by document the mean is 0.2.
    p = overlap.Pull(
        "B", ["x", "x", "x", "y"], np.array([0.6, 0.6, 0.6, 0.8]), np.array([0.5, 0.5, 0.5, 0.5])
    )
    m, lo, hi = p.by_document()
    assert m == pytest.approx(0.2)
    assert lo < m < hi
    entries = overlap.pull_entries([p])
    assert entries[0].verdict is (Verdict.REPRODUCES if lo > 0 else Verdict.CONTRADICTED)
    assert entries[0].claim == "B-overlap-pulls" and entries[0].estimate == pytest.approx(0.2)
