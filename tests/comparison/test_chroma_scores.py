"""``span_scores`` against a character-by-character restatement of Chroma's scoring.

Chroma's ``chunking_evaluation`` is not installable here (not on the package index the lab
uses, and it pulls in chromadb), and its code is not copied into this repository. The
oracle below is ours: it states what ``_scores_from_dataset_and_retrievals`` in
``chunking_evaluation/evaluation_framework/base_evaluation.py`` (brandonstarxel/
chunking_evaluation, read at commit 23ee9651e861) computes, one character offset at a time,
with none of the interval arithmetic of :func:`rag_lab.metrics.span_scores`. Each term
says which of their variables it stands for.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lab.metrics import span_scores

pytestmark = pytest.mark.comparison

Range = tuple[str, int, int]


def _oracle(references: list[Range], retrieved: list[Range]) -> tuple[float, float, float]:
    """Recall, precision and IoU counted over sets of ``(doc, offset)`` characters."""
    retrieved_chars = {(d, i) for d, s, e in retrieved for i in range(s, e)}
    # numerator_sets: the union of every chunk ∩ reference of the same corpus.
    covered = {(d, i) for d, s, e in references for i in range(s, e)} & retrieved_chars
    # unused_highlights: what is left of each reference, reference by reference.
    unused = sum(1 for d, s, e in references for i in range(s, e) if (d, i) not in covered)
    recall_denominator = sum(e - s for _, s, e in references)  # summed, not united
    precision_denominator = sum(e - s for _, s, e in retrieved)  # every chunk, every time
    iou_denominator = precision_denominator + unused
    n = len(covered)
    return n / recall_denominator, n / precision_denominator, n / iou_denominator


# Zero-length chunks, chunks that touch a reference, overlapping references and chunks, and
# chunks of another document are all drawn.
_ref = st.tuples(st.sampled_from("dd e"), st.integers(0, 60), st.integers(1, 30))
_chunk = st.tuples(st.sampled_from("def"), st.integers(0, 60), st.integers(0, 40))


def _ranges(draws) -> list[Range]:
    return [(d.strip() or "d", s, s + n) for d, s, n in draws]


@settings(max_examples=500, deadline=None)
@given(st.lists(_ref, min_size=1, max_size=5), st.lists(_chunk, min_size=1, max_size=8))
def test_span_scores_agree_with_the_character_oracle(refs, chunks):
    refs, chunks = _ranges(refs), _ranges(chunks)
    if sum(e - s for _, s, e in chunks) == 0:
        return  # their code divides by zero here; ours raises ValueError (tested elsewhere)
    assert tuple(span_scores(refs, chunks)) == pytest.approx(_oracle(refs, chunks), abs=1e-12)


def test_the_oracle_reproduces_the_hand_computed_cases():
    # The same cases as tests/test_metrics.py, through the oracle.
    assert _oracle([("d", 10, 20)], [("d", 0, 10), ("d", 10, 20)]) == (1.0, 0.5, 0.5)
    assert _oracle([("d", 10, 20)], [("d", 5, 15), ("d", 10, 20)]) == (1.0, 0.5, 0.5)
    assert _oracle([("d", 0, 10), ("d", 5, 15)], [("d", 0, 15)]) == (0.75, 1.0, 1.0)
