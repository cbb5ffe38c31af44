"""Progress on long work, shown on the terminal that started it and never in a notebook.

Long work (texts embedded, answers generated, pages extracted or read by OCR) asks for a
:func:`bar`. Where its updates go depends on who is watching:

- ``$RAG_LAB_PROGRESS`` names a file: each update is appended to it as one JSON line. This
  is how a notebook kernel, whose own stdout and stderr become cell outputs, reports to the
  terminal running ``make reproduce`` or ``make test``: the runner sets the variable, the
  kernel inherits it, and a :class:`Relay` in the runner prints the lines as they come.
  Nothing reaches the notebook, so a cold run writes the outputs a warm run writes.
- else, on a terminal (stderr is a tty): a tqdm bar on stderr, as ``rag-lab index`` shows.
- else (a pipe, a CI log, a kernel started by hand): nothing, unless a command asks for
  lines on stderr (:func:`on_stderr`, as ``rag-lab evaluate`` does).

>>> with bar(3, "embedding", "text", show=False) as b:
...     b.update(3)
>>> b.n
3

Updates are throttled (at most one line per :data:`EVERY_S` to the file), and work that
ends within :data:`QUIET_S` never writes, so a warm run says nothing.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")

ENV = "RAG_LAB_PROGRESS"
"""The file a kernel appends its progress lines to; set by :func:`relayed`."""
QUIET_S = 2.0
"""Work that finishes sooner writes nothing (a warm cache, a short list)."""
EVERY_S = 1.0
"""At most one line per this many seconds to the file."""


_CONTEXT: list[str] = []


@contextmanager
def context(label: str) -> Iterator[None]:
    """Within the block, every bar's description starts with ``label`` (``strategy E``), so
    that work the caller cannot see into (an encoder embedding texts) says what it is for.

    >>> with context("strategy E"):
    ...     bar(3, "embedding", "text", show=False).desc
    'strategy E: embedding'
    """
    _CONTEXT.append(label)
    try:
        yield
    finally:
        _CONTEXT.pop()


class Bar:
    """Counts done of ``total`` and reports them; :func:`bar` picks where they go."""

    def __init__(self, total: int | None, desc: str, unit: str, sink: _Sink) -> None:
        if _CONTEXT:
            desc = f"{', '.join(_CONTEXT)}: {desc}"
        self.total, self.desc, self.unit = total, desc, unit
        self.n = 0
        self.note = ""
        self._sink = sink
        self._started = time.monotonic()
        self._last = float("-inf")
        self._wrote = False

    def update(self, n: int = 1, note: str | None = None) -> None:
        """Add ``n`` done; ``note`` replaces the short text shown after the count."""
        self.n += n
        if note is not None:
            self.note = note
        self._sink.update(self, final=False)

    def close(self) -> None:
        self._sink.update(self, final=True)

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(self, final: bool) -> dict[str, Any]:
        """The JSON line a relay reads: what, how far, since when."""
        return {
            "desc": self.desc,
            "unit": self.unit,
            "n": self.n,
            "total": self.total,
            "note": self.note,
            "elapsed": round(time.monotonic() - self._started, 2),
            "final": final,
            "pid": os.getpid(),
        }


def bar(total: int | None, desc: str, unit: str, *, show: bool | None = None) -> Bar:
    """A progress bar for ``total`` units of work (None: unknown total).

    ``show``: None picks by who is watching (see the module docstring); False shows
    nothing; True shows it even when stderr is not a terminal (in the relay's file when
    there is one, else as a tqdm bar on stderr).
    """
    path = os.environ.get(ENV)
    if show is False:
        sink: _Sink = _Null()
    elif path:
        sink = _File(Path(path))
    elif show or sys.stderr.isatty():
        sink = _Tqdm(total, desc, unit)
    else:
        sink = _Null()
    return Bar(total, desc, unit, sink)


def track(
    items: Iterable[T], desc: str, unit: str, *, total: int | None = None, show: bool | None = None
) -> Iterator[T]:
    """Yield ``items``, counting each on a :func:`bar` (``total`` defaults to ``len(items)``)."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with bar(total, desc, unit, show=show) as b:
        for item in items:
            yield item
            b.update()


class _Sink:
    def update(self, b: Bar, final: bool) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class _Null(_Sink):
    def update(self, b: Bar, final: bool) -> None:
        pass


class _File(_Sink):
    def __init__(self, path: Path) -> None:
        self.path = path

    def update(self, b: Bar, final: bool) -> None:
        now = time.monotonic()
        if now - b._started < QUIET_S and not (final and b._wrote):
            return
        if not final and now - b._last < EVERY_S:
            return
        b._last, b._wrote = now, True
        line = json.dumps(b.record(final), ensure_ascii=False) + "\n"
        try:  # one write on an O_APPEND file: lines from several processes never interleave
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
        except OSError:
            pass  # the watcher went away: progress is a courtesy, never a reason to stop


