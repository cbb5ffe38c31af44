"""Run the notebooks in order, in place, in one process: what ``make reproduce`` calls.

``python -m rag_lab.experiments.reproduce`` executes every ``notebooks/NN_*.ipynb`` with
papermill (each in a fresh kernel, working directory ``notebooks/``), writes it back with its
outputs, and prints the wall time of each and the total. One process for all notebooks
saves papermill's own start-up (about 2.5 s) per notebook, which is a good part of a warm
run. Name notebooks to run only those: ``python -m rag_lab.experiments.reproduce 03 05``.
The first failure stops the run with the notebook's name and papermill's error (exit 1).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rag_lab import paths

NOTEBOOKS = paths.ROOT / "notebooks"
TIMEOUT_S = 3600
"""Per cell: the slowest cell (notebook 09's answers, cold) takes a few minutes."""


def notebooks(selected: Sequence[str] = ()) -> list[Path]:
    """The numbered notebooks in order, or those whose name starts with one of ``selected``."""
    found = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if not selected:
        return found
    picked = [nb for nb in found if any(nb.name.startswith(s) for s in selected)]
    unknown = [s for s in selected if not any(nb.name.startswith(s) for nb in found)]
    if unknown:
        names = ", ".join(nb.name for nb in found)
        raise SystemExit(f"no notebook starts with {', '.join(unknown)}; there are: {names}")
    return picked


def run(selected: Sequence[str] = ()) -> list[tuple[str, float]]:
    """Execute the notebooks in place; (name, seconds) for each."""
    import papermill

    times = []
    # Paths relative to the checkout: papermill records them in each notebook's metadata.
    os.chdir(paths.ROOT)
    for nb in notebooks(selected):
        nb = nb.relative_to(paths.ROOT)
        print(f"== {nb}", flush=True)
        start = time.perf_counter()
        try:
            papermill.execute_notebook(
                str(nb),
                str(nb),
                kernel_name="python3",
                cwd="notebooks",
                execution_timeout=TIMEOUT_S,
                progress_bar=False,
            )
        except papermill.PapermillExecutionError as err:
            print(f"{nb.name} failed in cell {err.exec_count}: {err.ename}: {err.evalue}")
            raise SystemExit(1) from None
        times.append((nb.name, time.perf_counter() - start))
        print(f"   {times[-1][1]:.1f} s", flush=True)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rag_lab.experiments.reproduce", description=__doc__.split("\n")[0]
    )
    parser.add_argument("notebooks", nargs="*", help="name prefixes, e.g. 03 (default: all)")
    times = run(parser.parse_args(argv).notebooks)
    total = sum(s for _, s in times)
    print(f"{len(times)} notebooks in {total:.0f} s ({total / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
