"""Notebook 06: the identity, what the gate's distances say, and the chapter's claims.

Everything is measured on cosine distance ``1 − q·c`` between unit vectors, which for
unit vectors equals half the squared Euclidean distance: ``‖a − b‖² = 2 − 2 a·b``. The
distributions and the sweep are :func:`rag_lab.evaluation.refusal.refusal`'s; this module adds
the identity, what breaks without normalisation, the kinds of failure, and the reading.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from rag_lab.chunking import Chunk
from rag_lab.evaluation import chapter, claims, ledger
from rag_lab.evaluation.lab import Lab
from rag_lab.evaluation.ledger import Entry, count_entry, fixed_entry
from rag_lab.evaluation.refusal import Refusal
from rag_lab.evaluation.verdicts import Verdict
from rag_lab.questions import Negative
from rag_lab.text import counted, longest_common_run, words

# --- the identity ---------------------------------------------------------------------


def identity_pair(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Norms, L2, L2²/2, 1 − cos and their difference for two vectors."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    l2 = float(np.linalg.norm(a64 - b64))
    cos = float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))
    return {
        "‖a‖": float(np.linalg.norm(a64)),
        "‖b‖": float(np.linalg.norm(b64)),
        "L2": l2,
        "L2²/2": l2 * l2 / 2,
        "1 − cos": 1 - cos,
        "|L2²/2 − (1 − cos)|": abs(l2 * l2 / 2 - (1 - cos)),
    }


def identity_all_pairs(vectors: np.ndarray) -> float:
    """max |L2²/2 − (1 − cos)| over all pairs of rows, computed in float32 as an index would."""
    v = np.asarray(vectors, np.float32)
    dots = v @ v.T
    sq = np.sum(v * v, axis=1)
    l2_sq = sq[:, None] + sq[None, :] - 2 * dots
    norms = np.sqrt(sq)
    cos = dots / (norms[:, None] * norms[None, :])
    return float(np.max(np.abs(l2_sq / 2 - (1 - cos))))


def length_dependence(raw: np.ndarray, lengths: Sequence[int]) -> dict[str, float]:
    """How unnormalised vectors break the identity and tie a distance to text length.

    Returns the spread of norms, the identity's worst error on these vectors, and the
    Spearman correlation between a text's length and its vector's norm.
    """
    norms = np.linalg.norm(np.asarray(raw, np.float64), axis=1)
    rho = sps.spearmanr(lengths, norms).statistic
    return {
        "norm min": float(norms.min()),
        "norm max": float(norms.max()),
        "max |L2²/2 − (1 − cos)|": identity_all_pairs(raw),
        "Spearman(length, norm)": float(rho),
    }


def unnormalized_sample(lab: Lab, chunks: Sequence[Chunk]) -> pd.Series:
    """:func:`length_dependence` on ``chunks`` embedded without the final Normalize layer."""
    raw = lab.encoder.encode_unnormalized([c.text for c in chunks])
    return pd.Series(length_dependence(raw, [len(c.text) for c in chunks]))


# --- failure kinds -------------------------------------------------------------------

_STOP = frozenset(
    "a an and are as at be but by can do does for from how i if in into is it its me my "
    "of on or should so that the their them then there these this to up use using was "
    "what when where which while who why will with without you your".split()
)


def classify(query: str, content: str, literal_words: int = 4) -> tuple[str, str]:
    """(kind, evidence) for a negative and a chunk it lands near.

    ``literal match``: the chunk contains a run of at least ``literal_words`` consecutive
    words of the query; ``near miss``: they share content words but no such run;
    ``semantic only``: they share no content word.
    """
    qw, cw = words(query), words(content)
    run = longest_common_run(qw, cw)
    if len(run) >= literal_words:
        return "literal match", " ".join(run)
    shared = sorted({w for w in qw if w not in _STOP} & set(cw))
    if shared:
        return "near miss", ", ".join(shared)
    return "semantic only", ""


def closest_negatives(
    negatives: np.ndarray,
    negs: Sequence[Negative],
    chunks: Sequence[Chunk],
    n: int = 5,
    per_query: int = 2,
) -> pd.DataFrame:
    """The ``n`` negatives nearest to the corpus, each with its nearest chunks and a kind."""
    nearest = negatives.min(axis=1)
    rows = []
    for qi in np.argsort(nearest, kind="stable")[:n]:
        for rank, ci in enumerate(np.argsort(negatives[qi], kind="stable")[:per_query], 1):
            c = chunks[ci]
            kind, evidence = classify(negs[qi].query, c.content)
            rows.append(
                {
                    "negative": negs[qi].id,
                    "query": negs[qi].query,
                    "rank": rank,
                    "distance": round(float(negatives[qi, ci]), 3),
                    "chunk": f"{c.doc_id} > {c.section or '(intro)'}",
                    "kind": kind,
                    "shared": evidence,
                }
            )
    return pd.DataFrame(rows)


def bluffs_at(
    negatives: np.ndarray,
    negs: Sequence[Negative],
    chunks: Sequence[Chunk],
    cutoff: float = chapter.CUTOFF,
    per_query: int = 2,
) -> pd.DataFrame:
    """Every negative the gate lets through at ``cutoff`` (a bluff), nearest first, each with
    its nearest chunks and a kind (:func:`classify`)."""
    n = int((negatives.min(axis=1) < cutoff).sum())
    return closest_negatives(negatives, negs, chunks, n=n, per_query=per_query)


def entries(identity_unit: float, gated: Refusal, traps: pd.DataFrame) -> list[Entry]:
    """The chapter's distance and threshold claims: this notebook's part of the ledger. The
    literal-match failure is judged on the probes' trap negatives (``traps``,
    :func:`rag_lab.experiments.probes.trap_table`), which are built to trigger it."""
    at = {"notebook": "06", "benchmark": "d2l"}
    landed = traps[traps["passes"] & traps["holds rare term"]]
    return [
        fixed_entry(
            **at,
            claim="identity",
            statement="cosine distance is L2²/2 on unit vectors",
            verdict=Verdict.BY_CONSTRUCTION,
            reason="an identity of unit vectors (‖a − b‖² = 2 − 2 a·b); measured, the float32 "
            f"error is {identity_unit:.1e}",
            metric="max |L2²/2 − (1 − cos)|",
            chapter=f"max error {chapter.IDENTITY_MAX_DIFF:.1e}",
            here=f"max error {identity_unit:.1e}",
        ),
        *claims.refusal_entries(gated, "06", "d2l"),
        count_entry(
            **at,
            claim="literal-match-bluff",
            statement="a negative that shares a literal term with a chunk bluffs",
            metric=f"trap negatives under {chapter.CUTOFF} on a chunk holding their rare term",
            holds=len(landed) > 0,
            here=", ".join(f"{i} at {d:.3f}" for i, d in landed["distance"].items()) or "none",
            chapter=f"its example at {chapter.TRAP_DISTANCE}",
            rule="reproduces when at least one trap negative does (data/probes.yaml)",
        ),
    ]


def reading(
    identity_unit: float,
    unnormalized: dict[str, float],
    gated: Refusal,
    failures: pd.DataFrame,
    traps: pd.DataFrame,
) -> str:
    """A plain-language verdict on the chapter's distance and threshold claims."""
    lines = [
        _identity(identity_unit, unnormalized),
        _overlap(gated),
        _bluffs(gated),
        _without_needle(gated),
        _price(gated),
        _failure_kinds(failures, traps),
    ]
    return "\n".join(lines) + "\n\n" + ledger.markdown(entries(identity_unit, gated, traps))


