"""The root of every exception rag_lab defines, and the three kinds a caller acts on.

An exception of the package is a fault the lab knows and can name: a bad input, an
environment that lacks something, an index that cannot serve the command. Each derives
from :class:`RagLabError` through one of the three kinds below, so a caller tells the
lab's own faults from its bugs with one ``except``, and maps the kinds to what it does
(the ``rag-lab`` command: exit statuses, :data:`rag_lab.app.exits.EXIT_STATUS`). An
exception says what is wrong and where, never which command or option to type: words for
a user are the caller's.

>>> from rag_lab.questions import QuestionsError
>>> issubclass(QuestionsError, BadInput) and issubclass(QuestionsError, ValueError)
True
"""

from __future__ import annotations


class RagLabError(Exception):
    """A fault rag_lab knows and names; the root of every exception the package defines."""


class BadInput(RagLabError):
    """What was given is wrong: an option (or one the index does not fit), a folder or file,
    a question file, a manifest."""


class BadEnvironment(RagLabError):
    """Something the run needs is missing or not what it should be: a package, a model's
    weights, the lab's corpus or benchmark, a program such as Tesseract."""


class UnusableIndex(RagLabError):
    """The index cannot serve the command: missing, not ours, damaged, busy, read-only,
    stale, empty, or recording an encoder backend this version does not know."""
