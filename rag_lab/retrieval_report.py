"""Tables, figures and computed verdicts for the retrieval notebooks (03 and 04).

Every verdict here is derived from the numbers passed in, so the prose stays true when
the corpus, the questions or the model change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rag_lab import chapter, plots
from rag_lab.metrics import Ranks, hits_at, summary_table
from rag_lab.stats import Paired, paired, paired_table, wilson

KS = (1, 4, 8, 20)
ALPHA = 0.05


def interval_table(systems: Mapping[str, Ranks], ks: Sequence[int] = KS) -> pd.DataFrame:
    """Recall@k as ``value [lo, hi]`` (Wilson 95 %), MRR and queries without any hit."""
    table = summary_table(systems, ks)
    out = pd.DataFrame(index=table.index)
    out["n"] = table["n"].astype(int)
    for k in ks:
        out[f"R@{k}"] = [
            f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
            for v, lo, hi in zip(
                table[f"R@{k}"], table[f"R@{k} lo"], table[f"R@{k} hi"], strict=True
            )
        ]
    out["MRR"] = table["MRR"].map("{:.3f}".format)
    out["no hit"] = table["no hit"].astype(int)
    return out


def paired_view(
    systems: Mapping[str, Ranks], pairs: Sequence[tuple[str, str]], ks: Sequence[int]
) -> pd.DataFrame:
    """Paired sign tests, with the chapter's result for the same comparison where it has one."""
    table = paired_table(systems, pairs, ks)
    table["here"] = [
        str(Paired(w, lo, 0)) for w, lo in zip(table["wins"], table["losses"], strict=True)
    ]
    table["chapter"] = [
        _chapter_paired(a, b, k) for a, b, k in zip(table["a"], table["b"], table["k"], strict=True)
    ]
    return table


def two_by_two(a: Ranks, b: Ranks, k: int, names: tuple[str, str]) -> pd.DataFrame:
    """Queries hit or missed at k by each of two systems: where they agree and where not."""
    ha, hb = hits_at(a, k), hits_at(b, k)
    rows = {
        f"{names[0]} hit": [int((ha & hb).sum()), int((ha & ~hb).sum())],
        f"{names[0]} miss": [int((~ha & hb).sum()), int((~ha & ~hb).sum())],
    }
    return pd.DataFrame(rows, index=[f"{names[1]} hit", f"{names[1]} miss"]).T


def recall_curve_figure(
    systems: Mapping[str, Ranks],
    title: str,
    colors: Mapping[str, str] | None = None,
    kmax: int = 20,
):
    """Recall@k for k = 1..kmax, one line per system, with Wilson 95 % bands."""
    import matplotlib.pyplot as plt

    ks = np.arange(1, kmax + 1)
    with plots.style():
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, (name, ranks) in enumerate(systems.items()):
            n = len(ranks)
            hits = np.array([int(hits_at(ranks, k).sum()) for k in ks])
            bounds = np.array([wilson(int(h), n) for h in hits])
            color = (colors or {}).get(name, f"C{i}")
            ax.plot(ks, hits / n, color=color, lw=1.6, label=name)
            ax.fill_between(ks, bounds[:, 0], bounds[:, 1], color=color, alpha=0.12, lw=0)
        ax.set_xlabel("k (chunks retrieved)")
        ax.set_ylabel("Recall@k (queries with the needle in the top k)")
        ax.set_xticks([1, 4, 8, 12, 16, 20])
        ax.set_ylim(0, 1)
        n = len(next(iter(systems.values())))
        ax.set_title(f"{title} (n = {n} queries; bands: Wilson 95 %)")
        ax.legend(loc="lower right", ncols=2)
        fig.tight_layout()
    return fig


def latency_table(latencies, reference: Mapping[str, float]) -> pd.DataFrame:
    """Median and p90 per stage beside the chapter's figure for the same stage, in ms."""
    rows = []
    for lat in latencies:
        rows.append(
            {
                "stage": lat.stage,
                "median ms": round(lat.median, 3),
                "p90 ms": round(lat.p90, 3),
                "chapter ms": reference.get(lat.stage, float("nan")),
            }
        )
    return pd.DataFrame(rows).set_index("stage")


# --- verdicts -----------------------------------------------------------------------


