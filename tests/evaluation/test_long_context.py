"""Long contexts: where the needle's chunk goes, what counts as citing it, the two claims."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rag_lab.chunking import Chunk
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import long_context as lc
from rag_lab.questions import Query, Question
from rag_lab.search import ChunkIndex


def index(n: int = 25) -> ChunkIndex:
    texts = ["the needle is here"] + [f"filler number {i}" for i in range(1, n)]
    chunks = [Chunk("d", i, t, t, "S", 10 * i, 10 * i + len(t)) for i, t in enumerate(texts)]
    return ChunkIndex(chunks, np.zeros((n, 3), dtype=np.float32))


def queries(n: int) -> list[Query]:
    return [
        Query(Question(f"q{i}", "d", "needle is here", "where?", "t?"), "course") for i in range(n)
    ]


def test_the_needle_goes_first_middle_or_last_among_the_best_others():
    assert [lc.place(20, p) for p in lc.POSITIONS] == [0, 10, 19]
    idx = index()
    (q,) = queries(1)
    ranking = np.array([5, 0, 3, 7, 1, 2, 4, 6, *range(8, 25)])
    out = lc.contexts(idx, q, ranking, {"d": "Doc"}, np.zeros(25))
    prompt, number = out[(4, "last")]
    assert number == 4
    sources = re.findall(r"^\[(\d+)\] .*\n(.*)$", prompt, re.MULTILINE)
    assert [text for _, text in sources] == [
        "filler number 5", "filler number 3", "filler number 7", "the needle is here"
    ]  # fmt: skip
    assert out[(20, "middle")][1] == 11


def test_run_counts_a_citation_of_the_needles_number_only():
    idx = index()
    qs = queries(2)
    ranking = [np.arange(25), np.arange(25)]
    trials = lc.run(idx, qs, ranking, np.zeros((2, 25)), {"d": "Doc"}, lambda p: "It is here [1].")
    cited = {(t.size, t.position) for t in trials if t.cited}
    assert cited == {(s, "first") for s in lc.SIZES}
    assert len(trials) == 2 * len(lc.SIZES) * len(lc.POSITIONS)


def test_entries_pair_by_question():
    idx = index()
    qs = queries(12)
    ranking = [np.arange(25)] * 12

    def cites_when_short_or_at_an_end(prompt: str) -> str:
        sources = re.findall(r"^\[(\d+)\] .*\n(.*)$", prompt, re.MULTILINE)
        at = next(int(n) for n, text in sources if "needle" in text)
        short = len(sources) == 4
        return f"Here [{at}]." if short or at in (1, len(sources)) else "Here [1]."

    trials = lc.run(
        idx, qs, ranking, np.zeros((12, 25)), {"d": "Doc"}, cites_when_short_or_at_an_end
    )
    by = {e.claim: e for e in lc.entries(trials)}
    few = by["context4>context20"]
    assert few.here == "36/36 vs 24/36, 12 questions"
    assert few.verdict is Verdict.REPRODUCES
    ends = by["ends>middle"]
    assert ends.here == "24/24 vs 0/24, 12 questions"
    assert ends.verdict is Verdict.REPRODUCES
    assert ends.estimate == pytest.approx(1.0) and ends.reason == ""
    # Nothing cited anywhere: a floor, not testable, the numbers kept beside the reason.
    never = lc.run(idx, qs, ranking, np.zeros((12, 25)), {"d": "Doc"}, lambda p: "No.")
    for e in lc.entries(never):
        assert e.verdict is Verdict.NOT_TESTABLE and e.reason
        assert e.estimate == 0.0 and e.p == 1.0
    table = lc.table(trials)
    assert table.loc[20, "needle middle"].startswith("0/12")
