"""Notebook 10: the chapter's claims on Chroma's chunking benchmark; its five corpora share
one index per strategy, and each question is asked once (per-query tests are by question)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_lab.evaluation import chapter, fusion, hypotheses
from rag_lab.evaluation.chroma_table import Row
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.recall import fmt_interval
from rag_lab.evaluation.retrieval import Retrieval, Strategies, Systems
from rag_lab.evaluation.spans import OVERLAP_PAIRS, SWEEP_K, Bench
from rag_lab.experiments.present import Table
from rag_lab.metrics import hits_at

HEADLINE = ("A-destroys", "B=A@R20", "F<E@R20", "BM25>dense@R1", "hybrid>BM25@R4")


def corpus_view(bench: Bench) -> Table:
    """Per corpus: characters, questions, excerpts, repeated excerpts, and chunks of C."""
    texts = {d.id: d.text for d in bench.docs}
    spans = [s for q in bench.questions for s in q.spans]
    ids = {
        "questions": [q.spans[0].doc for q in bench.questions],
        "excerpts": [s.doc for s in spans],
        "repeated": [s.doc for s in spans if texts[s.doc].count(texts[s.doc][s.start : s.end]) > 1],
        "chunks of C": [c.doc_id for c in bench.chunks_by["C"]],
    }
    table = pd.DataFrame({c: pd.Series(v, dtype=object).value_counts() for c, v in ids.items()})
    table = table.reindex(list(texts)).fillna(0).astype(int).rename_axis("corpus")
    table.insert(0, "characters", [len(t) for t in texts.values()])
    table.loc["all"] = table.sum()
    return Table(table)


def recall_views(view: pd.DataFrame, axis: str) -> tuple[Table, Table]:
    """A recall view in two tables that fit a page: Recall@k, then the other columns."""
    view = view.drop(columns="n").rename_axis(axis)
    recall = view.columns.str.startswith("R@")
    return Table(view.loc[:, recall]), Table(view.loc[:, ~recall])


def paired_view(r: Retrieval) -> Table:
    """A family's comparisons; no per-query test, as each question is asked once."""
    columns = ("pair", "k", "a − b by question", "questions", "p", "chapter")
    return Table(r.paired.view(chapter.paired_reference, columns=columns))


def per_corpus_view(table: pd.DataFrame, overall: pd.DataFrame, k: int = SWEEP_K) -> Table:
    """Per corpus and overall: the range of mean recall and IoU of the six strategies, and in
    how many of :data:`OVERLAP_PAIRS` the overlap lowers precision."""
    every = pd.concat({"all": overall.xs(k, level="k")}, names=["corpus"])
    at = pd.concat([table.xs(k, level="k"), every])
    by = at.groupby(level="corpus", sort=False)
    frame = by[["recall", "iou"]].agg(["min", "max"]).rename(columns={"iou": "IoU"})
    frame.columns = [" ".join(c) for c in frame.columns]
    precision = at["precision"].unstack("strategy")
    frame["overlap lowers precision"] = sum(precision[a] < precision[b] for a, b in OVERLAP_PAIRS)
    questions = by["n"].first()
    frame.insert(0, "questions", questions.fillna(questions.sum()).astype(int))
    return Table(frame)


def sweep_views(sweep: pd.DataFrame, k: int = SWEEP_K) -> tuple[Table, Table]:
    """:func:`~rag_lab.evaluation.spans.sweep_table` as two tables: what it retrieves, costs."""
    r, iou = f"R@{k}", f"IoU @{k}"
    retrieved = sweep.loc[:, "size":iou].drop(columns=[f"{r} lo", f"{r} hi"])
    values = sweep[[r, f"{r} lo", f"{r} hi"]].to_numpy()
    retrieved[r] = [f"{v:.3f} {fmt_interval((lo, hi))}" for v, lo, hi in values]
    retrieved[f"{iou} rank"] = sweep[iou].rank(ascending=False, method="min").astype(int)
    return Table(retrieved), Table(sweep.loc[:, "chunks":].round().astype(int))


def published_view(rows: Sequence[Row]) -> Table:
    """Chroma's published recall beside ours (:func:`rag_lab.evaluation.chroma_table.run`),
    each of ours the mean in % with its 95 % interval."""
    frame = pd.DataFrame(
        {"chunks": [r.chunks for r in rows], "published": [r.published.recall for r in rows]},
        index=pd.Index([r.name for r in rows], name="chunker"),
    )
    for m in ("recall", "precision", "iou"):
        frame[m] = ["{:.1f} [{:.1f}, {:.1f}]".format(*r.mean(m)) for r in rows]
    return Table(frame)


def fusion_view(runs: fusion.FusionRuns, hybrid: Sequence, ks=(1, 4, 5, 10, 20)) -> Table:
    """Recall@k of every fusion, and whether its ranks are the systems table's ``hybrid``."""
    frame = pd.DataFrame(
        {f"R@{k}": [hits_at(r, k).mean() for r in runs.ranks.values()] for k in ks},
        index=pd.Index(list(runs.ranks), name="fusion"),
    )
    frame["ranks = hybrid"] = [list(r) == list(hybrid) for r in runs.ranks.values()]
    return Table(frame)


def ours(dense: Strategies, systems: Systems) -> list[Entry]:
    """The same claims on the lab's corpus (as notebooks 02–04 judge them), to set beside."""
    destroyed = {s: dense.destroyed.count(s) for s in ("A", "B")}
    return [
        *hypotheses.destroyed_entries(destroyed, dense.destroyed.of, "10", "d2l"),
        *hypotheses.strategy_entries(
            dense, "10", "d2l", sections=dense.sections, destroyed=dense.destroyed.questions
        ),
        *hypotheses.system_entries(systems, "10", "d2l"),
    ]
