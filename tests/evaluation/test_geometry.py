"""The destroyed-needle geometry, checked against the lab's own chunker and scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rag_lab.chunking import OVERLAP, TARGET, chunk_document
from rag_lab.documents import Document
from rag_lab.evaluation import geometry, spans
from rag_lab.evaluation.geometry import (
    destroy_probability,
    expected_destroyed,
    implied_length,
    poisson_binomial_range,
    protected_length,
)


def windows(strategy: str, text: str) -> list[tuple[int, int]]:
    """The character span of each chunk's embedded text (no header in A and B)."""
    chunks = chunk_document(Document("d", "d", text, format="plain"), strategy)
    return [(c.end - len(c.text), c.end) for c in chunks]


@pytest.mark.parametrize("length", [1, 30, 65, 66, 131, 300, 512])
def test_the_formula_is_what_the_chunker_does(length):
    # A text without whitespace (the chunker strips none) ten blind chunks long; every
    # start position of a needle in the first nine periods, each counted once.
    text = "x" * (TARGET * 10)
    starts = range(0, TARGET * 9)
    for strategy, overlap in (("A", 0), ("B", OVERLAP)):
        spans = windows(strategy, text)
        kept = [any(lo <= p and p + length <= hi for lo, hi in spans) for p in starts]
        share = 1 - np.mean(kept)
        assert share == pytest.approx(destroy_probability(length, TARGET, overlap)), strategy


def test_overlap_protects_exactly_the_short_needles():
    assert protected_length(64) == 65
    assert destroy_probability(65, 512, 64) == 0 < destroy_probability(66, 512, 64)


def test_the_range_of_the_count_is_the_exact_distribution():
    for p in (0.1, 0.37):
        assert poisson_binomial_range(np.full(32, p)) == tuple(
            int(x) for x in stats.binom.ppf([0.025, 0.975], 32, p)
        )


def test_expected_against_observed():
    e = expected_destroyed([131] * 32, observed=8)
    assert e.expected == pytest.approx(32 * 130 / 512) and e.agrees
    assert not expected_destroyed([131] * 32, observed=20).agrees
    # The chapter's 4 destroyed of 32 by blind cuts implies needles of about 65 characters.
    assert implied_length(4, 32) == 65


def test_entries_judge_counts_by_the_predicted_range():
    from rag_lab.claims.verdicts import Verdict
    from rag_lab.evaluation.geometry import entries

    # 32 needles of 65 characters: A expects 32·64/512 = 4 destroyed, B exactly none.
    lengths = [65] * 32
    good = {e.claim: e for e in entries(lengths, {"A": 4, "B": 0}, "02", "d2l")}
    assert good["geometry-A"].verdict is Verdict.REPRODUCES
    assert good["geometry-B"].verdict is Verdict.REPRODUCES
    assert "0 of 32 longer than 65" in good["overlap-protects-short"].here
    # Fifteen destroyed is far outside A's range; one destroyed under B is impossible.
    bad = {e.claim: e for e in entries(lengths, {"A": 15, "B": 1}, "02", "d2l")}
    assert bad["geometry-A"].verdict is Verdict.CONTRADICTED
    assert bad["geometry-B"].verdict is Verdict.CONTRADICTED


def test_geometry_counts_one_needle_per_excerpt():
    from types import SimpleNamespace

    from rag_lab.spans import Span

    two = (Span("d", 0, 10), Span("d", 20, 151))
    bench = SimpleNamespace(references=[two, (Span("d", 0, 65),)])
    destroyed = pd.DataFrame({"excerpts destroyed": [2, 0]}, index=["A", "B"])
    lengths, counts = spans.geometry_inputs(bench, SimpleNamespace(destroyed=destroyed))
    assert lengths == [10, 131, 65] and counts == {"A": 2, "B": 0}
    view = geometry.expected_table(lengths, counts)
    assert view.loc["A", "observed"] == 2 and view.loc["B", "overlap"] == 64
    # Expected under A: (9 + 130 + 64)/512; under B only the 131-character one can go.
    assert view.loc["A", "expected"] == pytest.approx(203 / 512) and view.loc["B", "agrees"]
