"""The command line's streams and signals: what a pipeline or a service manager does to it.

Everything printed passes one filter, :func:`~rag_lab.text.terminal_safe` (a file's name, a
folder's, a baseline's stamps: an escape sequence in them is shown, never acted on); output
is written in whatever encoding stdout has; a stream whose reader went away
(``| head``) is pointed at /dev/null so the rest goes nowhere quietly; SIGTERM (what
``kill``, ``timeout``, systemd and containers send) unwinds as Ctrl-C does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

from rag_lab.text import terminal_safe


class EscapingStream:
    """A text stream that writes :func:`~rag_lab.text.terminal_safe` text to ``unescaped``
    (which it stands for in every other respect). A progress bar, whose own ``\\r`` and
    escape sequences are meant, writes to ``unescaped``."""

    def __init__(self, unescaped: TextIO) -> None:
        self.unescaped = unescaped

    def write(self, text: str) -> int:
        self.unescaped.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:
        return getattr(self.unescaped, name)


@contextlib.contextmanager
def escaped_streams() -> Iterator[None]:
    """Inside, ``sys.stdout`` and ``sys.stderr`` are :class:`EscapingStream`\\ s (after
    :func:`encode_what_streams_accept`); the streams of before are put back on the way out."""
    encode_what_streams_accept()
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(sys.stdout), EscapingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before


def encode_what_streams_accept() -> None:
    """Write what stdout and stderr cannot encode (``PYTHONIOENCODING=ascii``, a C locale)
    as ``\\uXXXX`` rather than fail mid-output on a "—" or a file's name."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[list[int]]:
    """Inside, SIGTERM raises KeyboardInterrupt, so it unwinds as Ctrl-C does (the index
    stays consistent, temporary files are removed); yields the signals received. A second
    SIGTERM while the first unwinds is ignored, so the clean-up runs to its end."""
    received: list[int] = []

    def interrupt(signum: int, frame: object) -> None:
        if received:
            return
        received.append(signum)
        raise KeyboardInterrupt

    try:
        before = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals are not ours to take
        yield received
        return
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, before)


def silence(stream: object) -> None:
    """Point a stream whose reader went away at /dev/null, so that what is still buffered,
    and anything written later (the interpreter flushes at exit), goes nowhere quietly."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):
        return
    os.dup2(devnull, fd)
    os.close(devnull)
