"""A half-migrated index: what vectors from two pipelines do to a search that cannot tell.

The chapter's case for stamping every vector with what built it: after a model or pooling
change, an index that was re-embedded only in part holds vectors of the same dimension
from two pipelines. Nothing fails (a cosine between any two 384-dim vectors is a number),
and the search answers as confidently as ever.

Here that index is built for real, on the lab's corpus and chunking E: the chunks of every
second document (sorted by id) keep the vectors of an *older pipeline*, the same packaged
all-MiniLM-L6-v2 pooled differently (the ``[CLS]`` token's vector, unit length:
:class:`ClsPooled`), while the rest and every query are embedded by the current one (mean
pooling). Measured against the same index embedded whole by the current pipeline:

* recall on the questions whose needle lies in a stale document, and on the others;
* how far the queries sit from the stale and the current chunks (the distributions the
  refusal threshold of notebook 06 is set on);
* answers without the answer: queries the gate lets through at the chapter's cutoff while
  none of the chunks the prompt would get holds their needle, and negatives answered.

The stamps' refusal of such an index is measured on a real SQLite index by
:func:`rag_lab.experiments.nb08_index_hygiene.stamped_index` (notebook 08): a
:class:`StampCheck`, judged with the rest by :func:`entries`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rag_lab import dense
from rag_lab.claims.judge import PairedRecord
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import PAIRED_METHOD, Entry, count_entry, entry, paired_entries
from rag_lab.evaluation.render import Table
from rag_lab.gate import CUTOFF
from rag_lab.metrics import first_hit_ranks, recall_at, relevant_chunks
from rag_lab.models.minilm import Fingerprint
from rag_lab.ranking import order
from rag_lab.stats import cluster_paired, paired_difference

STRATEGY = "E"
K = 5
"""Recall@5: the cutoff of the chapter's headline comparisons."""
CURRENT, MIXED = "current", "half-migrated"


class ClsPooled:
    """The older pipeline: the packaged all-MiniLM-L6-v2's ``[CLS]`` token vector, unit length.

    Same model, same 384 dimensions, a different pooling: what a pipeline that changed its
    pooling (or a model whose card says CLS) would have written. The token vectors come
    from :class:`~rag_lab.models.token_vectors.LateInteraction` (cached on disk), whose first
    row is ``[CLS]``; the fingerprint says ``pooling="cls"``, so a stamp built from it
    differs from the current pipeline's.
    """

    def __init__(self, tokens=None) -> None:
        if tokens is None:
            from rag_lab.models.token_vectors import LateInteraction

            tokens = LateInteraction()
        self._tokens = tokens
        self.fingerprint: Fingerprint = dataclasses.replace(tokens.fingerprint, pooling="cls")

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        rows = [m[0] for m in self._tokens.tokens(list(texts))]
        if not rows:
            return np.zeros((0, self.fingerprint.dimensions), dtype=np.float32)
        v = np.stack(rows).astype(np.float64)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def stale_documents(doc_ids: Sequence[str]) -> frozenset[str]:
    """Every second document in sorted order: half the corpus, spread over its chapters."""
    return frozenset(sorted(set(doc_ids))[1::2])


@dataclass(frozen=True)
class Migration:
    """Distances of the lab's queries and negatives to the whole and the half-migrated index."""

    stale: frozenset[str]
    """Documents whose chunks keep the older pipeline's vectors."""
    stale_rows: np.ndarray
    """Per chunk (in index order): does it hold an older vector?"""
    query_stale: np.ndarray
    """Per answerable query: is its needle in a stale document?"""
    clusters: list[str]
    relevant: list[set[int]]
    current: tuple[np.ndarray, np.ndarray]
    """(queries × chunks, negatives × chunks) cosine distances, every vector current."""
    mixed: tuple[np.ndarray, np.ndarray]
    """The same against the half-migrated index."""
    cutoff: float = CUTOFF

    def ranks(self, which: str) -> list[int | None]:
        answerable = (self.current if which == CURRENT else self.mixed)[0]
        rankings = [order(row, descending=False) for row in answerable]
        return first_hit_ranks(rankings, self.relevant)

    def answered_without_needle(self, which: str, k: int = K) -> np.ndarray:
        """Per answerable query: the gate lets it through (its nearest chunk is within the
        cutoff) and none of its top ``k`` chunks, the prompt's context, holds its needle."""
        answerable = (self.current if which == CURRENT else self.mixed)[0]
        passes = answerable.min(axis=1) <= self.cutoff
        ranks = np.array([r if r is not None else k + 1 for r in self.ranks(which)])
        return passes & (ranks > k)