def reading_dense(ranks_by: Mapping[str, Ranks], phrasing: Mapping[str, Ranks]) -> str:
    """The chapter's chunking claims under dense retrieval, judged on our numbers."""
    n = len(ranks_by["A"])
    lo_a, hi_a = _wilson_at(ranks_by["A"], 20)
    lo_e, hi_e = _wilson_at(ranks_by["E"], 20)
    separate = hi_a < lo_e or hi_e < lo_a
    lines = [
        f"- **Intervals.** At n = {n}, R@20 is [{lo_a:.3f}, {hi_a:.3f}] for A and "
        f"[{lo_e:.3f}, {hi_e:.3f}] for E (the chapter: {_fmt(chapter.WILSON_R20['A'])} and "
        f"{_fmt(chapter.WILSON_R20['E'])}); here they "
        + (
            "do not overlap."
            if separate
            else "overlap, so the unpaired table cannot tell A and E apart."
        )
    ]
    for a, b, claim in (
        ("E", "A", "the header (with boundaries) beats blind cuts"),
        ("E", "C", "the header alone, on the same cuts, buys recall"),
    ):
        r = _paired(ranks_by, a, b, 20)
        lines.append(
            f"- **{a} vs {b} at R@20: {r}.** The chapter's claim that {claim} " + _verdict(r)
        )
    b_a = [_paired(ranks_by, "B", "A", k) for k in (8, 20)]
    f_e = _paired(ranks_by, "F", "E", 20)
    # Ranking proper: only the queries whose needle survives in both A and B.
    both = [
        a is not None and b is not None for a, b in zip(ranks_by["A"], ranks_by["B"], strict=True)
    ]
    kept = {s: [r for r, keep in zip(ranks_by[s], both, strict=True) if keep] for s in ("A", "B")}
    ranking_only = [_paired(kept, "B", "A", k) for k in (8, 20)]
    helps = [r for r in [*ranking_only, f_e] if r.wins > r.losses and r.p < ALPHA]
    significant = any(r.wins > r.losses and r.p < ALPHA for r in b_a)
    if significant and not helps:
        note = " — significant, but only because B rescues needles that A destroys; "
    else:
        note = "; "
    lines.append(
        f"- **Overlap and ranking.** B vs A: {b_a[0]} at R@8, {b_a[1]} at R@20"
        + note
        + f"on the {sum(both)} queries whose needle survives in both: {ranking_only[0]} at R@8, "
        f"{ranking_only[1]} at R@20. F vs E at R@20: {f_e} (the chapter: +2/−6). "
        + (
            "Overlap does not significantly help ranking, as the chapter says."
            if not helps
            else "Here overlap does help ranking significantly, unlike in the chapter."
        )
    )
    cmp = [paired(hits_at(phrasing["course"], k), hits_at(phrasing["ticket"], k)) for k in (8, 20)]
    lines.append(
        f"- **Ticket wording (E, {len(phrasing['course'])} questions, course vs ticket).** "
        f"R@8 {cmp[0]}; R@20 {cmp[1]}. "
        + (
            "Support-ticket wording costs recall significantly."
            if any(r.wins > r.losses and r.p < ALPHA for r in cmp)
            else "The difference is not significant at this size."
        )
    )
    return "\n".join(lines)


def reading_hybrid(ranks: Mapping[str, Ranks]) -> str:
    """The chapter's dense / BM25 / hybrid claims on strategy E, judged on our numbers."""
    r1 = {name: float(hits_at(r, 1).mean()) for name, r in ranks.items()}
    r8 = {name: float(hits_at(r, 8).mean()) for name, r in ranks.items()}
    top1 = _paired(ranks, "BM25", "dense", 1)
    at8 = _paired(ranks, "dense", "BM25", 8)
    ratio = r1["BM25"] / r1["dense"] if r1["dense"] else float("inf")
    lines = [
        f"- **Top-1.** BM25 R@1 = {r1['BM25']:.3f}, dense {r1['dense']:.3f} ({ratio:.2f}×; "
        f"BM25 vs dense {top1}). The chapter's 'BM25 more than doubles dense top-1' "
        + ("reproduces." if ratio > 2 else "does not reproduce here."),
        f"- **Rank 8.** dense {r8['dense']:.3f}, BM25 {r8['BM25']:.3f} (dense vs BM25 {at8}). "
        + (
            "BM25 loses by rank 8, as in the chapter."
            if r8["dense"] > r8["BM25"]
            else "BM25 does not lose by rank 8 here."
        ),
    ]
    d1, b1 = hits_at(ranks["dense"], 8), hits_at(ranks["BM25"], 8)
    only_d, only_b = int((d1 & ~b1).sum()), int((~d1 & b1).sum())
    lines.append(
        f"- **Different failures.** At R@8, {only_d} queries are found only by dense and "
        f"{only_b} only by BM25: "
        + ("they fail on different queries." if only_d and only_b else "one dominates the other.")
    )
    metrics = {
        name: [float(hits_at(r, k).mean()) for k in KS] + [_mrr(r)] for name, r in ranks.items()
    }
    best_everywhere = all(
        h >= max(d, b)
        for h, d, b in zip(metrics["hybrid"], metrics["dense"], metrics["BM25"], strict=True)
    )
    vs_dense, vs_bm25 = _paired(ranks, "hybrid", "dense", 4), _paired(ranks, "hybrid", "BM25", 4)
    lines.append(
        "- **Hybrid.** "
        + (
            "It is at least as good as both on every point estimate (R@1/4/8/20, MRR). "
            if best_everywhere
            else "It is not the best on every point estimate. "
        )
        + f"At R@4: vs dense {vs_dense} (the chapter: +10/−6, p = 0.45), vs BM25 {vs_bm25} "
        f"(the chapter: +10/−3, p = 0.09). "
        + (
            "Hybrid is not significantly better than dense, as in the chapter."
            if not (vs_dense.wins > vs_dense.losses and vs_dense.p < ALPHA)
            else "Here hybrid is significantly better than dense, unlike in the chapter."
        )
    )
    return "\n".join(lines)


def _paired(ranks_by: Mapping[str, Ranks], a: str, b: str, k: int) -> Paired:
    return paired(hits_at(ranks_by[a], k), hits_at(ranks_by[b], k))


def _verdict(r: Paired) -> str:
    if r.wins > r.losses and r.p < ALPHA:
        return f"survives the paired sign test (p < {ALPHA})."
    if r.wins > r.losses:
        return "points the same way but does not reach significance here."
    return "does not reproduce: the difference goes the other way or is nil."


def _wilson_at(ranks: Ranks, k: int) -> tuple[float, float]:
    return wilson(int(hits_at(ranks, k).sum()), len(ranks))


def _mrr(ranks: Ranks) -> float:
    return float(np.mean([1 / r if r else 0.0 for r in ranks]))


def _fmt(interval: tuple[float, float]) -> str:
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def _chapter_paired(a: str, b: str, k: int) -> str:
    ref = chapter.PAIRED.get((a, b, k))
    if ref is None:
        return ""
    wins, losses, p = ref
    return f"+{wins}/−{losses}" + (f", p = {p}" if p else "")
