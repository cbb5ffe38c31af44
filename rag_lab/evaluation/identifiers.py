"""Identifier probes (``data/probes.yaml``, apart from the chapter's questions): does BM25
catch the identifiers dense retrieval misses, do trap negatives that name a rare term of the
corpus pass the refusal cutoff, and is BM25's advantage larger on identifiers?

The last claim is relative, read as the chapter means it: an interaction. Measured as a
difference of differences by question: on each identifier question BM25's hits minus dense's
at Recall@k, averaged; the same on the lab's ordinary questions; their difference, with a
percentile bootstrap interval that resamples each group of questions on its own
(:func:`rag_lab.stats.bootstrap_interaction`). It is judged on its interval alone (there is no
sign test of a difference between two independent groups of questions):
:class:`rag_lab.claims.judge.IntervalRecord`.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab import dense, paths
from rag_lab.bm25 import tokenize
from rag_lab.chunking import Chunk
from rag_lab.claims.judge import IntervalRecord
from rag_lab.documents import Document
from rag_lab.evaluation import chapter
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, entry, paired_entries
from rag_lab.evaluation.paired import PairedTable, paired_table
from rag_lab.evaluation.runs import rank_all
from rag_lab.metrics import Ranks, hits_at
from rag_lab.questions import Query, QuestionSet, load_questions
from rag_lab.stats import bootstrap_interaction, per_question
from rag_lab.text import longest_common_run, words

PROBES = paths.DATA / "probes.yaml"
PAIRS = (("BM25", "dense"), ("hybrid", "dense"), ("hybrid", "BM25"))
"""The comparisons on identifier queries, each as (a, b): is a better than b?"""
KS = (1, 4, 8)
IDENTIFIER_CLAIMS = tuple(f"{a}>dense@R{k}:identifiers" for a in ("BM25", "hybrid") for k in KS)
"""The chapter's two identifier claims, each at every k of :data:`KS`: one family of six."""
RARE_MAX_CHUNKS = 3
"""A term is rare when at most this many chunks of the index contain it (BM25 tokens)."""
GENERIC_NAMES = frozenset({"pytorch", "python"})
"""Capitalised words that name the book's tools rather than the sentence's subject."""
LITERAL_WORDS = 4
"""A run of this many consecutive query words in a chunk makes a literal match."""
CLAIM_K = 4
"""The one k that carries the claim, fixed before looking: Recall@4, where the chapter compares
its hybrids. The table shows every k of :data:`KS`; judging all three would need a family
correction that a bootstrap interval per k does not carry."""
A, B = "BM25", "dense"
METHOD = "bootstrap_percentile_by_group"
"""The interval's method: :func:`rag_lab.stats.bootstrap_interaction`, each group of
questions resampled on its own."""


def gaps(ranks: Mapping[str, Ranks], clusters: Sequence[Hashable], k: int):
    """Per question: BM25's hits minus dense's at Recall@``k``, over its phrasings."""
    diff = hits_at(ranks[A], k).astype(float) - hits_at(ranks[B], k).astype(float)
    return per_question(diff, clusters)


def interaction_table(
    probe_ranks: Mapping[str, Ranks],
    probe_clusters: Sequence[Hashable],
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
    ks: Sequence[int] = KS,
) -> pd.DataFrame:
    """Per k: the BM25 − dense gap on identifier and on ordinary questions, and their
    difference with its bootstrap interval."""
    rows = []
    for k in ks:
        ident, ordinary = gaps(probe_ranks, probe_clusters, k), gaps(ranks, clusters, k)
        m, lo, hi = bootstrap_interaction(ident, ordinary)
        rows.append(
            {
                "k": k,
                "identifier gap": ident.mean(),
                "ordinary gap": ordinary.mean(),
                "interaction [95 % CI]": f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]",
                "questions": f"{len(ident)} + {len(ordinary)}",
            }
        )
    return pd.DataFrame(rows).set_index("k").rename_axis("R@k")


def interaction_entries(
    probe_ranks: Mapping[str, Ranks],
    probe_clusters: Sequence[Hashable],
    ranks: Mapping[str, Ranks],
    clusters: Sequence[Hashable],
    notebook: str = "04",
) -> list[Entry]:
    """The claim at :data:`CLAIM_K`: BM25's advantage over dense is larger on identifiers."""
    ident, ordinary = gaps(probe_ranks, probe_clusters, CLAIM_K), gaps(ranks, clusters, CLAIM_K)
    m, lo, hi = bootstrap_interaction(ident, ordinary)
    here = f"{ident.mean():+.3f} vs {ordinary.mean():+.3f} by question "
    here += f"({len(ident)} and {len(ordinary)})"
    record = IntervalRecord(m, (lo, hi), METHOD)
    at = {"notebook": notebook, "benchmark": "d2l probes", "record": record, "here": here}
    return [
        entry(f"identifier-interaction@R{CLAIM_K}", **at, estimate=m, ci=(lo, hi), method=METHOD)
    ]


