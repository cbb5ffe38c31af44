"""Notebook 10: the chapter's claims on Chroma's chunking benchmark; its five corpora share
one index per strategy, and each question is asked once (per-query tests are by question)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_lab.chunking import OVERLAP, sized
from rag_lab.claims import render
from rag_lab.evaluation import chapter, fusion, hypotheses
from rag_lab.evaluation.chroma_table import K
from rag_lab.evaluation.geometry import expected_destroyed
from rag_lab.evaluation.ledger import Entry, mean_entry
from rag_lab.evaluation.retrieval import Retrieval, Strategies, Systems
from rag_lab.evaluation.spans import METRICS, SIZES, Bench, SpanEvaluation, bench_of, span_metrics
from rag_lab.evaluation.spans import span_view as mean_intervals
from rag_lab.experiments.present import Table
from rag_lab.metrics import hits_at, span_first_hit_ranks
from rag_lab.models.encoder import Encoder
from rag_lab.models.minilm import count_word_pieces, minilm_fingerprint
from rag_lab.search import TextEncoder
from rag_lab.sources.chroma import load as load_chroma
from rag_lab.stats import wilson

SWEEP_K = 5  # the k of Chroma's metrics and of the chunk-size sweep
HEADLINE = ("A-destroys", "B=A@R20", "F<E@R20", "BM25>dense@R1", "hybrid>BM25@R4")
OVERLAP_PAIRS = (("D", "C"), ("F", "E"))  # with the overlap against the same without


def setup(path: str | os.PathLike | None = None, encoder: TextEncoder | None = None) -> Bench:
    """Load and verify Chroma's benchmark, chunk it every way; nothing is embedded yet."""
    return bench_of(*load_chroma(path), encoder if encoder is not None else Encoder())


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
    table["characters"] = table["characters"].map("{:,}".format)
    return Table(
        table,
        caption="Per corpus: characters of text; questions; excerpts (the answers, at "
        "character offsets); excerpts whose text occurs more than once; chunks of C",
    )


def destroyed_view(theirs: SpanEvaluation) -> Table:
    """Excerpts no chunk holds whole, and the questions they leave unanswerable, per strategy."""
    d = theirs.destroyed
    frame = d[["label"]].copy()
    for col, of in (("excerpts destroyed", "of excerpts"), ("questions destroyed", "of questions")):
        frame[col] = d[col].astype(str) + " of " + d[of].astype(str)
    caption = "Excerpts no chunk holds whole; a question with one such excerpt is destroyed"
    return Table(frame, caption=caption)


def _recall(r: Retrieval, axis: str) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Recall@k with Wilson's interval; the MRR and questions never answered; the questions."""
    view = r.recall.view(intervals="per query").rename_axis(axis)
    rest = view[["MRR", "no hit"]].rename(columns={"no hit": "questions never answered"})
    return view[[f"R@{k}" for k in r.recall.ks]], rest, int(view["n"].iloc[0])


def recall_tables(theirs: SpanEvaluation) -> tuple[Table, Table]:
    """The six strategies' Recall@k, then their MRR and unanswered and destroyed questions."""
    recall, rest, n = _recall(theirs.strategies, "strategy")
    rest["questions destroyed"] = theirs.destroyed.loc[rest.index, "questions destroyed"]
    return (
        Table(
            recall,
            caption=f"Recall@k: the share of the {n} questions with every excerpt in the top k "
            "chunks, Wilson 95 %",
        ),
        Table(
            rest,
            caption="MRR over the top 20; questions with no hit in the ranking, beside those no "
            "chunk can answer",
        ),
    )


def paired_view(r: Retrieval, caption: str) -> Table:
    """A family's comparisons; no per-query test, as each question is asked once."""
    columns = ("pair", "k", "a − b by question", "questions", "p", "chapter")
    return Table(r.paired.view(chapter.paired_reference, columns=columns), caption=caption)


def systems_tables(theirs: SpanEvaluation) -> tuple[Table, Table, Table]:
    """Dense, BM25 and hybrid on the best boundary strategy: recall, MRR, paired comparisons."""
    recall, rest, n = _recall(theirs.systems, "system")
    best = theirs.best
    return (
        Table(recall, caption=f"Strategy {best}: Recall@k over the {n} questions, Wilson 95 %"),
        Table(rest, caption=f"Strategy {best}: MRR over the top 20; questions with no hit"),
        paired_view(
            theirs.systems, f"Strategy {best}: system a − b in Recall@k; questions: won/lost by a"
        ),
    )


def span_view(theirs: SpanEvaluation) -> Table:
    """Chroma's metrics of the six strategies at each k, mean and bootstrap interval."""
    view = mean_intervals(theirs.scores).reset_index(level="k").rename(columns={"iou": "IoU"})
    return Table(
        view,
        caption=f"Chroma's metrics, mean over the {theirs.questions} questions, 95 % bootstrap "
        "interval",
    )


