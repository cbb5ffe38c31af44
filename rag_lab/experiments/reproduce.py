"""``make reproduce``: every ``notebooks/NN_*.ipynb`` run in order by papermill in one process,
each in a fresh kernel, written back with its outputs; the first failure stops the run (exit 1).

``reproduce 03 05`` runs only those; ``--output DIR`` writes the notebooks there and their
figures to ``DIR/figures``. A kernel's long work shows here (:func:`rag_lab.progress.relayed`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rag_lab import paths, progress

NOTEBOOKS = paths.ROOT / "notebooks"


def notebooks(selected: Sequence[str] = ()) -> list[Path]:
    """The numbered notebooks in order, or those whose name starts with one of ``selected``."""
    found = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    unknown = [s for s in selected if not any(nb.name.startswith(s) for nb in found)]
    if unknown:
        names = ", ".join(nb.name for nb in found)
        raise SystemExit(f"no notebook starts with {', '.join(unknown)}; there are: {names}")
    return [nb for nb in found if not selected or any(nb.name.startswith(s) for s in selected)]


def run(selected: Sequence[str] = (), output: Path | None = None) -> list[tuple[str, float]]:
    """Execute the notebooks (in place, or into ``output``); (name, seconds) for each."""
    import papermill
    from traitlets.config import Config

    times = []
    if output is not None:
        output = output.resolve()
        (output / "figures").mkdir(parents=True, exist_ok=True)
        os.environ[paths.FIGURES_ENV] = str(output / "figures")  # the kernels inherit it
    os.chdir(paths.ROOT)  # papermill records the paths in each notebook: relative ones
    # The kernels import this checkout's package, not whichever one the venv has installed
    # (a second worktree beside an editable install would otherwise run the first's code).
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(paths.ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    with progress.relayed(sys.stdout) as relay:
        for nb in notebooks(selected):
            nb = nb.relative_to(paths.ROOT)
            print(f"== {nb}", flush=True)
            relay.prefix = f"   {nb.name[:2]} "
            start = time.perf_counter()
            try:
                papermill.execute_notebook(
                    str(nb),
                    str(nb if output is None else output / nb.name),
                    kernel_name="python3",
                    config=Config(KernelManager={"transport": "ipc"}),  # local sockets, not TCP
                    cwd="notebooks",
                    execution_timeout=3600,  # per cell: notebook 09's answers take minutes cold
                    progress_bar=False,
                )
            except papermill.PapermillExecutionError as err:
                relay.clear()
                print(f"{nb.name} failed in cell {err.exec_count}: {err.ename}: {err.evalue}")
                raise SystemExit(1) from None
            relay.clear()
            times.append((nb.name, time.perf_counter() - start))
            print(f"   {nb.name} in {progress.duration(times[-1][1])}", flush=True)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab.experiments.reproduce")
    parser.add_argument("notebooks", nargs="*", help="name prefixes, e.g. 03 (default: all)")
    parser.add_argument("--output", type=Path, metavar="DIR", help="write notebooks here")
    args = parser.parse_args(argv)
    times = run(args.notebooks, args.output)
    print(f"{len(times)} notebooks in {progress.duration(sum(s for _, s in times))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
