"""The symptom three layers later: dense retrieval over the extracted text against the clean
Markdown, and the needles chunking destroys.

Each extracted corpus is chunked by strategy E, embedded, and its queries ranked; a chunk
answers a query when it holds the needle, whitespace normalised
(:func:`rag_lab.metrics.relevant_chunks`). Each corpus is paired with the clean Markdown by
question (each question is asked twice), Holm over the table (:func:`loss_table`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab import progress
from rag_lab.chunking import Chunk, chunk_corpus
from rag_lab.documents import Document
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.paired import Finding, paired_table
from rag_lab.evaluation.runs import dense_ranks
from rag_lab.experiments.nb11_extraction.pdfs import STRATEGY, Extracted, extracted_docs, flat
from rag_lab.metrics import Ranks, relevant_chunks
from rag_lab.questions import Query
from rag_lab.search import ChunkIndex

KS = (4, 20)
"""The cutoffs retrieval is measured at: the chapter's top 4, and a deep 20."""
CLEAN = "Markdown"
"""The name of the corpus every extracted one is set against: the documents as written."""


def _dense_ranks(lab: Lab, chunks: Sequence[Chunk], queries: Sequence[Query]) -> Ranks:
    """First-hit ranks under dense retrieval over ``chunks``, whitespace normalised before
    needles are looked for (extraction rewraps lines)."""
    return dense_ranks(ChunkIndex.build(chunks, lab.encoder), queries, lab.encoder, fold=flat)


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
        held = relevant_chunks(chunks, questions, fold=flat)  # it reads only the needles
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


def embed_all(lab: Lab, corpora_: Sequence[Corpus]) -> None:
    """Embed every corpus's chunks once (the vector cache keeps them).

    Shortest first: a batch is padded to its longest text, so texts of like length batch
    with less padding (15 % faster here on 512 chunk texts)."""
    texts = sorted(dict.fromkeys(c.text for corpus in corpora_ for c in corpus.chunks), key=len)
    with progress.context(f"{len(corpora_)} extracted corpora"):
        lab.encoder.encode(texts)


def retrieval_systems(lab: Lab, corpora_: Sequence[Corpus], clean: str = CLEAN) -> dict[str, Ranks]:
    """First-hit ranks of the queries: the clean Markdown's chunks, then each corpus's."""
    queries = lab.queries
    out = {clean: _dense_ranks(lab, lab.chunks_by[STRATEGY], queries)}
    for corpus in corpora_:
        out[corpus.name] = _dense_ranks(lab, corpus.chunks, queries)
    return out


def loss_table(
    systems: Mapping[str, Ranks], queries: Sequence[Query], clean: str = CLEAN
) -> pd.DataFrame:
    """Each extracted corpus ``a`` against the clean one ``b`` at R@4 and R@20, one row per
    (corpus, k): the chapter's per-query test (``wins``, ``losses``, ``p``), the question-level
    one (``q wins``, ``q losses``, ``q p``: wins and losses over questions), its p adjusted by
    Holm over the table (``p Holm``), the :class:`~rag_lab.evaluation.paired.Finding`
    that supports (``difference``), the difference in Recall@k by question with its 95 %
    interval (``a − b``, ``lo``, ``hi``: :data:`~rag_lab.evaluation.ledger.PAIRED_METHOD`)."""
    pairs = [(name, clean) for name in systems if name != clean]
    family = paired_table(systems, pairs, KS, [q.question.id for q in queries])
    table = family.frame().rename(columns={"finding": "difference"})
    table["a − b"] = [c.difference.estimate for c in family.comparisons]
    table["lo"] = [c.difference.lo for c in family.comparisons]
    table["hi"] = [c.difference.hi for c in family.comparisons]
    return table


def worse(loss: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`loss_table` where the corpus retrieves worse than the clean one."""
    return loss[[d is Finding.B_BETTER for d in loss["difference"]]]
