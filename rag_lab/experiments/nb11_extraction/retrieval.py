"""The symptom three layers later: dense retrieval over the extracted text against the clean
Markdown, and the needles chunking destroys.

Each extracted corpus is chunked by strategy E, embedded, and its 64 queries ranked; a chunk
answers a query when it holds the needle (:func:`~.relevance.relevant_flat`). Each corpus is
paired with the clean Markdown per question (the 64 queries are 32 questions asked twice),
Holm over the table (:func:`loss_table`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab import dense
from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.experiments import tables
from rag_lab.experiments.lab import Lab
from rag_lab.experiments.nb11_extraction.extraction import Extracted
from rag_lab.experiments.nb11_extraction.relevance import relevant_flat
from rag_lab.experiments.nb11_extraction.text import STRATEGY, extracted_docs, flat
from rag_lab.metrics import Ranks, first_hit_ranks, hits_at, paired_table
from rag_lab.questions import Query
from rag_lab.ranking import order
from rag_lab.search import ChunkIndex
from rag_lab.stats import ALPHA, Paired, cluster_paired, holm

KS = (4, 20)
"""The cutoffs retrieval is measured at: the chapter's top 4, and a deep 20."""
CLEAN = "Markdown"
"""The name of the corpus every extracted one is set against: the documents as written."""


def _dense_ranks(lab: Lab, chunks: Sequence[Chunk], queries: Sequence[Query]) -> Ranks:
    """First-hit ranks under dense retrieval over ``chunks`` (relevance: :func:`relevant_flat`)."""
    index = ChunkIndex.build(chunks, lab.encoder)
    distances = dense.cosine_distance_matrix(
        lab.encoder.encode([q.text for q in queries]), index.vectors
    )
    rankings = [order(row, descending=False) for row in distances]
    return first_hit_ranks(rankings, relevant_flat(chunks, queries))


@dataclass(frozen=True)
class Corpus:
    """One extracted corpus retrieval is measured on."""

    name: str
    layout: str
    reader: str
    docs: list[Document]
    chunks: list[Chunk]


def corpora(
    lab: Lab,
    extracted: Extracted,
    picks: Mapping[str, tuple[str, str]],
    extra: Sequence[tuple[str, str, bool]] = (),
) -> tuple[list[Corpus], dict[str, str]]:
    """The corpora to retrieve from: each layout's best and worst reader, then ``extra``
    (layout, reader, running lines removed); and the ones left out because their text is
    the same as an earlier corpus's (name → that corpus), so that no test is counted twice."""
    wanted = [(layout, r, False) for layout, pair in picks.items() for r in dict.fromkeys(pair)]
    out: list[Corpus] = []
    same: dict[str, str] = {}
    seen: dict[tuple[str, ...], str] = {}
    for layout, reader, remove in wanted + list(extra):
        docs = extracted_docs(lab.docs, extracted[layout, reader], remove)
        name = f"{layout} · {reader}" + (" · running lines removed" if remove else "")
        key = tuple(d.text for d in docs)
        if key in seen:
            same[name] = seen[key]
            continue
        seen[key] = name
        out.append(Corpus(name, layout, reader, docs, chunk_corpus(docs, STRATEGY)))
    return out, same


def destroyed_table(lab: Lab, corpora_: Sequence[Corpus], clean: str = CLEAN) -> pd.DataFrame:
    """Per corpus: needles in the text, and needles no chunk holds whole (destroyed: never
    retrievable, whatever the ranking). A needle can survive extraction and still be
    destroyed by chunking: split between two chunks where the extracted text has other
    paragraph breaks than the Markdown (pypdf's none at all, PDFium's found by spacing)."""
    questions = lab.qset.questions
    rows = []
    named = [(clean, lab.chunks_by[STRATEGY], lab.docs)] + [
        (c.name, c.chunks, c.docs) for c in corpora_
    ]
    for name, chunks, docs in named:
        texts = {d.id: flat(d.text) for d in docs}
        held = relevant_flat(chunks, questions)  # it reads only each one's needle
        rows.append(
            {
                "corpus": name,
                "chunks": len(chunks),
                "needles in the text": sum(flat(q.needle) in texts[q.doc] for q in questions),
                "needles no chunk holds": sum(1 for h in held if not h),
                "questions": len(questions),
            }
        )
    return pd.DataFrame(rows).set_index("corpus")