def per_corpus_view(table: pd.DataFrame, overall: pd.DataFrame, k: int = SWEEP_K) -> Table:
    """Per corpus and overall: the range of mean recall and IoU; where overlap lowers precision."""
    at = table.xs(k, level="k")
    parts = {c: at.loc[c] for c in at.index.unique("corpus")}
    questions = {c: int(part["n"].iloc[0]) for c, part in parts.items()}
    parts["all"], questions["all"] = overall.xs(k, level="k"), sum(questions.values())
    rows = {}
    for corpus, part in parts.items():
        lower = sum(part.loc[a, "precision"] < part.loc[b, "precision"] for a, b in OVERLAP_PAIRS)
        rows[corpus] = {
            "questions": questions[corpus],
            f"recall @{k}, A–F": f"{part['recall'].min():.3f}–{part['recall'].max():.3f}",
            f"IoU @{k}, A–F": f"{part['iou'].min():.3f}–{part['iou'].max():.3f}",
            f"overlap lowers precision @{k}": f"{lower} of {len(OVERLAP_PAIRS)} pairs",
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("corpus"),
        caption=f"Per corpus at k = {k}: the lowest and highest mean of the six strategies; "
        "pairs D vs C and F vs E",
    )


def sweep_table(bench: Bench, k: int = SWEEP_K, context_tokens=None) -> pd.DataFrame:
    """Per size, without and with overlap: what k chunks retrieve and cost in a prompt."""
    window = minilm_fingerprint().max_seq_length
    rows = []
    for size, base in itertools.product(SIZES, "CD"):
        name = sized(base, size).name
        texts = [c.text for c in bench.chunks_by[name]]
        top = [r[:k] for r in bench.dense_rankings(name)]
        hits = hits_at(bench.ranks(name), k)
        lo, hi = wilson(int(hits.sum()), len(hits))
        means = span_metrics(bench, name, k)[list(METRICS)].mean().rename({"iou": "IoU"})
        chars = np.mean([sum(len(texts[i]) for i in t) for t in top])
        row = {"strategy": name, "size": size, "overlap": base == "D"}
        row |= {f"R@{k}": hits.mean(), f"R@{k} lo": lo, f"R@{k} hi": hi}
        row |= {f"{m} @{k}": v for m, v in means.items()}
        row |= {"chunks": len(texts), f"characters for {k} chunks": chars}
        if context_tokens is not None:
            tokens = np.array(context_tokens(texts))
            row[f"generator tokens for {k}"] = float(np.mean([tokens[t].sum() for t in top]))
        row[f"chunks past {window} word-pieces"] = int((count_word_pieces(texts) > window).sum())
        rows.append(row)
    return pd.DataFrame(rows).set_index("strategy")


def sweep_views(sweep: pd.DataFrame, k: int = SWEEP_K) -> tuple[Table, Table]:
    """:func:`sweep_table` for reading: what each chunking retrieves, then what it costs."""
    r, iou = f"R@{k}", f"IoU @{k}"
    retrieved = sweep.loc[:, "size":iou].drop(columns=[f"{r} lo", f"{r} hi"])
    retrieved["overlap"] = sweep["overlap"].map({False: "none", True: f"{OVERLAP} chars"})
    retrieved[r] = [
        "{:.3f} [{:.3f}, {:.3f}]".format(*v) for v in sweep[[r, f"{r} lo", f"{r} hi"]].to_numpy()
    ]
    retrieved[f"{iou} rank"] = sweep[iou].rank(ascending=False, method="min").astype(int)
    cost = sweep.loc[:, "chunks":].copy()
    for column in cost.columns[:-1]:  # counts and means; the last, chunks past the window
        cost[column] = cost[column].map("{:,.0f}".format)
    return (
        Table(
            retrieved,
            caption=f"Size: characters per chunk. R@{k}: share of the questions with every "
            f"excerpt in the top {k} (Wilson 95 %); Chroma's metrics, means; IoU rank among "
            "these chunkings, 1 the highest",
        ),
        Table(
            cost,
            caption=f"Chunks in the index; what {k} of them put in a prompt, mean per "
            "question; chunks whose text the encoder truncates",
        ),
    )


def published_view(rows: Sequence) -> Table:
    """Chroma's published recall beside ours (:func:`rag_lab.evaluation.chroma_table.run`)."""
    ours = {"ours [95 % CI]": "recall", "precision": "precision", "IoU": "iou"}
    cell = "{:.1f} [{:.1f}, {:.1f}]".format
    frame = pd.DataFrame(
        {
            "chunks": [f"{r.chunks:,}" for r in rows],
            "published": [f"{r.published.recall:.1f}" for r in rows],
            **{c: [cell(*r.mean(m)) for r in rows] for c, m in ours.items()},
        },
        index=pd.Index([r.name for r in rows], name="chunker"),
    )
    return Table(
        frame,
        caption=f"Chroma's recall @{K} in % (published: quoted via issue 25), ours over the "
        f"{len(rows[0].recall)} questions, Student's t 95 %; precision and IoU ours, in %",
    )


