"""``rag-lab status``: what the index holds and how up to date it is; ``status --check``: what
is wrong with it, and the one command that mends it."""

from __future__ import annotations

import argparse
import json

from rag_lab.app import deployed, index, lifecycle, output
from rag_lab.app.commands import index_encoder
from rag_lab.app.exits import ERROR, OK
from rag_lab.app.store import IndexDamaged
from rag_lab.app.store.lock import writer_running
from rag_lab.app.values import index_in_command
from rag_lab.chunking import STRATEGIES
from rag_lab.gate import CUTOFF
from rag_lab.text import printable


def run_status(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args)
    with lifecycle.reading(args.index, check=True) as store:
        encoder = index_encoder(store)
        strategy = deployed.recorded_strategy(store)
        version = deployed.pipeline_version(strategy)
        st = index.status(store, index.current_stamp(encoder.fingerprint, version))
        record = deployed.stored_cutoff(store)
    if args.json:
        served = {"strategy": strategy, "cutoff": record}
        print(json.dumps(output.status_json(st) | served, indent=1, allow_nan=False))
        return OK
    where = f"index {args.index} of folder {st.folder}" if st.folder else f"index {args.index}"
    print(printable(where))
    print(printable(index.describe(st, index_in_command(args.index)), newlines=True))
    print(f"strategy {strategy} ({STRATEGIES[strategy].label})")
    if record is None:
        print(f"cutoff: none stored (ask uses {CUTOFF}, the chapter's, unless --cutoff)")
    else:
        evidence = ", ".join(f"{k} {v}" for k, v in record.items() if k != "cutoff")
        print(printable(f"cutoff {record['cutoff']:g} stored ({evidence})"))
    return OK


def _served_meta(store) -> list[str]:
    """The recorded strategy and cutoff, as problems when this version cannot read them."""
    problems = []
    for key, read in (
        (deployed.STRATEGY_KEY, deployed.recorded_strategy),
        (deployed.CUTOFF_KEY, deployed.stored_cutoff),
    ):
        try:
            read(store)
        except index.DamagedMeta as err:
            problems.append(f"meta {key}: {err.what}")
    return problems


def _check(args: argparse.Namespace) -> int:
    """``status --check``: every problem of the index file and the one command that mends
    them. A file too damaged to open is a problem it reports, not an error pointing back here."""
    try:
        with lifecycle.reading(args.index) as store:
            problems = index.check(store) or _served_meta(store)
            held, documents, engine = store.meta("folder"), len(store.documents()), store.engine
    except IndexDamaged as err:
        problems, held, documents, engine = [f"it cannot be read: {err.what}"], None, 0, None
    left = lifecycle.leftovers(args.index)
    if left and not writer_running(args.index):  # else a rebuild's, in progress
        problems += [
            f"{p}: left by a rebuild that stopped (the next index or retry removes it)"
            for p in left
        ]
    mend = f"rag-lab index {held or 'DIR'} --rebuild{index_in_command(args.index)}"
    if args.json:
        print(
            json.dumps(
                {"index": str(args.index), "ok": not problems, "problems": problems}
                | ({"mend": mend} if problems else {})
            )
        )
    elif problems:
        n = len(problems)
        print(printable(f"index {args.index}: {n} problem{'s' * (n != 1)}"))
        print("\n".join(f"  {printable(p)}" for p in problems))
        print(printable(f"rebuild it: {mend}"))
    else:
        print(
            f"index {printable(str(args.index))}: sound ({engine} integrity check ok; "
            f"{documents} documents' chunk counts, vector counts and dimensions "
            "agree with their records and stamps)"
        )
    return OK if not problems else ERROR