def _without_needle(g: Refusal) -> str:
    hi = g.at(chapter.CUTOFF)
    wrong, bluffs = int(hi["answered without needle"]), int(hi["bluffs"])
    more = wrong / g.answerable > bluffs / g.negatives
    return (
        f"- **Answered without the answer.** At {chapter.CUTOFF}, {wrong} of {g.answerable} "
        f"answerable queries pass the gate with no chunk that holds their needle, beside "
        f"{bluffs} of {g.negatives} bluffs: "
        + (
            "a larger share than the bluffs, and no cutoff can catch them, for their chunks "
            "are near, only not right."
            if more
            else "a smaller share than the bluffs."
        )
    )


def _identity(identity_unit: float, u: dict[str, float]) -> str:
    return (
        f"- **Identity.** On the index's unit vectors, max |L2²/2 − (1 − cos)| over all pairs "
        f"is {identity_unit:.1e}, floating-point noise (the chapter: "
        f"{chapter.IDENTITY_MAX_DIFF:.1e}). Without normalisation norms range from "
        f"{u['norm min']:.2f} to {u['norm max']:.2f}, the identity is off by up to "
        f"{u['max |L2²/2 − (1 − cos)|']:.1f}, and a text's norm follows its length "
        f"(Spearman ρ = {u['Spearman(length, norm)']:+.2f})."
    )


