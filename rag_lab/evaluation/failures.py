"""What the deployed configuration failed on, and what it returned instead.

A query fails when the chunk holding its needle is not among the first
:data:`rag_lab.gate.MAX_KEPT` the retriever returns (the chunks passed to the generator at
most), or when the gate refuses it: its first chunk is not strictly under the cutoff. For
each failure, :class:`Failures` keeps what the query got first (the chunk, its section, its
cosine distance, the start of its text), so a team sees the wrong answer beside the miss.
Everything here is read off a :class:`~rag_lab.evaluation.deploy.Deployment` and the
served strategy's chunks: nothing is embedded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rag_lab import gate
from rag_lab.chunking import Chunk
from rag_lab.evaluation.deploy import Deployment
from rag_lab.text import flat

EXCERPT = 80
"""Characters of the returned chunk shown beside a failure."""


@dataclass(frozen=True)
class Failure:
    """One answerable query the deployed configuration did not answer with its needle."""

    query: str
    """``question/phrasing``."""
    text: str
    """The query as asked."""
    rank: int | None
    """Where the needle's chunk came (None: in no chunk, or not ranked)."""
    destroyed: bool
    """No chunk holds the needle whole: no retriever can find it."""
    refused: bool
    """The gate returned nothing: the first chunk is not strictly under the cutoff."""
    top: str
    """The chunk the query got first (``doc#index``)."""
    section: str
    distance: float
    excerpt: str

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "text": self.text,
            "rank": self.rank,
            "destroyed": self.destroyed,
            "refused": self.refused,
            "top chunk": self.top,
            "section": self.section,
            "distance": round(self.distance, 6),
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True)
class Failures:
    """The deployed configuration's misses at ``k`` and refusals, and its hits by k."""

    strategy: str
    retriever: str
    cutoff: float
    k: int
    """The depth a needle must be found within: the chunks the gate keeps at most."""
    ks: tuple[int, ...]
    found: tuple[int, ...]
    """Queries whose needle came within each of ``ks``."""
    queries: int
    failures: tuple[Failure, ...]

    def found_view(self) -> pd.DataFrame:
        """Queries found within each k, and the queries the gate refused."""
        refused = sum(f.refused for f in self.failures)
        found = zip(self.ks, self.found, strict=True)
        rows = {f"found within {k}": f"{n}/{self.queries}" for k, n in found}
        rows[f"refused at {self.cutoff:.3f}"] = f"{refused}/{self.queries}"
        return pd.DataFrame([rows], index=pd.Index([self.retriever], name="retriever"))

    def view(self) -> pd.DataFrame:
        """A row per failure: the needle's rank, and what the query got first instead."""
        rows = [
            {
                "needle at": "in no chunk" if f.destroyed else (f.rank or "–"),
                "gate": "refused" if f.refused else "answered",
                "got first": f.top,
                "distance": f"{f.distance:.3f}",
                "section": f.section or "–",
                "its text": f.excerpt,
            }
            for f in self.failures
        ]
        columns = ["needle at", "gate", "got first", "distance", "section", "its text"]
        index = pd.Index([f.query for f in self.failures], name="query")
        return pd.DataFrame(rows, index=index, columns=columns)

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "retriever": self.retriever,
            "cutoff": self.cutoff,
            "k": self.k,
            "found": [{"k": k, "queries": n} for k, n in zip(self.ks, self.found, strict=True)],
            "queries": self.queries,
            "failures": [f.to_json() for f in self.failures],
        }


def failures(
    deployed: Deployment,
    chunks: Sequence[Chunk],
    texts: dict[str, str],
    retriever: str = "dense",
    k: int = gate.MAX_KEPT,
) -> Failures:
    """The failures of ``deployed``, whose chunks are ``chunks`` and whose queries were
    asked as ``texts`` (query id → text)."""
    by_id = {c.id: c for c in chunks}
    destroyed = set(deployed.destroyed)
    rows = []
    for q, c, r, top, d in zip(
        deployed.queries,
        deployed.clusters,
        deployed.ranks,
        deployed.top,
        deployed.nearest,
        strict=True,
    ):
        refused = not d < deployed.cutoff
        if r is not None and r <= k and not refused:
            continue
        chunk = by_id[top]
        words = flat(chunk.content)
        excerpt = words if len(words) <= EXCERPT else words[: EXCERPT - 1].rstrip() + "…"
        rows.append(
            Failure(q, texts[q], r, c in destroyed, refused, top, chunk.section, d, excerpt)
        )
    found = tuple(sum(r is not None and r <= kk for r in deployed.ranks) for kk in deployed.ks)
    return Failures(
        deployed.strategy,
        retriever,
        deployed.cutoff,
        k,
        deployed.ks,
        found,
        len(deployed.queries),
        tuple(rows),
    )
