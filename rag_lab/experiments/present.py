"""How a notebook shows its results: its findings, every claim, a verbatim text, what ran.

Its tables are the package's one :class:`~rag_lab.evaluation.render.Table`, re-exported."""

from __future__ import annotations

import html
import platform
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata

from rag_lab import __version__
from rag_lab.claims import render
from rag_lab.evaluation import latency
from rag_lab.evaluation.ledger import Entry
from rag_lab.evaluation.render import MAX_WIDTH, Table, wrapped  # noqa: F401 (Table: re-exported)

VERBATIM_CLASS = "rag-lab-verbatim"
"""The HTML class of a :class:`Verbatim`: the page check (:mod:`rag_lab.experiments.pages`)
does not count its lines, wrapped by design, as a text a reader scrolls sideways."""


@dataclass(frozen=True)
class Findings:
    """A notebook's headline: one :func:`rag_lab.claims.render.finding_line` per entry, shown
    as Markdown; its plain text is the same lines broken within :data:`MAX_WIDTH`."""

    entries: Sequence[Entry]

    def _repr_markdown_(self) -> str:
        return "\n".join(render.finding_line(e) for e in self.entries)

    def __repr__(self) -> str:
        lines = self._repr_markdown_().split("\n")
        return "\n".join(part for line in lines for part in wrapped(line, indent="  "))


def findings(entries: Sequence[Entry], claims: Sequence[str]) -> Findings:
    """The entries of ``claims`` (ids, in that order; every benchmark's entry of an id)."""
    missing = set(claims) - {e.claim for e in entries}
    if missing:
        raise KeyError(f"no ledger entry {sorted(missing)} among this notebook's")
    return Findings([e for claim in claims for e in entries if e.claim == claim])


def every_claim(entries: Sequence[Entry], with_benchmark: bool = False) -> str:
    """Every claim of a notebook, one :func:`rag_lab.claims.render.entry_line` bullet each
    (``with_benchmark``: each names its benchmark, for a notebook that judges on several)."""
    return "\n".join(render.entry_line(e, with_benchmark) for e in entries)


def environment(with_model: bool = True) -> str:
    """What ran, for the closing section: versions, the encoder's fingerprint, the machine."""
    packages = "torch onnxruntime sentence-transformers transformers numpy pandas scipy".split()
    installed = {d.name.lower(): d.version for d in metadata.distributions()}
    versions = [f"{p} {installed.get(p, 'not installed')}" for p in packages]
    lines = [" ".join([f"python {platform.python_version()} rag_lab {__version__}", *versions])]
    if with_model:
        from rag_lab.checksums import sha256_file
        from rag_lab.models.encoder import DEFAULT_BACKEND
        from rag_lab.models.minilm import minilm_fingerprint
        from rag_lab.models.onnx_minilm import graph_path

        fp, graph = minilm_fingerprint(), sha256_file(graph_path(DEFAULT_BACKEND))
        lines.append(
            f"encoder {fp.name}: {fp.dimensions} dims, {fp.pooling} pooling, window "
            f"{fp.max_seq_length}, weights sha256 {fp.weights_sha256[:12]}…, fingerprint "
            f"{fp.key}; backend {DEFAULT_BACKEND}, its graph's sha256 {graph[:12]}…"
        )
    wrapped_lines = [textwrap.fill(line, MAX_WIDTH, subsequent_indent="  ") for line in lines]
    return "\n".join([*wrapped_lines, latency.machine()])


@dataclass(frozen=True)
class Verbatim:
    """A text shown exactly as it is (a prompt as the generator receives it) within a page:
    the HTML is a ``<pre>`` the browser wraps, not a character added or removed; the plain
    text breaks each line longer than ``width`` at a space, ``↪`` starting a continuation.

    >>> print(repr(Verbatim("a " * 30 + "end", width=40)))
    a a a a a a a a a a a a a a a a a a a a
    ↪ a a a a a a a a a a end
    """

    text: str
    caption: str = ""
    width: int = MAX_WIDTH

    def lines(self) -> list[str]:
        """The plain text's lines, each at most :attr:`width` characters."""
        wrap = textwrap.TextWrapper(self.width, subsequent_indent="↪ ", break_on_hyphens=False)
        return [part for line in self.text.split("\n") for part in wrap.wrap(line) or [""]]

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
        pre = f'<pre class="{VERBATIM_CLASS}" style="{style}">'
        return f"{caption}{pre}{html.escape(self.text)}</pre>"