def fusion_runs(bench: Bench, name: str):
    """:func:`rag_lab.evaluation.fusion.fuse` on strategy ``name``, a hit being Chroma's."""
    s = fusion.scores(bench.index(name), [q.text for q in bench.questions], bench.encoder)
    spans, references = bench.spans(name), bench.references
    return fusion.fuse(s, lambda r: span_first_hit_ranks(r, spans, references), bench.ids)


def fusion_view(runs, name: str, hybrid: Sequence, ks: Sequence[int] = (1, 4, 5, 10, 20)) -> Table:
    """Recall@k of every fusion, and whether its ranks are the systems table's ``hybrid``."""
    ranks = runs.ranks.values()
    frame = pd.DataFrame(
        {f"R@{k}": [hits_at(r, k).mean() for r in ranks] for k in ks},
        index=pd.Index(list(runs.ranks), name="fusion"),
    ).round(3)
    frame["ranks = hybrid"] = ["yes" if list(r) == list(hybrid) else "no" for r in ranks]
    return Table(
        frame,
        caption=f"Strategy {name}: Recall@k of each fusion over the {len(hybrid)} questions; "
        "min-max and z-score: convex, weight cross-validated; ranks = hybrid: the same first-hit "
        "ranks as the hybrid of the systems table",
    )


def geometry_inputs(bench: Bench, theirs: SpanEvaluation) -> tuple[list[int], dict[str, int]]:
    """One needle per excerpt: each excerpt's length, and the excerpts A and B destroy."""
    lengths = [s.end - s.start for r in bench.references for s in r]
    destroyed = {s: int(theirs.destroyed.loc[s, "excerpts destroyed"]) for s in ("A", "B")}
    return lengths, destroyed


def geometry_view(lengths: Sequence[int], destroyed: dict[str, int]) -> Table:
    """Excerpts A and B destroy against what the geometry predicts from their lengths."""
    rows = {}
    for name, overlap in (("A", 0), ("B", OVERLAP)):
        e = expected_destroyed(lengths, destroyed[name], overlap=overlap)
        rows[name] = {
            "overlap": f"{overlap} chars",
            "observed": e.observed,
            "expected": f"{e.expected:.1f}",
            "95 % range": f"{e.low}–{e.high}",
            "agrees": "yes" if e.agrees else "no",
        }
    return Table(
        pd.DataFrame.from_dict(rows, orient="index").rename_axis("strategy"),
        caption=f"Excerpts destroyed of {len(lengths)} (one needle per excerpt): observed, "
        "expected Σ P(destroyed), Poisson-binomial 95 % range",
    )


def entries(theirs: SpanEvaluation) -> list[Entry]:
    """The chapter's claims on Chroma's benchmark; without sections, no header claim is testable."""
    destroyed = {s: int(theirs.destroyed.loc[s, "questions destroyed"]) for s in ("A", "B")}
    return [
        *hypotheses.destroyed_entries(destroyed, theirs.questions, "10", "chroma"),
        *hypotheses.strategy_entries(
            theirs.strategies, "10", "chroma", sections=theirs.sections, destroyed=theirs.lost
        ),
        *hypotheses.system_entries(theirs.systems, "10", "chroma"),
        *(
            mean_entry(
                f"{a}<{b}@P{SWEEP_K}",
                notebook="10",
                benchmark="chroma",
                a=theirs.precision[a],
                b=theirs.precision[b],
                clusters=range(theirs.questions),
            )
            for a, b in OVERLAP_PAIRS
        ),
    ]


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


def side_by_side(
    d2l: Sequence[Entry], chroma: Sequence[Entry], questions: int, queries: int, theirs_n: int
) -> tuple[Table, Table]:
    """Each claim of ``d2l`` on both corpora: the verdicts, then the evidence behind them."""
    theirs = {e.claim: e for e in chroma}
    verdicts, evidence = [], []
    for o in d2l:
        t = theirs.get(o.claim)
        both = t is not None and o.verdict.tested and t.verdict.tested
        same = ("yes" if o.verdict is t.verdict else "no") if both else "–"
        verdicts.append((o.verdict.label, t.verdict.label if t else "–", same))
        evidence.append((render.evidence(o), render.evidence(t) if t else "–"))
    index = pd.Index([f"{e.claim}: {e.statement}" for e in d2l], name="claim")
    shorten = {"index": 22}  # the whole claim on hover
    return (
        Table(
            pd.DataFrame(verdicts, index=index, columns=["d2l", "Chroma", "same verdict"]),
            caption="The ledger's verdict on each corpus; same verdict: – unless tested on both",
            shorten=shorten,
        ),
        Table(
            pd.DataFrame(evidence, index=index, columns=["d2l", "Chroma"]),
            caption=f"a − b by question with its 95 % interval, or the count (d2l: "
            f"{questions} questions, {queries} queries; Chroma: {theirs_n} "
            "questions, one query each)",
            shorten=shorten,
        ),
    )