class _Tqdm(_Sink):
    def __init__(self, total: int | None, desc: str, unit: str) -> None:
        from tqdm import tqdm  # the plain-text bar, never tqdm.auto's notebook widget

        # the stream under rag-lab's escaping one: the bar's own \r and escapes are meant
        stream = getattr(sys.stderr, "unescaped", sys.stderr)
        self._bar = tqdm(total=total, desc=desc, unit=unit, file=stream, leave=False)

    def update(self, b: Bar, final: bool) -> None:
        self._bar.n = b.n
        if b.note:
            self._bar.set_postfix_str(b.note, refresh=False)
        if final:
            self._bar.close()
        else:
            self._bar.refresh()


# --- the watching side ---------------------------------------------------------------------


@dataclass(frozen=True)
class Update:
    """One line a bar wrote, as the relay reads it."""

    desc: str
    unit: str
    n: int
    total: int | None
    note: str
    elapsed: float
    final: bool

    def render(self) -> str:
        """``embedding 1,200/4,900 text, 38.2 text/s, 1 min 37 s left``; slow work is given as
        seconds per unit (``12.5 s/question``)."""
        rate = self.n / self.elapsed if self.elapsed > 0 else 0.0
        count = f"{self.n:,}" if self.total is None else f"{self.n:,}/{self.total:,}"
        speed = (
            f"{rate:.1f} {self.unit}/s"
            if rate >= 1 or not rate
            else f"{1 / rate:.1f} s/{self.unit}"
        )
        parts = [f"{self.desc} {count} {self.unit}", speed]
        if self.final:
            parts.append(f"done in {duration(self.elapsed)}")
        elif self.total and rate > 0 and self.n < self.total:
            parts.append(f"{duration((self.total - self.n) / rate)} left")
        if self.note:
            parts.append(self.note)
        return ", ".join(parts)


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Relay:
    """Prints the lines bars append to ``path`` on ``out``, as they come, from a thread.

    On a terminal the line is redrawn in place and cleared when the work ends; elsewhere
    (a CI log) a line is printed at most every ``every_s`` seconds and when work ends.
    ``prefix`` is put before each line (the notebook running). ``others_only`` shows only
    lines from other processes (the kernels), not this one's own bars.
    """

    def __init__(
        self, path: Path, out: IO[str], *, every_s: float = 30.0, others_only: bool = False
    ) -> None:
        self.path, self.out, self.every_s = path, out, every_s
        self._skip_pid = os.getpid() if others_only else None
        self.prefix = ""
        self.muted = False
        """While True, lines are read and dropped (work nobody asked to watch)."""
        self._live = out.isatty()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="progress-relay", daemon=True)
        self._offset = 0
        self._last_print: dict[str, float] = {}
        self._drawn = False
        self._lock = threading.Lock()

    def start(self) -> Relay:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._poll()
        self.clear()

    def clear(self) -> None:
        """Erase a line drawn in place, so the next print starts on a clean line."""
        with self._lock:
            if self._drawn:
                self.out.write("\r\x1b[K")
                self.out.flush()
                self._drawn = False

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self._poll()

    def _poll(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return
        complete = chunk[: chunk.rfind("\n") + 1]  # a line still being written waits
        self._offset += len(complete.encode("utf-8"))
        for line in complete.splitlines():
            try:
                fields = json.loads(line)
                update = Update(**{k: fields[k] for k in Update.__dataclass_fields__})
            except (ValueError, KeyError, TypeError):
                continue
            if self.muted or fields.get("pid") == self._skip_pid:
                continue
            self._show(update)

    def _show(self, u: Update) -> None:
        text = f"{self.prefix}{u.render()}"
        with self._lock:
            if self._live:
                self.out.write(f"\r\x1b[K{text}" + ("\n" if u.final else ""))
                self._drawn = not u.final
            else:
                now = time.monotonic()
                if not u.final and now - self._last_print.get(u.desc, float("-inf")) < self.every_s:
                    return
                self._last_print[u.desc] = now
                self.out.write(text + "\n")
            self.out.flush()


@contextmanager
def on_stderr(every_s: float = 10.0) -> Iterator[None]:
    """Within the block, long work reports on stderr: redrawn in place on a terminal, else
    (a pipe, a CI log) a line at most every ``every_s`` seconds per bar and one when it ends
    (``strategy E: embedding 320/739 text, 41.5 text/s, 10 s left``); stdout gets nothing.
    Under a relay already (``$RAG_LAB_PROGRESS`` set, as ``make reproduce`` sets it), that
    one reports."""
    if os.environ.get(ENV):
        yield
        return
    with relayed(sys.stderr, every_s=every_s):
        yield


@contextmanager
def relayed(
    out: IO[str] | None = None, *, every_s: float = 30.0, others_only: bool = False
) -> Iterator[Relay]:
    """Within the block, bars of this process and its children report through a relay on
    ``out`` (default stderr): ``$RAG_LAB_PROGRESS`` points at a fresh temporary file.
    ``every_s`` and ``others_only`` are :class:`Relay`'s."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix="rag-lab-progress-", suffix=".jsonl")
    os.close(fd)
    before = os.environ.get(ENV)
    os.environ[ENV] = name
    relay = Relay(Path(name), out or sys.stderr, every_s=every_s, others_only=others_only)
    relay.start()
    try:
        yield relay
    finally:
        relay.stop()
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
        Path(name).unlink(missing_ok=True)
