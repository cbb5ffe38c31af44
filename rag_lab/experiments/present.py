"""How a notebook shows its results: findings first, tables that fit a page, the environment last.

Its tables are the package's one :class:`~rag_lab.evaluation.render.Table`."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.claims import render
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.render import MAX_WIDTH, Table, wrapped  # noqa: F401 (Table: re-exported)
from rag_lab.experiments import provenance, timing


class Findings:
    """A notebook's headline: the claims it names, each in one sentence with its number
    and the ledger's verdict. Shown as Markdown; its plain text is the same sentences."""

    def __init__(self, entries: Sequence[Entry], claims: Sequence[str]) -> None:
        picked = []
        for claim in claims:
            matching = [e for e in entries if e.claim == claim]
            if not matching:
                known = ", ".join(dict.fromkeys(e.claim for e in entries))
                raise KeyError(f"no ledger entry {claim!r} among this notebook's: {known}")
            picked += matching
        self.entries = picked

    def markdown(self) -> str:
        return "\n".join(render.finding_line(e) for e in self.entries)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        """The same sentences as plain text, each broken at spaces within :data:`MAX_WIDTH`
        (a continuation indented two spaces, as Markdown continues a bullet)."""
        return "\n".join(
            "\n".join(wrapped(line, indent="  ")) for line in self.markdown().split("\n")
        )


def findings(entries: Sequence[Entry], claims: Sequence[str]) -> Findings:
    """The entries of ``claims`` (ids, in that order; every benchmark's entry of an id)."""
    return Findings(entries, claims)


def every_claim(entries: Sequence[Entry]) -> str:
    """Every claim of a notebook, one bullet each: the estimate and its interval, the counts,
    the p of the test its interval inverts (adjusted in a confirmatory family), the chapter's
    result and the verdict (:func:`rag_lab.claims.render.entry_line`)."""
    return "\n".join(render.entry_line(e) for e in entries)


def environment(with_model: bool = True) -> str:
    """What ran, for the closing section: versions, the model's fingerprint, the machine."""
    return f"{provenance.describe(with_model)}\n{timing.machine()}"


# --- text shown exactly as it is --------------------------------------------------------------


@dataclass(frozen=True)
class Verbatim:
    """A text shown exactly as it is (a prompt as the generator receives it) that still fits
    a page: the HTML is a ``<pre>`` the browser wraps (``white-space: pre-wrap``), so no
    character is added or removed; the plain text breaks each line longer than ``width``
    at a space, ``↪`` starting each continuation (the marks are the display's, not the
    text's). ``text`` gives the text back unchanged.

    >>> v = Verbatim("a " * 30 + "end", width=40)
    >>> print(repr(v))
    a a a a a a a a a a a a a a a a a a a a
    ↪ a a a a a a a a a a end
    """

    text: str
    caption: str = ""
    width: int = MAX_WIDTH

    def lines(self) -> list[str]:
        """The plain text's lines, each at most :attr:`width` characters."""
        out = []
        for line in self.text.split("\n"):
            head = ""
            while len(head + line) > self.width:
                room = self.width - len(head)
                cut = line.rfind(" ", 1, room + 1)
                cut = room if cut <= 0 else cut
                out.append((head + line[:cut]).rstrip())
                line, head = line[cut:].lstrip(" "), "↪ "
            out.append(head + line)
        return out

    def __repr__(self) -> str:
        return "\n".join([self.caption, *self.lines()] if self.caption else self.lines())

    def _repr_html_(self) -> str:
        from rag_lab.evaluation.plots import NEUTRAL

        caption = f"<p>{html.escape(self.caption)}</p>" if self.caption else ""
        style = (
            "white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; padding: 0.6em; "
            "font-family: var(--jp-code-font-family, monospace); font-size: 0.85em; "
            f"background: {NEUTRAL['paper']}; border-left: 3px solid {NEUTRAL['faint']}"
        )
        # The class tells the page check (rag_lab.experiments.pages) this text wraps on purpose.
        pre = f'<pre class="{VERBATIM_CLASS}" style="{style}">'
        return f"{caption}{pre}{html.escape(self.text)}</pre>"


VERBATIM_CLASS = "rag-lab-verbatim"
"""The HTML class of a :class:`Verbatim` view: a text the page wraps by design, so that the
page check does not count its long lines as a text a reader scrolls sideways."""
