"""Reciprocal rank fusion against the score fusion the chapter rejects, on the same runs.

The chapter fuses dense and BM25 by rank (RRF, k = 60) and rejects a weighted sum of scores:
normalised per query, the weight a system gets depends on how good its best hit happened to
be. Published work disagrees in part: a convex combination of normalised scores, its weight
tuned, beats RRF in and out of domain (Bruch, Gai & Ingber, ACM TOIS 2023), and RRF's k barely
matters between 10 and 100 (Cormack, Clarke & Büttcher, SIGIR 2009). This module runs both
on one set of queries:

- RRF at each k of :data:`RRF_KS`, fusing dense's full ranking with the chunks BM25 retrieved
  (a positive score), as :func:`rag_lab.evaluation.runs.rank_all` does;
- the convex combination ``w · dense + (1 − w) · BM25`` of min-max and of z-score normalised
  scores (:func:`rag_lab.fusion.convex`), its weight chosen by cross-validation over
  questions: the questions are dealt into :data:`FOLDS` folds (a seeded shuffle), and each
  fold is ranked with the weight of :data:`WEIGHTS` that maximises Recall@:data:`OBJECTIVE_K`
  on the other folds, never on its own questions (ties: the weight nearest 0.5, then the
  smaller).

What counts as a hit is the caller's (``first_hits``: needles held whole on the lab's
corpus, every excerpt covered on Chroma's), so one code path serves both benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from rag_lab import dense, fusion
from rag_lab.metrics import Ranks, first_hit_ranks, hits_at, relevant_chunks
from rag_lab.questions import Query
from rag_lab.ranking import order
from rag_lab.search import ChunkIndex, TextEncoder

RRF_KS = (10, 20, 40, 60, 100)
"""RRF's damping constants compared; 60 is the paper's and the chapter's."""
WEIGHTS = tuple(round(w, 2) for w in np.linspace(0.0, 1.0, 21))
"""The weights of dense tried for the convex combination: 0, 0.05, …, 1."""
FOLDS = 8
OBJECTIVE_K = 4
"""The weight is chosen for Recall@4, the cutoff at which the chapter compares its hybrids."""
SEED = 0


@dataclass(frozen=True)
class Scores:
    """Each query's dense similarity (1 − cosine distance) and BM25 score of every chunk."""

    similarity: np.ndarray
    """Queries × chunks."""
    bm25: np.ndarray
    """Queries × chunks."""


def scores(index: ChunkIndex, texts: Sequence[str], encoder: TextEncoder) -> Scores:
    """Both systems' scores of every chunk of ``index`` for each query text."""
    vectors = encoder.encode(list(texts))
    similarity = 1.0 - dense.cosine_distance_matrix(vectors, index.vectors).astype(np.float64)
    bm25 = np.stack([index.bm25.scores(t) for t in texts]).astype(np.float64)
    return Scores(similarity, bm25)


@dataclass(frozen=True)
class FusionRuns:
    """First-hit ranks per query of every fusion, and the weights cross-validation chose."""

    ranks: dict[str, list[int | None]]
    """``RRF k=10`` … ``RRF k=100``, ``min-max`` and ``z-score`` (each cross-validated)."""
    weights: dict[str, list[float]]
    """Per normalisation, the weight chosen for each fold, in fold order."""
    folds: int

    def rrf(self, k: int) -> str:
        return f"RRF k={k}"


