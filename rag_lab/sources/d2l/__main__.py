"""``python -m rag_lab.sources.d2l``: say which corpus the lab would read, or why none."""

from __future__ import annotations

from rag_lab.sources.d2l import CorpusError, corpus_dir, load_corpus


def main() -> int:
    try:
        docs = load_corpus()
    except CorpusError as err:
        print(err)
        return 1
    chars = sum(len(d.text) for d in docs)
    print(f"corpus: {len(docs)} documents, {chars:,} characters, verified, at {corpus_dir()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
