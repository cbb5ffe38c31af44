"""The claims that depend on the sentence encoder (the generalisation plan,
:func:`rag_lab.claims.generalisation_plan`), measured under one encoder on both benchmarks:
the suites of notebooks 02–06 and 10, each run with ``encoder=`` that model. Notebook 13 sets
the verdicts side by side (:func:`rag_lab.claims.judge.generalisation`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence

from rag_lab.claims import generalisation_plan
from rag_lab.evaluation import chunking, hypotheses, identifiers, overlap, refusal, retrieval, spans
from rag_lab.evaluation.chapter import CUTOFF, STRICT_CUTOFF
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, value_entry
from rag_lab.models.encoder import Encoder
from rag_lab.stats import wilson

NOTEBOOK = "13"
PLAN = generalisation_plan()
ENCODERS: tuple[str, ...] = tuple(PLAN["encoders"])
REFERENCE: str = PLAN["reference"]
STRATEGY = "E"  # the chunking of the retriever and refusal claims, as in notebooks 04 and 06


def matched_cutoff(gated: refusal.Refusal, refused: int) -> float:
    """The smallest swept cutoff at which the gate refuses at most ``refused`` answerable
    queries: the reference encoder's operating point, on this encoder's distances."""
    swept = gated.sweep.dropna(subset=["cutoff"])
    return float(swept.loc[swept["refused"] <= refused, "cutoff"].min())


CUTOFFS = {"bluffs@0.675": CUTOFF, "bluffs@0.525": STRICT_CUTOFF}
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
    probe_set = identifiers.load(lab.docs)
    probe_ranks = identifiers.rank_probes(lab, probe_set, STRATEGY)
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
        *identifiers.comparison_entries(probe_ranks, queries),
        *identifiers.interaction_entries(probe_ranks, clusters, systems.ranks, lab.clusters),
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
    bench = spans.chroma(path, encoder, sweep=False)
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
