"""The command line's streams and signals: what a pipeline or a service manager does to it.

Everything printed passes one filter, :func:`~rag_lab.text.terminal_safe` (a file's name, a
folder's, a baseline's stamps: an escape sequence in them is shown, never acted on); output
is written in whatever encoding stdout has; a stream whose reader went away
(``| head``) is pointed at /dev/null so the rest goes nowhere quietly; SIGTERM (what
``kill``, ``timeout``, systemd and containers send) unwinds as Ctrl-C does, within a few
seconds whatever it waits for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
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


GRACE_SECONDS = 5.0
"""How long the unwinding after SIGTERM may take before the process ends regardless."""


@contextlib.contextmanager
def sigterm_as_interrupt(last_words: str = "") -> Iterator[list[int]]:
    """Inside, SIGTERM raises KeyboardInterrupt, so it unwinds as Ctrl-C does (the index
    stays consistent, temporary files are removed); yields the signals received. A second
    SIGTERM while the first unwinds is ignored, so the clean-up runs to its end, but for
    :data:`GRACE_SECONDS` at most: a clean-up that waits longer (for a stopped server, or
    an engine short of memory) is cut short, ``last_words`` written on stderr and the
    process ended with status 143, as ``kill -9`` would end it (which the index survives:
    each document is written whole or not at all)."""
    received: list[int] = []
    grace: list[threading.Timer] = []

    def interrupt(signum: int, frame: object) -> None:
        if received:
            return
        received.append(signum)
        grace.append(threading.Timer(GRACE_SECONDS, _end, (last_words, 128 + signum)))
        grace[0].daemon = True
        grace[0].start()
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
        for timer in grace:  # unwound in time
            timer.cancel()


def _end(last_words: str, status: int) -> None:
    """End the process now, ``last_words`` on stderr (written to the descriptor: the main
    thread may hold the stream's lock)."""
    with contextlib.suppress(OSError):
        os.write(2, (terminal_safe(last_words) + "\n").encode("utf-8", "backslashreplace"))
    os._exit(status)


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
