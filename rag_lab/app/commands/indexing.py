"""``rag-lab index`` (``--rebuild`` included) and ``rag-lab retry``: the commands that write
the index, and the report of what they did."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from rag_lab.app import deployed, index, ingest, lifecycle, output
from rag_lab.app.commands import UsageError, encoder_for, index_encoder
from rag_lab.app.exits import OK, PARTIAL
from rag_lab.app.ingest import IngestReport
from rag_lab.app.store import IndexDamaged, IndexMissing, MilvusLocation, Store
from rag_lab.app.values import index_in_command
from rag_lab.models.encoder import DEFAULT_ENCODER
from rag_lab.search import TextEncoder
from rag_lab.sources import folder
from rag_lab.text import printable


def run_index(args: argparse.Namespace) -> int:
    if not args.folder.is_dir():  # before any file is created
        raise UsageError(f"{args.folder}: not a folder")
    ingest.folder_root(args.folder)  # a folder the index cannot record, before any file
    if args.rebuild:
        with lifecycle.writer(args.index):
            return _rebuild(args)
    early, chose = None, None
    if not lifecycle.exists(args.index):  # the encoder first: one that fails leaves nothing
        lifecycle.check_writable(args.index)
        chose = index.resolve_encoder(args.encoder, args.backend, None)
        early = encoder_for(*chose)
    with lifecycle.writing(args.index) as store:
        held = deployed.held_strategy(store)
        strategy = args.strategy or held or index.STRATEGY
        if held is not None and strategy != held:
            raise UsageError(
                f"--strategy {strategy}: the index holds chunks of strategy {held}, and "
                f"vectors of two chunkings are not comparable; re-chunk every document with: "
                f"rag-lab index {args.folder} --strategy {strategy} --rebuild"
                f"{index_in_command(args.index)}"
            )
        name, backend = index.resolve_encoder(args.encoder, args.backend, store)
        encoder = early if chose == (name, backend) else encoder_for(name, backend)
        store.set_meta(index.BACKEND_KEY, backend)
        store.set_meta(index.ENCODER_KEY, name)
        _store_cutoff(args, store)
        print(
            f"indexing {printable(str(args.folder.resolve()))} into {printable(str(args.index))} "
            f"(encoder: {_label(name, backend)}) with strategy {strategy}"
        )
        text, status = _index(args, args.folder, store, encoder, strategy, prune=args.prune)
    print(text)  # after the run: a reader gone (| head) loses words, not work
    return status


def _rebuild(args: argparse.Namespace) -> int:
    """A fresh index beside the old one, swapped in when complete (works on a damaged one)."""
    plan = lifecycle.plan_rebuild(args.index, args.folder, args.backend, args.encoder)
    held, record = _held(args.index)
    strategy = args.strategy or held or index.STRATEGY
    if record is not None and held != strategy and args.cutoff is None:
        print(
            f"note: the stored cutoff {record['cutoff']:g} was set on strategy {held}'s chunks; "
            f"it is dropped (rag-lab index --cutoff X, or evaluate --calibrate, sets one)",
            file=sys.stderr,
        )
        record = None
    if plan.damaged is not None:
        print(
            f"note: {printable(str(args.index))} is damaged; building a fresh index",
            file=sys.stderr,
        )
    encoder = encoder_for(plan.encoder, plan.backend)
    fresh = "generation" if isinstance(args.index, MilvusLocation) else "file"
    print(
        f"rebuilding {printable(str(plan.folder))} into {printable(str(args.index))} (encoder: "
        f"{_label(plan.encoder, plan.backend)}; a fresh {fresh}, swapped in when complete) "
        f"with strategy {strategy}"
    )
    with lifecycle.rebuilding(args.index, plan.backend, plan.encoder) as store:
        if record is not None:  # the cutoff and its evidence still hold: same chunks
            deployed.store_cutoff(store, **record)
        _store_cutoff(args, store)
        text, status = _index(args, plan.folder, store, encoder, strategy, rebuild=True)
    print(text)  # after the swap: a reader gone (| head) loses words, not work
    return status


def run_retry(args: argparse.Namespace) -> int:
    with lifecycle.writing(args.index, create=False) as store:
        encoder = index_encoder(store)
        report = ingest.retry(store, encoder, index=lifecycle.on_disk(args.index))
        text, status = _reported(args, store, report)
    print(text)
    return status


def _label(name: str, backend: str) -> str:
    """The encoder in the run's first line: its backend, and its name when it is not the
    chapter's (all-MiniLM-L6-v2)."""
    return backend if name == DEFAULT_ENCODER else f"{name}, {backend}"


def _held(where: index.Location) -> tuple[str | None, dict | None]:
    """The strategy and the cutoff record of the index a rebuild replaces (None, None when
    there is none, or it cannot be read)."""
    try:
        with lifecycle.reading(where) as old:
            return deployed.held_strategy(old), deployed.stored_cutoff(old)
    except (IndexMissing, IndexDamaged, index.DamagedMeta):
        return None, None


def _store_cutoff(args: argparse.Namespace, store: Store) -> None:
    """``--cutoff X``: stored in the index, its source "given", with the date."""
    if args.cutoff is not None:
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        deployed.store_cutoff(store, args.cutoff, "given", date=today)


def _index(
    args: argparse.Namespace,
    where: Path,
    store: Store,
    encoder: TextEncoder,
    strategy: str,
    **how: bool,
) -> tuple[str, int]:
    """Index ``where`` into the open ``store`` as ``args`` ask: the report and exit status."""
    pdf = folder.PdfOptions(
        extractor=args.pdf_extractor,
        keep_running_lines=args.keep_running_lines,
        ocr=args.ocr,
        ocr_min_confidence=args.ocr_min_confidence,
    )
    on_disk = lifecycle.on_disk(args.index)
    report = ingest.index_folder(
        where,
        store,
        encoder,
        strategy=strategy,
        follow_symlinks=args.follow_symlinks,
        pdf=pdf,
        index=on_disk,
        **how,
    )
    return _reported(args, store, report)


def _reported(args: argparse.Namespace, store: Store, report: IngestReport) -> tuple[str, int]:
    """The report of a run and its exit status, taken while the writer is open."""
    lines = output.report_lines(report, store, index_in_command(args.index))
    _say_server_indexes(args.index)
    return "\n".join(lines), PARTIAL if report.failed else OK


def _say_server_indexes(where: index.Location) -> None:
    """Before a writer on a Milvus server closes: it waits for the server's index."""
    if isinstance(where, MilvusLocation) and not where.local:
        print(
            "waiting until the Milvus server's index covers the chunks written (until then "
            "it searches them through a temporary index, with lower recall)",
            file=sys.stderr,
            flush=True,
        )
