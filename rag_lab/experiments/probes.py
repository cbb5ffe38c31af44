"""Identifier probes: does BM25 catch identifiers that dense retrieval misses, and do literal
traps pass the refusal cutoff?

The chapter claims that dense retrieval is weak on identifiers, error codes, acronyms and
surnames, which BM25 catches, and that a negative sharing a rare literal term with one chunk
can land close to it (its example: 0.671 against the cutoff 0.675). ``data/probes.yaml`` holds
questions whose needles and phrasings carry such a term, and trap negatives that name a rare
term of the corpus but ask what it does not answer. It is kept apart from
``data/questions.yaml``, which keeps the chapter's design.

>>> lab = setup()                                          # doctest: +SKIP
>>> probes = load(lab.docs)                                # doctest: +SKIP
>>> ranks = identifier_ranks(lab, probes)                  # doctest: +SKIP
>>> traps = trap_table(lab, probes)                            # doctest: +SKIP
>>> print(reading(ranks, entries(ranks, probes.queries()), traps))  # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab import dense, paths
from rag_lab.bm25 import tokenize
from rag_lab.chunking import Chunk
from rag_lab.documents import Document
from rag_lab.evaluation import chapter, ledger
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Direction, Entry, PairedClaim, paired_entries
from rag_lab.evaluation.paired import PairedTable, paired_table
from rag_lab.evaluation.runs import rank_all
from rag_lab.experiments import wording
from rag_lab.experiments.nb06_distances_and_refusal import classify
from rag_lab.metrics import Ranks, hits_at
from rag_lab.questions import Query, QuestionSet, load_questions
from rag_lab.text import counted

PROBES = paths.DATA / "probes.yaml"

PAIRS = (("BM25", "dense"), ("hybrid", "dense"), ("hybrid", "BM25"))
"""The comparisons on identifier queries, each as (a, b): is a better than b?"""
KS = (1, 4, 8)
SHOWN = ["pair", "k", "a − b by question", "questions", "p", "per query"]
"""The paired view's columns; the chapter's column is left out, since its results are on its
general questions, not on identifier probes."""


RARE_MAX_CHUNKS = 3
"""A term is rare when at most this many chunks of the index contain it (BM25 tokens)."""
GENERIC_NAMES = frozenset({"pytorch", "python"})
"""Capitalised words that name the book's tools rather than the sentence's subject."""

_WORD = re.compile(r"[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*")
_BACKTICKED = re.compile(r"`([^`]+)`")


def load(docs: Sequence[Document], path=PROBES) -> QuestionSet:
    """The probe file, validated against ``docs`` by the question rules (no count expected)."""
    return load_questions(path, docs, expected=None)


def identifiers(text: str) -> set[str]:
    """The identifier-like words of a sentence, lower-cased.

    A word (letters, digits, ``_``; a hyphenated word both whole and by its parts) of two
    characters or more counts when it is in backticks, holds a ``_`` or a digit, has a
    capital after its first letter (``SGD``, ``ImageNet``, ``NaN``), or is capitalised and
    not the sentence's first word (``Kolmogorov``, ``Gibbs``); :data:`GENERIC_NAMES` do not
    count.

    >>> sorted(identifiers("Invoking `backward` in PyTorch on SGD, as Gauss did."))
    ['backward', 'gauss', 'sgd']
    >>> sorted(identifiers("Fashion-MNIST and RKHS-based methods"))
    ['fashion-mnist', 'mnist', 'rkhs', 'rkhs-based']
    """
    found = {w for span in _BACKTICKED.findall(text) for w in _WORD.findall(span)}
    plain = _BACKTICKED.sub(" ", text)
    for i, m in enumerate(_WORD.finditer(plain)):
        word = m.group()
        parts = word.split("-")
        if _looks_like_identifier(word, first=i == 0):
            found.add(word)
        if len(parts) > 1:
            found |= {
                p for j, p in enumerate(parts) if _looks_like_identifier(p, i == 0 and j == 0)
            }
    return {w.lower() for w in found if len(w) >= 2} - GENERIC_NAMES


def mentions(text: str, identifier: str) -> bool:
    """Does ``text`` contain ``identifier`` as a whole word, ignoring case?"""
    return (
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(identifier)}(?![A-Za-z0-9_])", text, re.I)
        is not None
    )


def chunk_frequency(chunks: Sequence[Chunk], term: str) -> int:
    """How many chunks' searched text holds every BM25 token of ``term``."""
    wanted = set(tokenize(term))
    return sum(wanted <= set(tokenize(c.text)) for c in chunks)


def rare_terms(query: str, chunks: Sequence[Chunk], most: int = RARE_MAX_CHUNKS) -> list[str]:
    """The query's :func:`identifiers` found in at least one and at most ``most`` chunks."""
    return sorted(t for t in identifiers(query) if 1 <= chunk_frequency(chunks, t) <= most)


