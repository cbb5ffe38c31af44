"""The claims ledger of the whole lab: each notebook's part, the file, its tables, the README.

Each notebook writes its entries to ``figures/claims/NN.json``; notebook 12 gathers them into
``figures/claims.json``; ``python -m rag_lab.experiments.findings`` (the last step of ``make
reproduce``) writes the README's summary of findings from that file, between its markers.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rag_lab import claims as declared
from rag_lab import paths
from rag_lab.claims import ROLES, render
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation import figures
from rag_lab.evaluation.ledger import Entry, Ledger
from rag_lab.experiments.present import MAX_WIDTH, Table

README = paths.ROOT / "README.md"
START, END = "<!-- findings: start -->", "<!-- findings: end -->"
"""The README's summary lies between these lines, and only there."""
SECOND_ENCODER = "13"
"""Notebook 13 judges the claims again under a second encoder: never gathered."""


def parts_dir() -> Path:
    return paths.figures_dir() / "claims"


def ledger_path() -> Path:
    return paths.figures_dir() / "claims.json"


def save_part(notebook: str, entries: Sequence[Entry]) -> None:
    """Write one notebook's entries as its part of the ledger (``figures/claims/NN.json``)."""
    Ledger(list(entries)).write(parts_dir() / f"{notebook}.json")


def gather() -> Ledger:
    """Every notebook's part but :data:`SECOND_ENCODER`'s, in notebook order."""
    parts = sorted(parts_dir().glob("[0-9][0-9].json"))
    return Ledger([e for p in parts if p.stem != SECOND_ENCODER for e in Ledger.read(p).entries])


def _view(entries: Sequence[Entry]) -> pd.DataFrame:
    """The entries as the tables show them, one row each (by claim id): ``claim`` flags a
    stand-in, ``short`` is the bare verdict; benchmarks ordered as they first appear."""
    benchmarks = [e.benchmark for e in entries]
    fields = {
        "statement": [e.statement for e in entries],
        "claim": [e.statement + (" (stand-in)" if e.stand_in else "") for e in entries],
        "role": [e.role for e in entries],
        "benchmark": pd.Categorical(benchmarks, list(dict.fromkeys(benchmarks))),
        "chapter": [e.chapter for e in entries],
        "here": [render.evidence(e) for e in entries],
        "verdict": [render.verdict_text(e) for e in entries],
        "short": [e.verdict.short for e in entries],
    }
    return pd.DataFrame(fields, pd.Index([e.claim for e in entries], name="id"))


def _per_benchmark(view: pd.DataFrame, caption: str, columns: dict[str, str]) -> list[Table]:
    """A table per benchmark, ``columns`` of ``view`` renamed; the page's free text
    (``claim``) cut to what the other columns, themselves capped, leave of it."""
    groups = view.groupby("benchmark", observed=True)
    return [_fitted(g[list(columns)].rename(columns=columns), caption.format(b)) for b, g in groups]


def _fitted(frame: pd.DataFrame, caption: str) -> Table:
    caps = {"here": 20, "index": 18, "chapter": 12, "verdict": 18}
    caps["claim"] = max(20, MAX_WIDTH - Table(frame.drop(columns="claim"), shorten=caps).width - 2)
    return Table(frame, caption=caption, shorten=caps)


def side_by_side(ledger: Ledger) -> pd.DataFrame:
    """One row a claim, a column pair a benchmark: our estimate with its interval (or the
    count) and the verdict, benchmarks in the order they first appear (notebook 10)."""
    view = _view(ledger.entries).assign(label=[e.verdict.label for e in ledger.entries])
    wide = view.reset_index().pivot(index="id", columns="benchmark", values=["here", "label"])
    wide.columns = [f"{b}: {'verdict' if part == 'label' else part}" for part, b in wide.columns]
    benchmarks = view.benchmark.cat.categories
    columns = [f"{b}: {part}" for b in benchmarks for part in ("here", "verdict")]
    table = wide.reindex(index=view.index.unique(), columns=columns).fillna("–")
    claims = view.groupby(level=0).first()
    table.insert(0, "chapter", claims.chapter)
    table.insert(0, "claim", claims.statement)
    return table