def _overlap(g: Refusal) -> str:
    both = g.overlap.loc["both"]
    return (
        f"- **Overlap.** The worst in-domain query ({both['query']}) is "
        f"{both['worst in-domain']:.3f} from its answer; the best out-of-domain one "
        f"({both['negative']}) is {both['best out-of-domain']:.3f} from a chunk (the chapter: "
        f"{chapter.WORST_IN_DOMAIN} and {chapter.BEST_OUT_OF_DOMAIN}). "
        + (
            "The distributions overlap, so no cutoff is right for both."
            if both["overlap"]
            else "Here they do not overlap: some cutoff separates them."
        )
    )


def _bluffs(g: Refusal) -> str:
    none, hi, lo = g.at(None), g.at(chapter.CUTOFF), g.at(chapter.STRICT_CUTOFF)
    return (
        f"- **Bluffs.** With no cutoff, {int(none['bluffs'])} of {g.negatives} negatives get an "
        f"answer (the chapter: {chapter.BLUFFS[None]} of {chapter.NEGATIVES}). At "
        f"{chapter.CUTOFF}: {counted(int(hi['bluffs']), 'bluff')} and "
        f"{counted(int(hi['refused']), 'refusal')} (the chapter: "
        f"{chapter.BLUFFS[chapter.CUTOFF]} bluffs). At {chapter.STRICT_CUTOFF}: "
        f"{counted(int(lo['bluffs']), 'bluff')}, {int(lo['refused'])} of {g.answerable} "
        f"answerable queries refused (the chapter: {chapter.BLUFFS[chapter.STRICT_CUTOFF]} and "
        f"{chapter.REFUSED_ANSWERABLE[chapter.STRICT_CUTOFF]})."
    )


def _price(g: Refusal) -> str:
    c = g.cheapest
    return (
        f"- **A cutoff is a price.** If one bluff costs as much as {g.bluff_cost:g} refusals, "
        f"the cheapest cutoff here is {c['cutoff']:.3f}: {counted(int(c['bluffs']), 'bluff')} "
        f"and {counted(int(c['refused']), 'refusal')}. Change the price and the cutoff moves."
    )


def _failure_kinds(failures: pd.DataFrame, traps: pd.DataFrame) -> str:
    kinds = failures.drop_duplicates("negative").groupby("kind")["negative"].apply(list)
    found = "; ".join(f"{kind}: {', '.join(ids)}" for kind, ids in kinds.items())
    literal = "literal match" in kinds.index
    landed = traps[traps["passes"] & traps["holds rare term"]]
    if len(landed):
        where = ", ".join(f"{i} at {d:.3f}" for i, d in landed["distance"].items())
        trap_note = (
            f"The trap negatives of `data/probes.yaml`, built to trigger it, do: {where} "
            f"(the chapter's example: {chapter.TRAP_DISTANCE})."
        )
    else:
        trap_note = "Nor do the trap negatives of `data/probes.yaml`, built to trigger it."
    kinds_note = (
        "Both of the chapter's kinds appear. "
        if literal and "near miss" in kinds.index
        else "Literal matches appear. "
        if literal
        else "None of these negatives bluffs on a literal match, but none was built to. "
    )
    return (
        f"- **Failure kinds of every bluff at {chapter.CUTOFF}** "
        f"({failures['negative'].nunique()} negatives, each judged on its two nearest chunks) "
        f"— {found or 'none'}. " + kinds_note + trap_note
    )
