"""What the commands print: an indexing run's report, an answer and its sources, status as
JSON. The words of errors are :mod:`rag_lab.app.cli`'s."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import asdict

from rag_lab import chunking
from rag_lab.app import index, ingest
from rag_lab.app.store import Store
from rag_lab.pipeline import Answer, Refusal
from rag_lab.sources import folder
from rag_lab.text import printable, shorten


def report_lines(report: ingest.IngestReport, store: Store, where: str = "") -> list[str]:
    """What a run of ``index`` or ``retry`` did, one line each (read from the open index);
    ``where``: what its rebuild command adds to act on this index (`` --store URI``)."""
    lines = [report.summary()]
    for doc_id, reason in report.failed.items():
        record = store.document(doc_id)
        lines.append(printable(f"  failed {record.path if record else doc_id}: {reason}"))
    for doc_id, was in report.renamed.items():
        record = store.document(doc_id)
        now = record.path if record else doc_id
        lines.append(printable(f"  renamed {was} to {now} (the same id, {doc_id}): read again"))
    for path, why in report.not_followed.items():
        lines.append(printable(f"  not followed {path}: {why}"))
    if report.other:
        counts = sorted(report.other.items(), key=lambda kv: (-kv[1], kv[0]))
        named = ", ".join(f"{n} {suffix or 'without a suffix'}" for suffix, n in counts)
        lines.append(printable(f"skipped: {named} (not a type rag-lab reads)"))
    if report.running_lines:
        removed, pdfs = sum(report.running_lines.values()), len(report.running_lines)
        lines.append(
            f"running headers and footers removed: {removed} lines in {pdfs} "
            f"PDF{'s' * (pdfs != 1)} (lines repeated at the top or bottom of most pages; "
            "--keep-running-lines keeps them)"
        )
    for doc_id, n in report.cut.items():
        record = store.document(doc_id)
        print(
            f"warning: {record.path if record else doc_id}: {n} passage{'s' * (n != 1)} over "
            f"{chunking.MAX_FACTOR * chunking.TARGET:,} characters with no paragraph or "
            f"sentence break, cut into pieces of at most {chunking.TARGET}",
            file=sys.stderr,
        )
    for doc_id, said in report.warned.items():
        record = store.document(doc_id)
        where = record.path if record else doc_id
        print(printable(f"warning: {where}: {folder.warned(said)}"), file=sys.stderr)
    for doc_id, pages in report.flagged.items():
        record = store.document(doc_id)
        lines.append(
            f"  low OCR confidence {printable(record.path if record else doc_id)}: "
            f"{index.pages_label(pages)} (their text may be wrong; citations of them are marked)"
        )
    if report.stale:
        lines.append(
            f"{len(report.stale)} documents were embedded with another stamp and are stale; "
            "queries are refused until you run: "
            f"rag-lab index {printable(store.meta('folder') or 'DIR')} --rebuild{where}"
        )
    return lines


def print_answer(
    result: Answer, cutoff: float, show_prompt: bool, retriever: str = "dense"
) -> None:
    """An answer's sources; ranked by ``retriever`` (dense keeps only those under the cutoff,
    BM25 and hybrid their top k once the nearest chunk is under it)."""
    n = len(result.citations)
    where = (
        f"under cosine distance {cutoff}"
        if retriever == "dense"
        else f"ranked by {retriever}, the nearest chunk under cosine distance {cutoff}"
    )
    print(
        f"{n} source{'s' * (n != 1)} {where}; the prompt is "
        f"{len(result.prompt):,} characters (no generator is called; --prompt prints it)"
    )
    for c in result.citations:
        where = printable(f"{c.href}  {c.document_name} — {c.locator_label}")
        print(f"[{c.index}] {c.distance:.3f}  {where}")
        if c.warning:
            print(f"    (!) low-confidence OCR text, {printable(c.warning)}")
        quote = printable(" ".join(c.quote.split()))
        print(textwrap.indent(shorten(quote, 200), "    "))
    if show_prompt:  # as it is for a program reading it; escaped for a person
        if on_terminal():
            print(f"\n{printable(result.prompt, newlines=True)}")
        else:  # past the escaping of every other line (rag_lab.app.terminal)
            print(f"\n{result.prompt}", file=getattr(sys.stdout, "unescaped", sys.stdout))


def on_terminal() -> bool:
    """Is stdout a terminal (where control characters in text would act, not show)?"""
    return sys.stdout.isatty()


def answer_json(result: Answer | Refusal) -> dict:
    if isinstance(result, Refusal):
        return {
            "question": result.question,
            "answered": False,
            "cutoff": result.cutoff,
            "nearest": result.nearest,
            "message": str(result),
        }
    return {
        "question": result.question,
        "answered": True,
        "prompt": result.prompt,
        "chunks": [h.chunk.id for h in result.hits],
        "citations": [
            {
                "index": c.index,
                "href": c.href,
                "document_id": c.document_id,
                "document_name": c.document_name,
                "section": c.locator_label,
                "distance": c.distance,
                "quote": c.quote,
                "warning": c.warning,
            }
            for c in result.citations
        ],
    }


def status_json(st: index.IndexStatus) -> dict:
    return {
        "folder": st.folder,
        "counts": st.counts,
        "chunks": st.chunks,
        "failed": {r.id: r.reason for r in st.failed},
        "stale": [r.id for r in st.stale],
        "stamps": [{"documents": n, **asdict(s)} for s, n in st.stamps.items()],
        "current": asdict(st.current),
        "pdfs": st.pdfs,
        "running_lines_removed": st.running_lines,
        "low_confidence_pages": {path: list(pages) for path, pages in st.flagged.items()},
    }
