"""What the 64-character overlap rescues, and what it costs a chunk's vector.

Two things the hit counts of notebooks 02–03 do not show:

* **Rescued, but quoted cut.** A hit is scored on a chunk's embedded ``text``, which starts
  with the overlap (the previous chunk's last 64 characters); the prompt and the citation
  quote its ``content``, which does not. A needle that only the overlap holds whole is found
  by retrieval and reaches the generator cut in two. :func:`quoted_table` scores the same
  ranking both ways: the needle whole in the embedded text (the lab's hit) and whole in the
  quoted content.
* **The pull.** The chapter argues the overlap drags a chunk's mean vector toward its
  neighbour's topic. :func:`pull` measures it directly: the cosine of each overlapping
  chunk's vector to its predecessor's, against the same chunk embedded without overlap
  (B against A, D against C, F against E: the same content, the same predecessor vector).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_lab import dense
from rag_lab.chunking import Chunk
from rag_lab.evaluation.chunking import Destroyed
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, count_entry, paired_entries
from rag_lab.metrics import first_hit_ranks, hits_at, relevant_chunks
from rag_lab.ranking import order

STRATEGIES = ("B", "D", "F")
"""The strategies with an overlap."""
WITHOUT = {"B": "A", "D": "C", "F": "E"}
"""Each overlapping strategy and the same chunking without the overlap."""
K = 5


def quoted(chunks: Sequence[Chunk]) -> list[Chunk]:
    """The chunks as the prompt and the citation see them: ``text`` replaced by ``content``."""
    return [dataclasses.replace(c, text=c.content) for c in chunks]


def ranks_both_ways(lab: Lab, strategy: str) -> dict[str, list[int | None]]:
    """First-hit ranks of dense retrieval over ``strategy``: the needle whole in the
    embedded text (``embedded``), and whole in the quoted content (``quoted``)."""
    index = lab.index(strategy)
    vectors = lab.encoder.encode([q.text for q in lab.queries])
    distances = dense.cosine_distance_matrix(vectors, index.vectors)
    rankings = [order(row, descending=False) for row in distances]
    return {
        "embedded": first_hit_ranks(rankings, relevant_chunks(index.chunks, lab.queries)),
        "quoted": first_hit_ranks(rankings, relevant_chunks(quoted(index.chunks), lab.queries)),
    }


def rescued_cut(lab: Lab, strategy: str) -> list[str]:
    """Questions whose needle some chunk's embedded text holds whole but no chunk's content:
    the rescues that reach the prompt cut."""
    chunks = lab.chunks_by[strategy]
    questions = lab.qset.questions
    text = relevant_chunks(chunks, questions)
    content = relevant_chunks(quoted(chunks), questions)
    return [q.id for q, t, c in zip(questions, text, content, strict=True) if t and not c]


def quoted_table(
    ranks: dict[str, dict[str, list[int | None]]], ks: Sequence[int] = (1, K, 20)
) -> pd.DataFrame:
    """Per overlapping strategy and k: Recall@k on the embedded text and on the quoted content,
    and the queries found but quoted cut (in queries, both phrasings counted)."""
    rows = []
    for s, r in ranks.items():
        for k in ks:
            e, q = hits_at(r["embedded"], k), hits_at(r["quoted"], k)
            rows.append(
                {
                    "strategy": s,
                    "k": k,
                    "R@k embedded": e.mean(),
                    "R@k quoted": q.mean(),
                    "found, quoted cut": int((e & ~q).sum()),
                }
            )
    return pd.DataFrame(rows).set_index(["strategy", "k"])


def quoted_entries(
    ranks: dict[str, dict[str, list[int | None]]],
    rescued: dict[str, list[str]],
    clusters: Sequence[str],
    questions: int,
    notebook: str = "03",
) -> list[Entry]:
    """For each overlapping strategy: hits on the quoted content against the embedded text
    (the chapter counts the second, the reader gets the first), and the rescued needles that
    reach the prompt whole (the chapter's implied claim: all of them)."""
    out = []
    for s, r in ranks.items():
        out += paired_entries(notebook, "d2l", [f"{s}-quoted@R{K}"], r, clusters)
    for s, ids in rescued.items():
        out.append(
            count_entry(
                f"{s}-rescues-whole",
                notebook=notebook,
                benchmark="d2l",
                holds=not ids,
                here=f"{len(ids)} of {questions}" + (f": {', '.join(ids)}" if ids else ""),
                estimate=len(ids),
            )
        )
    return out


@dataclasses.dataclass(frozen=True)
class Pull:
    """Per chunk with a predecessor: its cosine to the predecessor's vector, with and
    without the overlap."""

    strategy: str
    documents: list[str]
    with_overlap: np.ndarray
    without: np.ndarray

    @property
    def increase(self) -> np.ndarray:
        return self.with_overlap - self.without

    def by_document(self) -> tuple[float, float, float]:
        """The mean increase per document, averaged over documents, with a 95 % t-interval
        over documents (a document's chunks are not independent of each other)."""
        from scipy import stats

        frame = pd.DataFrame({"doc": self.documents, "d": self.increase})
        means = frame.groupby("doc")["d"].mean().to_numpy()
        m = float(means.mean())
        half = float(stats.t.ppf(0.975, len(means) - 1) * means.std(ddof=1) / np.sqrt(len(means)))
        return m, m - half, m + half


def pull(lab: Lab, strategy: str) -> Pull:
    """Chunk i of ``strategy`` against chunk i − 1 of its overlap-free twin, beside chunk i of
    the twin against the same predecessor. Only chunks whose content and offsets match the
    twin's are paired (all of them when the overlap changes nothing else)."""
    base = WITHOUT[strategy]
    over, plain = lab.index(strategy), lab.index(base)
    at = {c.id: i for i, c in enumerate(plain.chunks)}
    docs, with_overlap, without = [], [], []
    for i, c in enumerate(over.chunks):
        j, prev = at.get(c.id), at.get(f"{c.doc_id}#{c.index - 1}")
        if j is None or prev is None or c.index == 0:
            continue
        twin = plain.chunks[j]
        if (twin.content, twin.start, twin.end) != (c.content, c.start, c.end):
            continue
        docs.append(c.doc_id)
        with_overlap.append(float(np.dot(over.vectors[i], plain.vectors[prev])))
        without.append(float(np.dot(plain.vectors[j], plain.vectors[prev])))
    return Pull(strategy, docs, np.array(with_overlap), np.array(without))


def pull_table(pulls: Sequence[Pull]) -> pd.DataFrame:
    """Per overlapping strategy: chunks paired, mean cosine to the predecessor with and
    without the overlap, and the increase by document with its interval."""
    rows = []
    for p in pulls:
        m, lo, hi = p.by_document()
        rows.append(
            {
                "strategy": f"{p.strategy} vs {WITHOUT[p.strategy]}",
                "chunks": len(p.without),
                "cos without": p.without.mean(),
                "cos with": p.with_overlap.mean(),
                "increase [95 % CI]": f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]",
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


def pull_entries(
    pulls: Sequence[Pull], notebook: str = "03", benchmark: str = "d2l"
) -> list[Entry]:
    """The chapter's mechanism: the overlap moves a chunk's vector toward its predecessor.
    Reproduces when the interval of the mean increase (by document) lies above zero."""
    out = []
    for p in pulls:
        m, lo, hi = p.by_document()
        out.append(
            count_entry(
                f"{p.strategy}-overlap-pulls",
                notebook=notebook,
                benchmark=benchmark,
                holds=lo > 0,
                here=f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}] by document, {len(p.without)} chunks",
                estimate=m,
            )
        )
    return out


def rescued_by_overlap(destroyed: Destroyed) -> dict[str, tuple[str, ...]]:
    """Per strategy with an overlap: the questions its twin without it destroys
    (:data:`WITHOUT`) and it holds whole, in question order."""
    lost = destroyed.questions
    return {
        s: tuple(q for q in lost[b] if q not in lost[s])
        for s, b in WITHOUT.items()
        if {s, b} <= set(lost)
    }
