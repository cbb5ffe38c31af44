"""The claims ledger of the whole lab: each notebook's part, the file, the view, the README.

Each notebook writes its claims (:mod:`rag_lab.evaluation.ledger` entries) to
``figures/claims/<notebook>.json``; the closing notebook gathers them into
``figures/claims.json``, shows both benchmarks side by side and draws every paired difference
with its interval; ``python -m rag_lab.experiments.findings`` (the last step of ``make
reproduce``) writes the README's summary of findings from that file, between its markers.
"""

from __future__ import annotations

import collections
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rag_lab import paths
from rag_lab.claims import ROLES, claims, render
from rag_lab.claims.judge import POWER
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import figures
from rag_lab.evaluation.ledger import Entry, Ledger
from rag_lab.experiments.present import MAX_WIDTH, Table
from rag_lab.stats import ALPHA

README = paths.ROOT / "README.md"
START, END = "<!-- findings: start -->", "<!-- findings: end -->"
"""The README's summary lies between these lines, and only there."""


def parts_dir() -> Path:
    return paths.figures_dir() / "claims"


def ledger_path() -> Path:
    return paths.figures_dir() / "claims.json"


def save_part(notebook: str, entries: Sequence[Entry]) -> None:
    """Write one notebook's entries as its part of the ledger (``figures/claims/NN.json``)."""
    Ledger(list(entries)).write(parts_dir() / f"{notebook}.json")


SECOND_ENCODER = "13"
"""Notebook 13 judges the claims again under a second encoder: the chapter's ledger stays the
lab's encoder's, so its part is never gathered."""


def gather() -> Ledger:
    """Every notebook's part but :data:`SECOND_ENCODER`'s, in notebook order."""
    ledger = Ledger()
    for part in sorted(parts_dir().glob("[0-9][0-9].json")):
        if part.stem != SECOND_ENCODER:
            ledger.extend(Ledger.read(part).entries)
    return ledger


def side_by_side(ledger: Ledger) -> pd.DataFrame:
    """One row a claim, one column pair a benchmark: the estimate with its interval (or the
    count) and the verdict; benchmarks in the order they first appear."""
    benchmarks = list(dict.fromkeys(e.benchmark for e in ledger.entries))
    rows: dict[str, dict[str, str]] = {}
    for e in ledger.entries:
        row = rows.setdefault(e.claim, {"claim": e.statement, "chapter": e.chapter})
        row[f"{e.benchmark}: here"] = render.evidence(e)
        row[f"{e.benchmark}: verdict"] = e.verdict.label
    columns = ["claim", "chapter"] + [
        f"{b}: {part}" for b in benchmarks for part in ("here", "verdict")
    ]
    table = pd.DataFrame(list(rows.values()), index=pd.Index(list(rows), name="id"))
    return table.reindex(columns=columns).fillna("–")


def verdict_tables(ledger: Ledger) -> list[Table]:
    """:func:`side_by_side` in tables that fit a page: the claims judged on more than one
    benchmark, their verdicts side by side; then, per benchmark, the claims judged only there,
    with our estimate (or count) and the verdict. Estimates of the shared claims are in the
    forest plot."""
    benchmarks = list(dict.fromkeys(e.benchmark for e in ledger.entries))
    on: dict[str, list[Entry]] = {}
    for e in ledger.entries:
        on.setdefault(e.claim, []).append(e)
    shared = {c: es for c, es in on.items() if len(es) > 1}
    tables = []
    if shared:
        columns = [
            b for b in benchmarks if any(e.benchmark == b for es in shared.values() for e in es)
        ]
        frame = (
            pd.DataFrame(
                [
                    {"claim": es[0].statement, **{e.benchmark: e.verdict.short for e in es}}
                    for es in shared.values()
                ],
                index=pd.Index(list(shared), name="id"),
            )
            .reindex(columns=["claim", *columns])
            .fillna("–")
        )
        caption = (
            f"Claims judged on {len(columns)} benchmarks, their verdicts (excludes its effect: "
            "the interval excludes the chapter's effect)"
        )
        tables.append(_fitted(frame, "claim", caption))
    for bench in benchmarks:
        only = [es[0] for c, es in on.items() if c not in shared and es[0].benchmark == bench]
        if not only:
            continue
        frame = pd.DataFrame(
            {
                "claim": [e.statement for e in only],
                "here": [render.evidence(e) for e in only],
                "verdict": [e.verdict.short for e in only],
            },
            index=pd.Index([e.claim for e in only], name="id"),
        )
        tables.append(_fitted(frame, "claim", f"Claims judged on {bench} only"))
    return tables


