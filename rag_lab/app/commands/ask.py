"""``rag-lab ask``: a question answered from the index, or refused; the question checked
before it is embedded."""

from __future__ import annotations

import argparse
import json
import sys

from rag_lab.app import deployed, index, lifecycle, output
from rag_lab.app.commands import UsageError, index_encoder
from rag_lab.app.exits import OK
from rag_lab.models.encoder import Encoder
from rag_lab.pipeline import Refusal, answer
from rag_lab.text import printable


def run_ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UsageError('the question is empty; ask something, quoted: rag-lab ask "..."')
    _check_utf8(args.question)
    # The store stays open: the retriever reads the vectors once and the hits' texts last.
    with lifecycle.reading(args.index) as store:
        encoder = index_encoder(store, args.encoder, args.backend)
        strategy = deployed.recorded_strategy(store)
        retriever = deployed.serving(store, encoder, args.retriever, strategy)
        version = deployed.pipeline_version(strategy)
        failed = index.status(store, index.current_stamp(encoder.fingerprint, version)).failed
        cutoff = deployed.resolve_cutoff(args.cutoff, store)
        _warn_if_long(args.question, encoder)
        result = answer(args.question, retriever, cutoff.value, k=args.k)
    if failed:
        print(
            f"note: {len(failed)} documents failed to index and are not searched "
            "(rag-lab status lists them)",
            file=sys.stderr,
        )
    served = {"retriever": args.retriever, "strategy": strategy, "cutoff": cutoff.to_json()}
    if args.json:
        got = output.answer_json(result) | {"served": served}
        print(json.dumps(got, indent=1, ensure_ascii=False, allow_nan=False))
        return OK
    if isinstance(result, Refusal):
        print(printable(str(result)))
    else:
        output.print_answer(result, cutoff.value, args.prompt, args.retriever)
    print(printable(f"{cutoff.describe()}; retriever {args.retriever}, strategy {strategy}"))
    return OK


def _check_utf8(question: str) -> None:
    """Refuse a question holding bytes that are not UTF-8 (kept by Python as surrogates):
    they cannot be embedded, and mean the terminal sends another encoding."""
    for at, c in enumerate(question):
        if 0xD800 <= ord(c) <= 0xDFFF:
            byte = f"byte {ord(c) - 0xDC00:#04x}" if ord(c) >= 0xDC80 else f"{c!r}"
            raise UsageError(
                f"the question is not valid UTF-8 ({byte} at character {at + 1}); is the "
                "terminal's encoding UTF-8? Ask it again in UTF-8"
            )


def _warn_if_long(question: str, encoder: Encoder) -> None:
    """Say so when the question is longer than the encoder's window (the rest is not read)."""
    window = encoder.fingerprint.max_seq_length
    count = getattr(encoder, "count_tokens", None)
    # A word-piece covers at least one character: a shorter question needs no count (nor
    # the tokenizer it loads).
    long = len(question) + 2 > window
    if count is not None and long and (n := count(question)) > window:
        print(
            f"warning: the question is {n:,} word-pieces; the encoder reads only the first "
            f"{window}, so the rest does not take part in the search",
            file=sys.stderr,
        )