def migrate(lab: Lab, old=None, strategy: str = STRATEGY) -> Migration:
    """Build the half-migrated index of ``strategy`` and every distance both indexes give."""
    index = lab.index(strategy)
    chunks = index.chunks
    stale = stale_documents([c.doc_id for c in chunks])
    rows = np.array([c.doc_id in stale for c in chunks])
    old = old if old is not None else ClsPooled()
    mixed_vectors = index.vectors.copy()
    mixed_vectors[rows] = old.encode([c.text for c in np.array(chunks, dtype=object)[rows]])
    queries = lab.encoder.encode([q.text for q in lab.queries])
    negatives = lab.encoder.encode([n.query for n in lab.negatives])

    def against(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (
            dense.cosine_distance_matrix(queries, vectors),
            dense.cosine_distance_matrix(negatives, vectors),
        )

    return Migration(
        stale,
        rows,
        np.array([q.question.doc in stale for q in lab.queries]),
        lab.clusters,
        relevant_chunks(chunks, lab.queries),
        against(index.vectors),
        against(mixed_vectors),
    )


def _subset(m: Migration, mask: np.ndarray) -> tuple[dict[str, list], list[str]]:
    def kept(values):
        return [v for v, k in zip(values, mask, strict=True) if k]

    return {w: kept(m.ranks(w)) for w in (CURRENT, MIXED)}, kept(m.clusters)


def recall_table(m: Migration, ks: Sequence[int] = (1, K, 20)) -> pd.DataFrame:
    """Recall@k of both indexes, on the stale half's questions and on the others."""
    rows = []
    for half, mask in (("stale half", m.query_stale), ("current half", ~m.query_stale)):
        ranks, _ = _subset(m, mask)
        for k in ks:
            row = {"questions": half, "k": k, "queries": int(mask.sum())}
            rows.append(row | {w: recall_at(ranks[w], k) for w in (CURRENT, MIXED)})
    return pd.DataFrame(rows).set_index(["questions", "k"])


def nearest_distances(m: Migration) -> dict[str, np.ndarray]:
    """For every answerable query: its distance to the nearest stale and current chunk of the
    half-migrated index; and the whole index's needle and negative distances (notebook 06)."""
    answerable = m.mixed[0]
    whole, whole_negative = m.current
    needle = np.array(
        [row[sorted(rel)].min() for row, rel in zip(whole, m.relevant, strict=True) if rel]
    )
    return {
        "stale chunks (older pipeline)": answerable[:, m.stale_rows].min(axis=1),
        "current chunks": answerable[:, ~m.stale_rows].min(axis=1),
        "needle, whole index": needle,
        "negatives, whole index": whole_negative.min(axis=1),
    }


@dataclass(frozen=True)
class StampCheck:
    """A real SQLite index half built by each pipeline, asked by the current one."""

    documents: int
    refusal: str | None  # as the index words it, its folder hidden; None if it searched
    refused: frozenset[str]  # the documents the refusal names as stale


def entries(
    m: Migration, check: StampCheck, notebook: str = "08", benchmark: str = "d2l"
) -> list[Entry]:
    """The chapter's claim, measured: recall lost on the stale half (none on the other), more
    queries of the stale half let through with no needle in the context (confident nonsense),
    and the stamps' refusal naming exactly the stale documents."""
    at = {"notebook": notebook, "benchmark": benchmark}
    out = []
    for claim_id, mask in (
        ("migration-loses-stale@R5", m.query_stale),
        ("migration-current-half@R5", ~m.query_stale),
    ):
        out += paired_entries(notebook, benchmark, [claim_id], *_subset(m, mask))
    stale, clusters = m.query_stale, _subset(m, m.query_stale)[1]
    a, b = m.answered_without_needle(MIXED)[stale], m.answered_without_needle(CURRENT)[stale]
    d, t = paired_difference(a, b, clusters), cluster_paired(a, b, clusters)
    nonsense = entry(
        "migration-confident-nonsense",
        **at,
        record=PairedRecord(d, t),
        here=f"{int(a.sum())} vs {int(b.sum())} of {len(a)} queries",
        estimate=d.estimate,
        ci=(d.lo, d.hi),
        p=t.p,
        method=PAIRED_METHOD,
    )
    refused = count_entry(
        "migration-refused",
        **at,
        holds=check.refusal is not None and check.refused == m.stale,
        here=f"{len(check.refused)} of {check.documents} named, {len(m.stale)} stale",
    )
    return [*out, nonsense, refused]


def distances_table(m: Migration) -> Table:
    """:func:`distance_figure` in numbers."""
    found = nearest_distances(m)
    frame = pd.DataFrame(
        [[len(d), np.median(d), (d <= m.cutoff).sum()] for d in found.values()],
        columns=["queries", "median distance", "within the cutoff"],
        index=pd.Index(list(found), name="nearest"),
    )
    return Table(frame, caption="cosine distance")


def bluffs_table(m: Migration) -> Table:
    """Counts at the cutoff, in each index: the stale half's queries answered, with no needle
    in the top k; queries whose nearest chunk is stale; negatives answered (bluffs)."""
    stale, both = m.query_stale, (m.current, m.mixed)
    top = m.stale_rows[[order(row, descending=False)[0] for row in m.mixed[0]]]
    rows = {
        "stale half: answered": [((d[0].min(axis=1) <= m.cutoff) & stale).sum() for d in both],
        f"… needle not in top {K}": [
            m.answered_without_needle(w)[stale].sum() for w in (CURRENT, MIXED)
        ],
        "nearest chunk is stale": ["–", top.sum()],
        "… for the stale half's queries": ["–", top[stale].sum()],
        "negatives answered": [(d[1].min(axis=1) <= m.cutoff).sum() for d in both],
    }
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=[CURRENT, MIXED])
    frame["of"] = [stale.sum(), stale.sum(), len(top), stale.sum(), len(m.mixed[1])]
    return Table(frame.rename_axis("at the cutoff"))