def chapter_page(ledger: Ledger) -> list[Table]:
    """The chapter's own claims, one table per benchmark and one row per claim: what it says,
    the chapter's result, ours, and the verdict with what qualifies it
    (:func:`rag_lab.claims.render.verdict_text`)."""
    tables = []
    for bench in dict.fromkeys(e.benchmark for e in ledger.entries):
        mine = [e for e in ledger.entries if e.role == "chapter" and e.benchmark == bench]
        if not mine:
            continue
        frame = pd.DataFrame(
            {
                "claim": [e.statement + (" (stand-in)" if e.stand_in else "") for e in mine],
                "chapter": [e.chapter for e in mine],
                "here": [render.evidence(e) for e in mine],
                "verdict": [render.verdict_text(e) for e in mine],
            },
            index=pd.Index([e.claim for e in mine], name="id"),
        )
        tables.append(_fitted(frame, "claim", f"The chapter's claims on {bench}"))
    return tables


def _fitted(frame: pd.DataFrame, column: str, caption: str) -> Table:
    """A Table whose ``column`` (free text) is shortened to what the other columns leave
    of the page; ``here``, ``chapter`` and ``verdict`` are capped so one long cell cannot
    take the page."""
    caps = {"here": 20, "index": 18, "chapter": 12, "verdict": 18}
    rest = Table(frame.drop(columns=column), shorten=caps).width
    caps[column] = max(20, MAX_WIDTH - rest - 2)
    return Table(frame, caption=caption, shorten=caps)


def rule() -> str:
    """The ledger's rule in words, its constants read from the rule
    (:mod:`rag_lab.claims.judge`) and the declared margins (:mod:`rag_lab.claims`), so the
    text cannot drift from the code or the plan."""
    margins = {c.margin_name: c.margin for c in claims().values() if c.margin_name}
    m, rate, power, alpha = margins["recall"], margins["rate"], POWER, ALPHA
    return "\n".join(
        [
            "- a paired claim is decided by one interval, the one the entry shows: the t "
            "interval of the difference by question, at "
            f"1 − {alpha:g}/m over the notebook's m confirmatory claims on one benchmark "
            f"(Bonferroni; 1 − {alpha:g} for an exploratory one); a directional claim "
            "**reproduces** when that interval lies wholly on its side of 0 and is "
            "**contradicted** when wholly on the other; it **excludes the chapter's effect** "
            "when the interval holds 0 but not the chapter's effect, and only when that effect "
            "was within reach (a ceiling never decides); otherwise it is **inconclusive**, "
            f"with the smallest difference the design detects with {power:.0%} power;",
            f'- a "no difference" claim reproduces when the whole interval lies within ±{m:.2f} '
            "(the smallest effect of interest, declared in the claims file from the field, not "
            "from the chapter's effects), and says so when the difference is also significant; "
            "it is contradicted when the interval excludes 0 and leaves the margin; a rate the "
            f"chapter reports reproduces only when our interval lies within ±{rate:.2f} of it; "
            "a count reproduces when its stated condition holds;",
            "- **no variation** (every question's difference is 0), **by construction**, **not "
            "testable here** (including a stand-in that changes the task) and **not measured** "
            "are verdicts of their own, each with its reason, and never count as agreement.",
        ]
    )


