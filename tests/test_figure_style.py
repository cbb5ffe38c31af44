"""One look for every figure: colours come from rag_lab.evaluation.plots and nowhere else."""

from __future__ import annotations

import re

from rag_lab import paths
from rag_lab.evaluation import plots

LITERAL = re.compile(r"""["'](#[0-9a-fA-F]{3,8}|C\d|tab:\w+)["']""")
"""A colour written into figure code: a hex value, matplotlib's cycle (C0…) or tab: names."""


def test_no_figure_code_names_its_own_colours():
    found = []
    for path in sorted((paths.ROOT / "rag_lab").rglob("*.py")):
        if path.name == "plots.py" and path.parent.name == "evaluation":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if m := LITERAL.search(line):
                found.append(f"{path.relative_to(paths.ROOT)}:{number}: {m[1]}")
    assert found == [], "use a palette of rag_lab.evaluation.plots"


def test_the_rule_catches_each_kind_of_literal():
    for line in ('color="#1565c0"', "color='C3'", 'color="tab:blue"'):
        assert LITERAL.search(line), line
    assert not LITERAL.search('ls="--", name="Cross"')


def test_every_strategy_and_retriever_has_its_own_colour():
    from rag_lab.chunking import STRATEGIES

    assert set(plots.STRATEGY_COLORS) == set(STRATEGIES)
    for palette in (plots.STRATEGY_COLORS, plots.SYSTEM_COLORS, plots.VERDICT_COLORS):
        assert len(set(palette.values())) == len(palette)