def identifier_ranks(
    lab: Lab, probes: QuestionSet, strategy: str = "E"
) -> dict[str, list[int | None]]:
    """First-hit ranks of dense, BM25 and hybrid for every probe query (course first)."""
    index = lab.index(strategy)
    return rank_all(index, probes.queries(), lab.encoder).ranks(index)


def identifier_comparisons(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> PairedTable:
    """:data:`PAIRS` at :data:`KS`: per query, and per question with Holm over these rows."""
    return paired_table(ranks, PAIRS, KS, [q.question.id for q in queries])


def identifier_view(paired: PairedTable) -> pd.DataFrame:
    """:func:`identifier_comparisons` as shown, the verdict read from the question-level test."""
    return paired.view(columns=SHOWN)


def trap_table(
    lab: Lab, probes: QuestionSet, strategy: str = "E", cutoff: float = chapter.CUTOFF
) -> pd.DataFrame:
    """One row per trap negative: its nearest chunk, whether the gate lets it through
    (distance strictly under ``cutoff``), its rare terms and whether that chunk holds one,
    and what it shares with the chunk (:func:`.nb06_distances_and_refusal.classify`)."""
    index = lab.index(strategy)
    negs = list(probes.negatives)
    d = dense.cosine_distance_matrix(lab.encoder.encode([n.query for n in negs]), index.vectors)
    rows = []
    for neg, row in zip(negs, d, strict=True):
        ci = int(np.argmin(row))
        c = index.chunks[ci]
        rare = rare_terms(neg.query, index.chunks)
        kind, shared = classify(neg.query, c.content)
        rows.append(
            {
                "id": neg.id,
                "query": neg.query,
                "distance": round(float(row[ci]), 3),
                "nearest chunk": f"{c.doc_id} > {c.section or '(intro)'}",
                "passes": bool(row[ci] < cutoff),
                "rare terms": ", ".join(rare),
                "holds rare term": any(chunk_frequency([c], t) for t in rare),
                "kind": kind,
                "shared": shared,
            }
        )
    return pd.DataFrame(rows).set_index("id")


IDENTIFIER_CLAIMS = tuple(
    PairedClaim(f"{a}>{b}@R{k}:identifiers", f"{claim} (R@{k})", a, b, k, Direction.BETTER)
    for a, b, claim in (
        ("BM25", "dense", "BM25 catches identifiers that dense misses"),
        ("hybrid", "dense", "fusion recovers what dense misses"),
    )
    for k in KS
)
"""The chapter's two identifier claims, each at every k of :data:`KS`: one family of six."""


def entries(ranks: Mapping[str, Ranks], queries: Sequence[Query]) -> list[Entry]:
    """The identifier claims on the probe queries: notebook 04's part of the ledger beside its
    main claims. (The traps judge notebook 06's literal-match claim, which is where the
    chapter makes it.)"""
    clusters = [q.question.id for q in queries]
    return paired_entries("04", "d2l probes", IDENTIFIER_CLAIMS, ranks, clusters)


def reading(ranks: Mapping[str, Ranks], judged: Sequence[Entry], traps: pd.DataFrame) -> str:
    """What the probes say about the chapter's identifier claims: recall on the probes, each
    ledger entry of :func:`entries`, and the traps (:func:`trap_table`)."""
    n = len(next(iter(ranks.values())))
    recall = ", ".join(
        f"{name} {hits_at(r, 1).mean():.3f} / {hits_at(r, 8).mean():.3f}"
        for name, r in ranks.items()
    )
    lines = [f"- **Recall on {n} identifier queries** (R@1 / R@8): {recall}."]
    lines += [wording.entry_line(e) for e in judged]
    passing = traps[traps["passes"]]
    held_term = int(passing["holds rare term"].sum())
    where = ", ".join(f"{i} at {d:.3f}" for i, d in passing["distance"].sort_values().items())
    lines.append(
        f"- **Literal traps.** {len(passing)} of {len(traps)} pass the chapter's cutoff "
        f"{chapter.CUTOFF} (strictly under it){': ' + where if where else ''}; "
        f"{counted(held_term, 'of them lands', 'of them land')} on a chunk holding its rare "
        f"term. The nearest trap is {traps['distance'].min():.3f} from a chunk, the farthest "
        f"{traps['distance'].max():.3f} (the chapter's example: {chapter.TRAP_DISTANCE})."
    )
    return "\n".join(lines) + "\n\n" + ledger.markdown(judged)


def _looks_like_identifier(word: str, first: bool) -> bool:
    return (
        "_" in word
        or any(c.isdigit() for c in word)
        or any(c.isupper() for c in word[1:])
        or (not first and word[:1].isupper())
    )
