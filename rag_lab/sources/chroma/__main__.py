"""``python -m rag_lab.sources.chroma [--fetch [DEST]] [--brief]``: say which benchmark the lab
would read and what it holds, or why none; ``--fetch`` downloads it first, ``--brief`` says it
in one line (what ``make`` prints)."""

from __future__ import annotations

import argparse
from collections import Counter

from rag_lab.checksums import VerificationError
from rag_lab.sources.chroma import BenchmarkError, benchmark_dir, default_dest, fetch, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab.sources.chroma")
    parser.add_argument(
        "--fetch",
        nargs="?",
        const=default_dest(),
        metavar="DEST",
        help="download the benchmark at the pinned commit (default: the cache) and read it",
    )
    parser.add_argument("--brief", action="store_true", help="one line, not one per corpus")
    args = parser.parse_args(argv)
    path = None
    try:
        if args.fetch is not None:
            path = fetch(args.fetch)
        docs, questions = load(path)
    except (BenchmarkError, VerificationError) as err:
        print(err)
        return 1
    chars = sum(len(d.text) for d in docs)
    spans = [s for q in questions for s in q.spans]
    per_doc = Counter(q.spans[0].doc for q in questions)
    single = sum(len(q.spans) == 1 for q in questions)
    print(
        f"chroma benchmark: {len(docs)} corpora, {chars:,} characters; {len(questions)} "
        f"questions ({single} with one excerpt), {len(spans)} excerpts, every offset "
        f"slicing back; verified, at {benchmark_dir(path)}"
    )
    if args.brief:
        return 0
    for d in docs:
        print(f"  {d.id}: {len(d.text):,} characters, {per_doc[d.id]} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
