"""How a ``rag-lab`` run ends: its exit statuses, and the one table from a kind of error to
its status (:data:`EXIT_STATUS`); :mod:`rag_lab.app.cli` words the error.

2 is every fault of the input or the environment (a bad option, a missing or foreign file, a
damaged or busy index, an unwritable place); 1 means only "some documents failed to index";
3 (:data:`REGRESSED`) only "``evaluate --baseline``: the gate failed"; 130 is Ctrl-C and
143 SIGTERM (what ``kill``, ``timeout``, systemd and containers send), after which the index
is consistent (documents are written whole); 141 a reader of stdout that went away
(``| head``): what was done is kept (reports are printed after the work, a rebuild's after
its swap), and the rest of the output is dropped without a word.
"""

from __future__ import annotations

import signal

from rag_lab.errors import BadEnvironment, BadInput, UnusableIndex

OK, PARTIAL, ERROR, REGRESSED, INTERRUPTED = 0, 1, 2, 3, 130
CLOSED, TERMINATED = 128 + signal.SIGPIPE, 128 + signal.SIGTERM
"""141, what a shell reports of a program a closed pipe ended; 143, of one SIGTERM ended."""

EXIT_STATUS: dict[type[BaseException], int] = {
    KeyboardInterrupt: INTERRUPTED,  # Ctrl-C; the index is consistent, the same command resumes
    BrokenPipeError: CLOSED,  # stdout's reader went away (| head); said to no one
    BadInput: ERROR,  # an option, a folder or file given, a question file
    BadEnvironment: ERROR,  # a package, a model, the lab's corpus
    UnusableIndex: ERROR,  # missing, not ours, damaged, busy, read-only, stale, empty
    OSError: ERROR,  # a file or folder the system refused
    Exception: ERROR,  # a bug: still one line, and the way to the traceback
}
"""The exit status of an error: the entry of the nearest class in its MRO. Besides these,
a command returns :data:`OK`, :data:`PARTIAL` (some documents failed to index) or
:data:`REGRESSED` (``evaluate --baseline``: the gate failed: an answer lost, a question
missing or a metric regressed against the baseline), and
SIGTERM ends it with :data:`TERMINATED` (a Ctrl-C by another name)."""


def exit_status(err: BaseException) -> int:
    """``err``'s exit status: :data:`EXIT_STATUS` of the nearest class in its MRO."""
    return EXIT_STATUS[nearest(err, EXIT_STATUS)]


def nearest(err: BaseException, table: dict) -> type | None:
    """The first class of ``err``'s MRO that ``table`` has, if any."""
    return next((cls for cls in type(err).__mro__ if cls in table), None)
