"""Run the notebooks in order, in place, in one process: what ``make reproduce`` calls.

``python -m rag_lab.experiments.reproduce`` executes every ``notebooks/NN_*.ipynb`` with
papermill (each in a fresh kernel, working directory ``notebooks/``), writes it back with its
outputs, and prints the wall time of each and the total. One process for all notebooks
saves papermill's own start-up (about 2.5 s) per notebook, which is a good part of a warm
run. Name notebooks to run only those: ``python -m rag_lab.experiments.reproduce 03 05``;
``--output DIR`` writes the executed notebooks there instead of in place, and their figures
to ``DIR/figures`` (a trial run that leaves the checkout as it was). The first failure
stops the run with the notebook's name and papermill's error (exit 1).

Long work inside a kernel (texts embedded, answers generated, pages read by OCR) is shown on
this process's terminal through :func:`rag_lab.progress.relayed`, never in the notebook. The
kernels listen on local sockets (IPC), not TCP, so they have nothing to warn about.
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


def run(selected: Sequence[str] = (), output: Path | None = None) -> list[tuple[str, float]]:
    """Execute the notebooks (in place, or into ``output``); (name, seconds) for each."""
    import papermill

    times = []
    if output is not None:
        output = output.resolve()
        (output / "figures").mkdir(parents=True, exist_ok=True)
        os.environ[paths.FIGURES_ENV] = str(output / "figures")  # the kernels inherit it
    # Paths relative to the checkout: papermill records them in each notebook's metadata.
    os.chdir(paths.ROOT)
    with progress.relayed(sys.stdout) as relay:
        for nb in notebooks(selected):
            nb = nb.relative_to(paths.ROOT)
            target = nb if output is None else output / nb.name
            print(f"== {nb}", flush=True)
            relay.prefix = f"   {nb.name[:2]} "
            start = time.perf_counter()
            try:
                papermill.execute_notebook(
                    str(nb),
                    str(target),
                    kernel_name="python3",
                    kernel_manager_class=_kernel_manager(),
                    cwd="notebooks",
                    execution_timeout=TIMEOUT_S,
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


def _kernel_manager():
    """nbclient's kernel manager on IPC sockets (files beside the connection file)."""
    from jupyter_client import AsyncKernelManager
    from traitlets import default

    class IpcKernelManager(AsyncKernelManager):
        @default("transport")
        def _transport_default(self) -> str:
            return "ipc"

    return IpcKernelManager


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rag_lab.experiments.reproduce", description=__doc__.split("\n")[0]
    )
    parser.add_argument("notebooks", nargs="*", help="name prefixes, e.g. 03 (default: all)")
    parser.add_argument(
        "--output", type=Path, metavar="DIR", help="write the notebooks and figures here"
    )
    args = parser.parse_args(argv)
    times = run(args.notebooks, args.output)
    total = sum(s for _, s in times)
    print(f"{len(times)} notebooks in {progress.duration(total)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