def verdict_tables(ledger: Ledger) -> list[Table]:
    """The claims judged on more than one benchmark, their verdicts side by side; then, per
    benchmark, the claims judged only there with our estimate (or count) and the verdict."""
    view = _view(ledger.entries)
    many = view.index.duplicated(keep=False)
    shared = view[many].pivot(columns="benchmark", values="short").rename_axis(columns=None)
    frame = shared.reindex(view[many].index.unique()).dropna(axis=1, how="all").fillna("–")
    frame.insert(0, "claim", view[many].groupby(level=0).statement.first())
    caption = "Claims judged on several benchmarks, their verdicts (excludes its effect: the "
    caption += "interval excludes the chapter's effect)"
    tables = [_fitted(frame, caption)] if many.any() else []
    only = {"statement": "claim", "here": "here", "short": "verdict"}
    return tables + _per_benchmark(view[~many], "Claims judged on {} only", only)


def chapter_page(ledger: Ledger) -> list[Table]:
    """The chapter's own claims, one table per benchmark: what each says, the chapter's
    result, ours, the verdict with what qualifies it (:func:`render.verdict_text`)."""
    view = _view(ledger.entries)
    columns = {c: c for c in ("claim", "chapter", "here", "verdict")}
    return _per_benchmark(view[view.role == "chapter"], "The chapter's claims on {}", columns)


def tally(ledger: Ledger, roles: Sequence[str] = ("chapter",)) -> pd.DataFrame:
    """Verdicts counted per benchmark over the entries of ``roles`` (the chapter's own claims
    by default; controls, hypotheses and exploratory looks are never in the headline)."""
    mine = [e for e in ledger.entries if e.role in roles]
    counts = pd.crosstab(
        pd.Series([e.verdict.label for e in mine], name="verdict"),
        pd.Series([e.benchmark for e in mine], name="benchmark"),
    )
    return counts.reindex([v.label for v in Verdict if v.label in counts.index])


def plan() -> Table:
    """The analysis plan the ledger was judged against: the claims file, its sha256, its
    claims by role and its deviations."""
    by_role = collections.Counter(c.role for c in declared.claims().values())
    values = {
        "file": declared.FILE.name,
        "sha256 (first 16)": declared.sha256()[:16],
        **{f"claims: {r}": str(by_role[r]) for r in ROLES},
        "deviations": str(len(declared.deviations())),
    }
    frame = pd.DataFrame({"value": values}).rename_axis("")
    return Table(frame, caption="The claims file: declared before the results it judges")


def forest_figure(ledger: Ledger):
    """Every paired difference of the ledger with its interval."""
    return figures.forest_figure(
        ledger.entries, "Every paired claim of the ledger", label_benchmark=True
    )


def not_confirmed(ledger: Ledger) -> str:
    """The claims this lab's numbers go against (contradicted, or the chapter's effect
    excluded), one :func:`render.entry_line` bullet each."""
    against = (Verdict.CONTRADICTED, Verdict.EXCLUDES_CHAPTER_EFFECT)
    return "\n".join(
        render.entry_line(e, with_benchmark=True) for e in ledger.entries if e.verdict in against
    )


def _pipe(frame: pd.DataFrame) -> list[str]:
    """``frame`` (its index left out) as a Markdown pipe table, cells as they are."""
    lines = ["| " + " | ".join(map(str, r)) + " |" for r in [frame.columns, *frame.to_numpy()]]
    return [lines[0], "|---" * len(frame.columns) + "|", *lines[1:]]


def summary(ledger: Ledger) -> str:
    """The README's summary of findings in Markdown: the chapter's own claims (their verdicts
    counted per benchmark, then each with its estimate and verdict), then, apart, the
    controls, the project's hypotheses and exploratory looks."""
    others = "**Controls, the project's hypotheses and exploratory looks** (never counted above)"
    lines, rest = [], tuple(r for r in ROLES if r != "chapter")
    for title, roles in (("**The chapter's claims**", ("chapter",)), (others, rest)):
        view = _view([e for e in ledger.entries if e.role in roles])
        claims = view[["claim", "role", "benchmark", "chapter", "here", "verdict"]]
        lines += ["", title, "", *_pipe(tally(ledger, roles).reset_index()), "", *_pipe(claims)]
    return "\n".join(lines[1:])


def update_readme(ledger: Ledger, readme: Path = README) -> bool:
    """Rewrite the README's block between :data:`START` and :data:`END`; True if it changed."""
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{readme} has no {START} … {END} block to write the findings in")
    new = pattern.sub(lambda _: f"{START}\n{summary(ledger)}\n{END}", text)
    readme.write_text(new, encoding="utf-8")
    return new != text


def main() -> int:
    path = ledger_path()
    changed = update_readme(Ledger.read(path))
    print(f"README findings {'rewritten' if changed else 'unchanged'} from {path.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