def fuse(
    s: Scores,
    first_hits: Callable[[list[np.ndarray]], Ranks],
    clusters: Sequence[Hashable],
    *,
    rrf_ks: Sequence[int] = RRF_KS,
    weights: Sequence[float] = WEIGHTS,
    folds: int = FOLDS,
    objective_k: int = OBJECTIVE_K,
    seed: int = SEED,
) -> FusionRuns:
    """Every fusion of ``s`` scored by ``first_hits`` (rankings → first-hit rank per query),
    the convex weights chosen by cross-validation over the questions ``clusters`` names."""
    n = len(s.similarity)
    if s.bm25.shape != s.similarity.shape or len(clusters) != n:
        raise ValueError(
            f"{s.similarity.shape} similarities, {s.bm25.shape} BM25 scores, {len(clusters)} "
            "query clusters: one row and one cluster per query"
        )
    dense_r = [order(row) for row in s.similarity]
    bm25_r = [order(row) for row in s.bm25]
    retrieved = [r[row[r] > 0] for r, row in zip(bm25_r, s.bm25, strict=True)]
    ranks: dict[str, list[int | None]] = {}
    for k in rrf_ks:
        fused = [np.array(fusion.rrf([d, b], k=k)) for d, b in zip(dense_r, retrieved, strict=True)]
        ranks[f"RRF k={k}"] = list(first_hits(fused))
    fold_of = assign_folds(clusters, folds, seed)
    chosen: dict[str, list[float]] = {}
    for how in fusion.NORMALISERS:
        by_weight = {
            w: list(
                first_hits(
                    [fusion.convex(a, b, w, how) for a, b in zip(s.similarity, s.bm25, strict=True)]
                )
            )
            for w in weights
        }
        picked: list[int | None] = [None] * n
        chosen[how] = []
        for f in range(folds):
            train = fold_of != f
            w = best_weight(
                {w: hits_at(r, objective_k)[train].mean() for w, r in by_weight.items()}
            )
            chosen[how].append(w)
            for i in np.flatnonzero(~train):
                picked[i] = by_weight[w][i]
        ranks[how] = picked
    return FusionRuns(ranks, chosen, folds)


def needle_runs(index: ChunkIndex, queries: Sequence[Query], encoder: TextEncoder) -> FusionRuns:
    """:func:`fuse` on ``index``, a hit a chunk holding the query's needle whole, the folds
    drawn over the queries' questions."""
    relevant = relevant_chunks(index.chunks, queries)
    s = scores(index, [q.text for q in queries], encoder)
    return fuse(s, lambda r: first_hit_ranks(r, relevant), [q.question.id for q in queries])


def assign_folds(clusters: Sequence[Hashable], folds: int, seed: int = SEED) -> np.ndarray:
    """The fold of each query: its question's, the questions dealt round-robin into
    ``folds`` after a seeded shuffle of their sorted ids (so a question's phrasings never
    straddle a fold)."""
    questions = sorted(set(clusters), key=str)
    if folds < 2 or folds > len(questions):
        raise ValueError(
            f"{folds} folds for {len(questions)} questions: need 2 ≤ folds ≤ questions"
        )
    shuffled = np.random.default_rng(seed).permutation(len(questions))
    fold = {questions[j]: i % folds for i, j in enumerate(shuffled)}
    return np.array([fold[c] for c in clusters])


def best_weight(objective: dict[float, float]) -> float:
    """The weight with the highest objective; ties go to the weight nearest 0.5, then the
    smaller (a plateau says nothing about which side is better).

    >>> best_weight({0.0: 0.5, 0.4: 0.8, 0.6: 0.8, 1.0: 0.7})
    0.4
    """
    top = max(objective.values())
    tied = [w for w, v in objective.items() if v == top]
    return min(tied, key=lambda w: (round(abs(w - 0.5), 9), w))


REFERENCE_K = 60
"""RRF's k in the chapter and in Cormack et al.: every other run is compared with it."""
CLAIM_K = OBJECTIVE_K


def claims(runs: FusionRuns, k: int = CLAIM_K) -> list:
    """The published claims (declared in ``rag_lab/claims/chapter.yaml``, all exploratory:
    they are not the chapter's) on the runs' names at Recall@``k``: RRF's other ks do not
    differ from k = 60 (Cormack et al., within the declared margin), and each
    cross-validated convex combination beats RRF k = 60 (Bruch et al.)."""
    from rag_lab.evaluation.ledger import PairedClaim

    reference = runs.rrf(REFERENCE_K)
    out = [
        PairedClaim(f"RRF{c}~RRF{REFERENCE_K}@R{k}", runs.rrf(c), reference, k)
        for c in sorted(int(name.split("=")[1]) for name in runs.ranks if name.startswith("RRF"))
        if c != REFERENCE_K
    ]
    out += [PairedClaim(f"{how}>RRF@R{k}", how, reference, k) for how in fusion.NORMALISERS]
    return out


def entries(runs: FusionRuns, clusters: Sequence[Hashable], notebook: str, benchmark: str) -> list:
    """:func:`claims` judged by the ledger's rule on ``runs``."""
    from rag_lab.evaluation.ledger import paired_entries

    return paired_entries(notebook, benchmark, claims(runs), runs.ranks, clusters)
