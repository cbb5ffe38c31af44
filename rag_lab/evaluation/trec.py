"""The rankings ``rag-lab evaluate`` scores, as TREC files a team reads with its own tools.

:func:`write` puts in a folder a run file for each ranking the report scores (dense
retrieval on each chunking, ``dense-A.run`` … ``dense-F.run``, one of them the deployed
configuration; BM25 and the hybrid on the systems' chunking, ``BM25-E.run`` and
``hybrid-E.run``) and a qrels file for each chunking (``A.qrels`` …), in the formats
trec_eval, ranx, pytrec_eval and ir_measures read:

- run: ``qid Q0 docid rank score tag``, one line per ranked chunk, ranks from 1;
- qrels: ``qid 0 docid rel``.

``qid`` is the query's id (``question/phrasing``), ``docid`` the chunk's (``doc#index``);
whitespace and ``%`` in them are percent-encoded (:func:`urllib.parse.unquote` restores
them), since both formats split on whitespace.

The ranks are the lab's, ties broken as :func:`rag_lab.ranking.order` breaks them (score,
then chunk position). The score column counts down from the query's number of lines to 1,
rather than giving the lab's distance or BM25 score: trec_eval ignores the rank column and
sorts by score, ties by docid descending (``comp_sim_docno``), and BM25 ties every chunk that
shares no word with the query; with distinct scores in the lab's order every tool ranks as
the lab did. Each query is written to :data:`DEPTH` chunks, or
down to its first relevant chunk when that is deeper, so that hit rate (success) at any
k ≤ :data:`DEPTH` and MRR computed from the files equal the report's Recall@k and MRR.

Relevance is the lab's one rule (:func:`rag_lab.metrics.relevant_chunks`): rel 1 for each
chunk that holds the query's needle whole. A query whose needle no chunk holds (an answer
the chunking destroyed) has no relevant chunk and is a miss in the report; so that a tool
evaluating the qrels' queries counts it too, the first chunk of its document is written
for it, judged 0.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from urllib.parse import quote

import numpy as np

from rag_lab.atomic import write_atomically
from rag_lab.chunking import Chunk
from rag_lab.errors import BadInput
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.runs import rank_all
from rag_lab.evaluation.served import DEPTH
from rag_lab.metrics import relevant_chunks
from rag_lab.questions import Query

TAG = "rag_lab"
"""The run tag (last column) before the run's name: ``rag_lab-dense-E``."""


class TrecError(BadInput, ValueError):
    """Rankings that TREC's formats cannot hold (a relevance that is not per chunk)."""


def run_name(system: str, strategy: str) -> str:
    """The run file of ``system`` on ``strategy``: ``dense-E.run``."""
    return f"{system}-{strategy}.run"


def qrels_name(strategy: str) -> str:
    """The qrels file of ``strategy``'s chunks: ``E.qrels``."""
    return f"{strategy}.qrels"


def write(lab: Lab, folder: str | os.PathLike, systems: str) -> list[Path]:
    """Write under ``folder`` the qrels of each of the lab's chunkings, the dense run on each,
    and every system's run (BM25, hybrid) on ``systems``; returns the files, qrels first."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    queries = lab.queries
    written = []
    for strategy in lab.chunks_by:
        index = lab.index(strategy)
        relevant = relevant_chunks(index.chunks, queries)
        lines = qrels_lines(queries, index.chunks, relevant)
        written.append(_write(folder / qrels_name(strategy), lines))
        ranked = rank_all(index, queries, lab.encoder).by_system
        for system, rankings in ranked.items():
            if system == "dense" or strategy == systems:
                tag = f"{TAG}-{system}-{strategy}"
                lines = run_lines(queries, index.chunks, rankings, relevant, tag)
                written.append(_write(folder / run_name(system, strategy), lines))
    return written


def run_lines(
    queries: Sequence[Query],
    chunks: Sequence[Chunk],
    rankings: Sequence[np.ndarray],
    relevant: Sequence[Collection[int]],
    tag: str,
    depth: int = DEPTH,
) -> Iterator[str]:
    """``qid Q0 docid rank score tag`` for each query's ``rankings`` (chunk positions, best
    first) to ``depth``, or to its first ``relevant`` chunk when that is deeper."""
    for q, ranking, rel in zip(queries, rankings, relevant, strict=True):
        first = next((r for r, c in enumerate(ranking, 1) if int(c) in rel), 0)
        kept = [int(c) for c in ranking[: max(depth, first)]]
        qid = trec_id(q.id)
        for rank, c in enumerate(kept, 1):
            yield f"{qid} Q0 {trec_id(chunks[c].id)} {rank} {len(kept) - rank + 1} {tag}"


def qrels_lines(
    queries: Sequence[Query], chunks: Sequence[Chunk], relevant: Sequence[Collection[int]]
) -> Iterator[str]:
    """``qid 0 docid 1`` for each chunk ``relevant`` to a query, in chunk order; for a query
    with none, ``qid 0 docid 0`` for the first chunk of its document."""
    for q, rel in zip(queries, relevant, strict=True):
        qid = trec_id(q.id)
        if rel:
            yield from (f"{qid} 0 {trec_id(chunks[c].id)} 1" for c in sorted(rel))
            continue
        first = next((c for c in chunks if c.doc_id == q.question.doc), None)
        if first is None:
            raise TrecError(f"query {q.id}: its document {q.question.doc!r} has no chunk")
        yield f"{qid} 0 {trec_id(first.id)} 0"


def trec_id(ident: str) -> str:
    """``ident`` with whitespace and ``%`` percent-encoded (UTF-8): one TREC column.

    >>> trec_id("my notes.md#3")
    'my%20notes.md#3'
    """
    return re.sub(r"[\s%]", lambda m: quote(m.group()), ident)


def _write(path: Path, lines: Iterator[str]) -> Path:
    text = "".join(f"{line}\n" for line in lines)
    return write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