def embed_all(lab: Lab, corpora_: Sequence[Corpus]) -> str:
    """Embed every corpus's chunks once (the vector cache keeps them); say how many.

    Shortest first: a batch is padded to its longest text, so texts of like length batch
    with less padding (15 % faster here on 512 chunk texts)."""
    texts = sorted(dict.fromkeys(c.text for corpus in corpora_ for c in corpus.chunks), key=len)
    lab.encoder.encode(texts)
    return f"{len(texts):,} distinct chunk texts over {len(corpora_)} extracted corpora"


def retrieval_systems(lab: Lab, corpora_: Sequence[Corpus], clean: str = CLEAN) -> dict[str, Ranks]:
    """First-hit ranks of the 64 queries: the clean Markdown's chunks, then each corpus's."""
    queries = lab.queries
    out = {clean: _dense_ranks(lab, lab.chunks_by[STRATEGY], queries)}
    for corpus in corpora_:
        out[corpus.name] = _dense_ranks(lab, corpus.chunks, queries)
    return out


# --- each corpus against the clean one --------------------------------------------------------


class Difference(enum.Enum):
    """What a paired comparison of corpus ``a`` with ``b`` supports (the rule of
    :func:`rag_lab.experiments.tables.verdict_of`, as a value)."""

    WORSE = "<"
    """``a`` retrieves worse: the question-level test, after Holm, under :data:`ALPHA`."""
    BETTER = ">"
    PER_QUERY_ONLY = "per query only"
    """Only the chapter's per-query test is under :data:`ALPHA`."""
    NONE = "no difference shown"

    def words(self, a: str, b: str) -> str:
        """How a table says it: ``"a < b"``, ``"a > b"``, or the value."""
        return (
            f"{a} {self.value} {b}" if self in (Difference.WORSE, Difference.BETTER) else self.value
        )


def _difference(per_query: Paired, per_question: Paired, p_holm: float) -> Difference:
    if p_holm < ALPHA and per_question.wins != per_question.losses:
        return Difference.BETTER if per_question.wins > per_question.losses else Difference.WORSE
    if per_query.p < ALPHA and per_query.wins != per_query.losses:
        return Difference.PER_QUERY_ONLY
    return Difference.NONE


def loss_table(
    systems: Mapping[str, Ranks], queries: Sequence[Query], clean: str = CLEAN
) -> pd.DataFrame:
    """Each extracted corpus ``a`` against the clean one ``b`` at R@4 and R@20, one row per
    (corpus, k): the chapter's per-query test (``wins``, ``losses``, ``p``), the question-level
    one (``q wins``, ``q losses``, ``q p``: wins and losses over questions), its p adjusted by
    Holm over the table (``p Holm``), and the :class:`Difference` that supports."""
    ids = tables.question_ids(queries)
    table = paired_table(systems, [(name, clean) for name in systems if name != clean], KS)
    by_q = [
        cluster_paired(hits_at(systems[a], k), hits_at(systems[b], k), ids)
        for a, b, k in zip(table["a"], table["b"], table["k"], strict=True)
    ]
    table["q wins"] = [r.wins for r in by_q]
    table["q losses"] = [r.losses for r in by_q]
    table["q p"] = [r.p for r in by_q]
    table["p Holm"] = holm([r.p for r in by_q])
    per_query = [Paired(w, lo, 0) for w, lo in zip(table["wins"], table["losses"], strict=True)]
    table["difference"] = [
        _difference(q, r, p) for q, r, p in zip(per_query, by_q, table["p Holm"], strict=True)
    ]
    return table


def loss_view(loss: pd.DataFrame) -> pd.DataFrame:
    """:func:`loss_table` for reading: the corpus, k, both tests, Holm's p, the verdict."""

    def test(wins: str, losses: str) -> list[str]:
        return [str(Paired(w, lo, 0)) for w, lo in zip(loss[wins], loss[losses], strict=True)]

    return pd.DataFrame(
        {
            "a": loss["a"],
            "k": loss["k"],
            "here": test("wins", "losses"),
            "by question": test("q wins", "q losses"),
            "p Holm": [f"{p:#.2g}" for p in loss["p Holm"]],
            "verdict": [
                d.words(a, b)
                for d, a, b in zip(loss["difference"], loss["a"], loss["b"], strict=True)
            ],
        }
    )


def worse(loss: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`loss_table` where the corpus retrieves worse than the clean one."""
    return loss[[d is Difference.WORSE for d in loss["difference"]]]
