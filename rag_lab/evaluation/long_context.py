"""Long contexts: does the generator cite the needle's source less often in twenty chunks?

The chapter warns that twenty chunks instead of four can lower accuracy, and that an answer
is found more reliably at the start and the end of a prompt than in the middle (Liu et al.
2024, *Lost in the Middle*, TACL 12). Here the lab's generator gets the chapter's prompt
(:func:`rag_lab.citations.build_context`) with the chunk that holds the needle and the
hybrid's best-ranked chunks that do not (the most confusable distractors, in rank order),
:data:`SIZES` chunks in all, the needle's chunk placed first, in the middle or last
(:data:`POSITIONS`). An answer is counted when it cites the needle's source by number.

Every prompt is a generation (hundreds to thousands of prompt tokens), so the run is a
**stated sample**: :data:`SAMPLE` questions drawn with a fixed seed, course phrasing, one
query per question; answers are cached like the other generations. Two claims, each paired
by question (a question's prompts are its units, the question the cluster) and judged by the
ledger's rule: four chunks beat twenty (positions pooled), and at twenty chunks the start
and end beat the middle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_lab.answers import parse_markers
from rag_lab.citations import Hit, build_context
from rag_lab.claims.judge import FixedRecord, PairedRecord
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import PAIRED_METHOD, Entry, entry
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Query
from rag_lab.search import ChunkIndex
from rag_lab.stats import cluster_paired, clustered_wilson, paired_difference

SAMPLE = 6
"""Questions: the smallest sample in which the ledger's sign test over questions can reach
p < 0.05 at all (six wins and no loss: p = 2 · 0.5⁶ = 0.031; five give 0.0625). 6 × 9 prompts,
54 generations, about 68,000 prompt tokens: about 14 minutes cold on 2 cores."""
SEED = 0
SIZES = (4, 8, 20)
POSITIONS = ("first", "middle", "last")


def place(size: int, position: str) -> int:
    """Where the needle's chunk goes among ``size`` sources (0-based)."""
    return {"first": 0, "middle": size // 2, "last": size - 1}[position]


@dataclass(frozen=True)
class Trial:
    query: Query
    size: int
    position: str
    cited: bool
    """The answer cites, by number, the source that holds the needle."""


def contexts(
    index: ChunkIndex,
    query: Query,
    hybrid: np.ndarray,
    titles: dict[str, str],
    distances: np.ndarray,
) -> dict[tuple[int, str], tuple[str, int]]:
    """Per (size, position): the prompt and the source number of the needle's chunk."""
    (relevant,) = relevant_chunks(index.chunks, [query])
    if not relevant:
        raise ValueError(f"{query.id}: no chunk holds its needle whole")
    ranked = [int(i) for i in hybrid]
    needle = next(i for i in ranked if i in relevant)
    others = [i for i in ranked if i not in relevant]
    out = {}
    for size in SIZES:
        for position in POSITIONS:
            chosen = others[: size - 1]
            at = place(size, position)
            chosen.insert(at, needle)
            hits = [
                Hit(index.chunks[i], titles[index.chunks[i].doc_id], float(distances[i]))
                for i in chosen
            ]
            prompt, _ = build_context(query.text, hits)
            out[(size, position)] = (prompt, at + 1)
    return out


def run(
    index: ChunkIndex,
    queries: Sequence[Query],
    hybrid: Sequence[np.ndarray],
    distances: np.ndarray,
    titles: dict[str, str],
    generate: Callable[[str], str],
) -> list[Trial]:
    """Every (query, size, position) through ``generate``; ``hybrid`` and ``distances`` are
    per query, in ``queries`` order."""
    trials = []
    for q, ranking, d in zip(queries, hybrid, distances, strict=True):
        for (size, position), (prompt, number) in contexts(index, q, ranking, titles, d).items():
            text = generate(prompt)
            cited = number in parse_markers(text)
            trials.append(Trial(q, size, position, cited))
    return trials


def table(trials: Sequence[Trial]) -> pd.DataFrame:
    """Share of answers citing the needle's source per size and position, with its Wilson
    interval over the sampled questions."""
    rows = []
    for size in SIZES:
        row: dict[str, object] = {"sources": size}
        for position in POSITIONS:
            t = [x for x in trials if x.size == size and x.position == position]
            hits = [x.cited for x in t]
            lo, hi = clustered_wilson(hits, [x.query.question.id for x in t])
            row[f"needle {position}"] = f"{sum(hits)}/{len(t)} [{lo:.2f}, {hi:.2f}]"
        rows.append(row)
    return pd.DataFrame(rows).set_index("sources")


def _paired(a: list[Trial], b: list[Trial]):
    clusters = [x.query.question.id for x in a]
    if clusters != [x.query.question.id for x in b]:
        raise ValueError("the two sides must pair the same questions in the same order")
    ha, hb = [x.cited for x in a], [x.cited for x in b]
    return paired_difference(ha, hb, clusters), cluster_paired(ha, hb, clusters)


def _select(trials, size=None, positions=POSITIONS) -> list[Trial]:
    key = {p: i for i, p in enumerate(POSITIONS)}
    chosen = [x for x in trials if (size is None or x.size == size) and x.position in positions]
    return sorted(chosen, key=lambda x: (x.query.question.id, key[x.position], x.size))


def entries(trials: Sequence[Trial], notebook: str = "09", benchmark: str = "d2l") -> list[Entry]:
    """Four chunks against twenty (every position), and the ends against the middle at twenty
    (first and last each paired with the middle of the same question)."""
    few, many = _select(trials, SIZES[0]), _select(trials, SIZES[-1])
    ends = _select(trials, SIZES[-1], ("first", "last"))
    middle = [m for m in _select(trials, SIZES[-1], ("middle",)) for _ in range(2)]
    out = []
    for claim_id, (a, b) in (
        (f"context{SIZES[0]}>context{SIZES[-1]}", (few, many)),
        ("ends>middle", (ends, middle)),
    ):
        d, t = _paired(a, b)
        record = PairedRecord(d, t)
        if not any(x.cited for x in (*a, *b)):
            # nothing cited on either side: no variation for any test to read
            record = FixedRecord(
                Verdict.NOT_TESTABLE,
                "no answer on either side cited the needle's source: a floor, not a comparison",
            )
        out.append(
            entry(
                claim_id,
                notebook=notebook,
                benchmark=benchmark,
                record=record,
                here=f"{sum(x.cited for x in a)}/{len(a)} vs {sum(x.cited for x in b)}/{len(b)}, "
                f"{len({x.query.question.id for x in a})} questions",
                estimate=d.estimate,
                ci=(d.lo, d.hi),
                p=t.p,
                method=PAIRED_METHOD,
            )
        )
    return out