def tally(ledger: Ledger, roles: Sequence[str] = ("chapter",)) -> pd.DataFrame:
    """Verdicts counted per benchmark, over the entries of ``roles`` (the chapter's own
    claims by default: controls, the project's hypotheses and exploratory looks are counted
    apart, never in the headline)."""
    mine = [e for e in ledger.entries if e.role in roles]
    counts = pd.crosstab(
        pd.Series([e.verdict.label for e in mine], name="verdict"),
        pd.Series([e.benchmark for e in mine], name="benchmark"),
    )
    order = [v.label for v in Verdict if v.label in counts.index]
    return counts.reindex(order)


def plan() -> Table:
    """The analysis plan the ledger was judged against: the claims file, its sha256, its
    claims by role and its deviations."""
    from rag_lab import claims as declared

    by_role = collections.Counter(c.role for c in claims().values())
    frame = pd.DataFrame(
        {
            "value": [
                declared.FILE.name,
                declared.sha256()[:16],
                *(str(by_role.get(r, 0)) for r in declared.ROLES),
                str(len(declared.deviations())),
            ]
        },
        index=pd.Index(
            ["file", "sha256 (first 16)", *(f"claims: {r}" for r in declared.ROLES),
             "deviations"],
            name="",
        ),
    )  # fmt: skip
    return Table(frame, caption="The claims file: declared before the results it judges")


def forest_figure(ledger: Ledger):
    """Every paired difference of the ledger with its interval
    (:func:`rag_lab.evaluation.figures.forest_figure`)."""
    return figures.forest_figure(
        ledger.entries, "Every paired claim of the ledger", label_benchmark=True
    )


def summary(ledger: Ledger) -> str:
    """The README's summary of findings, in Markdown: first the chapter's own claims (their
    verdicts counted per benchmark, then each claim tested on a number with its estimate and
    verdict), then the controls, the project's hypotheses and exploratory looks, apart."""
    others = tuple(r for r in ROLES if r != "chapter")
    return "\n".join(
        [
            "**The chapter's claims**",
            "",
            *_summary_block(ledger, ("chapter",)),
            "",
            "**Controls, the project's hypotheses and exploratory looks** (never counted above)",
            "",
            *_summary_block(ledger, others),
        ]
    )


def _summary_block(ledger: Ledger, roles: Sequence[str]) -> list[str]:
    counts = tally(ledger, roles)
    lines = [
        "| verdict | " + " | ".join(counts.columns) + " |",
        "|---" * (len(counts.columns) + 1) + "|",
        *(
            f"| {v} | " + " | ".join(str(int(n)) for n in counts.loc[v]) + " |"
            for v in counts.index
        ),
        "",
        "| claim | role | benchmark | chapter | here | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for e in ledger.entries:
        if e.role in roles:
            evidence = render.evidence(e)
            flag = " (stand-in)" if e.stand_in else ""
            lines.append(
                f"| {e.statement}{flag} | {e.role} | {e.benchmark} | {e.chapter} | {evidence} "
                f"| {render.verdict_text(e)} |"
            )
    return lines


def update_readme(ledger: Ledger, readme: Path = README) -> bool:
    """Rewrite the README's block between :data:`START` and :data:`END`; True if it changed."""
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{readme} has no {START} … {END} block to write the findings in")
    block = f"{START}\n{summary(ledger)}\n{END}"
    new = pattern.sub(lambda _: block, text)
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


def not_confirmed(ledger: Ledger) -> str:
    """The claims this lab's numbers go against (contradicted, or the chapter's effect
    excluded), one bullet each with their test (:func:`rag_lab.claims.render.entry_line`)."""
    against = (Verdict.CONTRADICTED, Verdict.EXCLUDES_CHAPTER_EFFECT)
    picked = [e for e in ledger.entries if e.verdict in against]
    if not picked:
        return "No claim is contradicted, and no chapter effect is excluded."
    return "\n".join(render.entry_line(e, with_benchmark=True) for e in picked)


def main() -> int:
    path = ledger_path()
    if not path.is_file():
        print(f"no ledger at {path}: run the notebooks first (make reproduce)", file=sys.stderr)
        return 1
    changed = update_readme(Ledger.read(path))
    print(f"README findings {'rewritten' if changed else 'unchanged'} from {path.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