def distance_figure(m: Migration):
    """Where the two halves sit: each answerable query's distance to its nearest stale and
    nearest current chunk of the half-migrated index, above the whole index's needle and
    negative distances (notebook 06's), with the chapter's cutoff."""
    import matplotlib.pyplot as plt

    from rag_lab.evaluation import plots

    d = nearest_distances(m)
    colors = {
        "stale chunks (older pipeline)": plots.ROLE_COLORS["lost"],
        "current chunks": plots.ROLE_COLORS["kept"],
        "needle, whole index": plots.ROLE_COLORS["answerable"],
        "negatives, whole index": plots.ROLE_COLORS["negative"],
    }
    bins = np.arange(0.1, 1.0001, 0.025)
    outline = {"histtype": "step", "lw": 1.6}
    with plots.style():
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 5.2), sharex=True)
        for panel, names in ((top, list(d)[:2]), (bottom, list(d)[2:])):
            for name in names:
                panel.hist(
                    d[name],
                    bins=bins,
                    color=colors[name],
                    **outline,
                    label=f"{name} (n = {len(d[name])})",
                )
            panel.axvline(m.cutoff, color=plots.NEUTRAL["ink"], ls="--", lw=1)
            panel.set_ylabel("queries per 0.025")
            panel.legend(loc="upper left", fontsize=8)
        top.set_title(
            "Half-migrated index: each answerable query's nearest stale and nearest current chunk",
            fontsize=10,
        )
        bottom.set_title("The whole index (notebook 06): needle and negatives", fontsize=10)
        bottom.set_xlabel(f"cosine distance (dashed: the chapter's cutoff {m.cutoff:g})")
        fig.tight_layout()
    return fig