_WORD = re.compile(r"[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*")
_BACKTICKED = re.compile(r"`([^`]+)`")
_STOP = frozenset(
    "a an and are as at be but by can do does for from how i if in into is it its me my "
    "of on or should so that the their them then there these this to up use using was "
    "what when where which while who why will with without you your".split()
)


def classify(query: str, content: str, literal_words: int = LITERAL_WORDS) -> tuple[str, str]:
    """``literal match`` (a run of :data:`LITERAL_WORDS` words), ``near miss`` (content
    words only) or ``semantic only``; and the words shared.

    >>> classify("how do i bake bread", "Tensors hold numbers.")
    ('semantic only', '')
    """
    qw, cw = words(query), words(content)
    run = longest_common_run(qw, cw)
    if len(run) >= literal_words:
        return "literal match", " ".join(run)
    shared = sorted({w for w in qw if w not in _STOP} & set(cw))
    return ("near miss", ", ".join(shared)) if shared else ("semantic only", "")


def load(docs: Sequence[Document], path=PROBES) -> QuestionSet:
    """The probe file, validated against ``docs`` by the question rules (no count expected)."""
    return load_questions(path, docs, expected=None)


def terms(text: str) -> set[str]:
    """The identifier-like words of a sentence, lower-cased (hyphenated: whole and parts):
    backticked, or with ``_``, a digit, a capital after the first letter, or a capital
    inside the sentence.

    >>> sorted(terms("Invoking `backward` in PyTorch on SGD, as Gauss did."))
    ['backward', 'gauss', 'sgd']
    >>> sorted(terms("Fashion-MNIST and RKHS-based methods"))
    ['fashion-mnist', 'mnist', 'rkhs', 'rkhs-based']
    """
    found = {w for span in _BACKTICKED.findall(text) for w in _WORD.findall(span)}
    for i, m in enumerate(_WORD.finditer(_BACKTICKED.sub(" ", text))):
        parts = [m.group(), *(m.group().split("-") if "-" in m.group() else ())]
        found |= {p for j, p in enumerate(parts) if _identifier_like(p, i == 0 and j < 2)}
    return {w.lower() for w in found if len(w) >= 2} - GENERIC_NAMES


def _identifier_like(word: str, first: bool) -> bool:
    return (
        "_" in word
        or any(c.isdigit() for c in word)
        or any(c.isupper() for c in word[1:])
        or (not first and word[:1].isupper())
    )


def chunk_frequency(chunks: Sequence[Chunk], term: str) -> int:
    """How many chunks' searched text holds every BM25 token of ``term``."""
    wanted = set(tokenize(term))
    return sum(wanted <= set(tokenize(c.text)) for c in chunks)


def rare_terms(query: str, chunks: Sequence[Chunk], most: int = RARE_MAX_CHUNKS) -> list[str]:
    """The query's :func:`terms` found in at least one and at most ``most`` chunks."""
    return sorted(t for t in terms(query) if 1 <= chunk_frequency(chunks, t) <= most)


def rank_probes(lab: Lab, probes: QuestionSet, strategy: str = "E") -> dict[str, Ranks]:
    """First-hit ranks of dense, BM25 and hybrid for every probe query (course first)."""
    index = lab.index(strategy)
    return rank_all(index, probes.queries(), lab.encoder).ranks(index)


def comparisons(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> PairedTable:
    """:data:`PAIRS` at :data:`KS`: per query, and per question with Holm over these rows."""
    return paired_table(ranks, PAIRS, KS, [q.question.id for q in queries])


def comparison_entries(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> list[Entry]:
    """The identifier claims on the probe queries: notebook 04's part of the ledger."""
    clusters = [q.question.id for q in queries]
    return paired_entries("04", "d2l probes", IDENTIFIER_CLAIMS, ranks, clusters)


def trap_table(
    lab: Lab, probes: QuestionSet, strategy: str = "E", cutoff: float = chapter.CUTOFF
) -> pd.DataFrame:
    """Per trap negative: its nearest chunk, whether it passes, its rare terms, what they share."""
    index, negs = lab.index(strategy), list(probes.negatives)
    d = dense.cosine_distance_matrix(lab.encoder.encode([n.query for n in negs]), index.vectors)
    rows = {}
    for neg, row in zip(negs, d, strict=True):
        c = index.chunks[int(np.argmin(row))]
        rare = rare_terms(neg.query, index.chunks)
        kind, shared = classify(neg.query, c.content)
        rows[neg.id] = {
            "query": neg.query,
            "distance": round(float(row.min()), 3),
            "nearest chunk": f"{c.doc_id} > {c.section or '(intro)'}",
            "passes": bool(row.min() < cutoff),
            "rare terms": ", ".join(rare),
            "holds rare term": any(chunk_frequency([c], t) for t in rare),
            "kind": kind,
            "shared": shared,
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("id")
