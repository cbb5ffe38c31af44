"""The executed notebooks as a reader sees them: rendered to HTML, then checked in a browser.

``python -m rag_lab.experiments.pages`` (``make html``) renders every committed notebook to
``build/html/NN_name.html`` with nbconvert (the outputs as committed; nothing is run), then,
when Debian's Chromium is installed, opens each page headless at a laptop's width
(:data:`WIDTH` px) and measures it in the page itself: every table wider than the text
column, every text output a reader would scroll sideways, every figure shrunk below
:data:`MIN_SCALE` of its drawn width (too small to read), and the widest table of each
notebook. ``--screenshots`` also saves a full-page PNG of each.
Without Chromium the pages are still rendered, and the check says it did not run.

Exit status: 0 when every page fits, 1 when one does not, 2 when a notebook cannot be read.
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_lab import paths

OUT = paths.ROOT / "build" / "html"
WIDTH = 1366
"""A laptop's screen, in CSS pixels."""
HEIGHT = 900
MIN_SCALE = 0.6
"""A figure shown at less than this share of its drawn width has text too small to read."""

_MEASURE = """
<script>
window.addEventListener('load', () => {
  const out = {tables: [], figures: []};
  document.querySelectorAll('.jp-OutputArea-output table, .jp-RenderedHTMLCommon table')
    .forEach((t, i) => {
      const area = t.closest('.jp-OutputArea-output') || t.parentElement;
      out.tables.push({i, width: Math.round(t.scrollWidth),
                       room: Math.round(area.clientWidth),
                       cols: t.rows.length
                         ? Math.max(...Array.from(t.rows, r => r.cells.length)) : 0,
                       head: (t.rows[0] ? t.rows[0].innerText : '').slice(0, 60)});
    });
  out.texts = [];
  document.querySelectorAll('.jp-OutputArea-output pre:not(.rag-lab-verbatim)')
    .forEach((pre, i) => {
    // The page wraps long lines (pre-wrap): measure each text unwrapped, in its own font.
    // A present.Verbatim view (class rag-lab-verbatim) wraps by design and is not measured.
    const probe = pre.cloneNode(true);
    Object.assign(probe.style, {whiteSpace: 'pre', position: 'absolute', visibility: 'hidden',
                                width: 'auto', left: '0', top: '0'});
    pre.parentElement.appendChild(probe);
    const width = probe.scrollWidth;
    probe.remove();
    if (width > pre.clientWidth + 1)
      out.texts.push({i, width, room: pre.clientWidth, head: pre.innerText.slice(0, 60)});
  });
  document.querySelectorAll('.jp-OutputArea-output img').forEach((img, i) => {
    out.figures.push({i, natural: img.naturalWidth,
                      shown: Math.round(img.getBoundingClientRect().width)});
  });
  out.page = document.documentElement.scrollWidth;
  out.height = document.documentElement.scrollHeight;
  const pre = document.createElement('pre');
  pre.id = 'rag-lab-measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


@dataclass(frozen=True)
class Measure:
    """What a page measured: tables too wide for their column, figures too small."""

    page: str
    tables: list[dict]
    figures: list[dict]
    page_width: int
    height: int
    texts: list[dict]
    """Text outputs wider than their area: the page wraps their lines, which breaks the
    columns of any text laid out in them."""

    @property
    def wide_tables(self) -> list[dict]:
        return [t for t in self.tables if t["width"] > t["room"] + 1]

    @property
    def small_figures(self) -> list[dict]:
        # Figures are drawn at 150 dpi and shown at half their pixel width on a 1x screen
        # (the notebook's retina-style embedding): the scale is against that drawn width.
        return [
            f for f in self.figures if f["natural"] and f["shown"] < MIN_SCALE * f["natural"] / 2
        ]

    @property
    def widest(self) -> dict | None:
        return max(self.tables, key=lambda t: t["width"], default=None)

    @property
    def fits(self) -> bool:
        return (
            not self.wide_tables
            and not self.small_figures
            and not self.texts
            and self.page_width <= WIDTH
        )


def render(notebooks: Sequence[Path], out: Path = OUT) -> list[Path]:
    """Each notebook as a standalone HTML page (JupyterLab's template, outputs as committed)."""
    import nbformat
    from nbconvert import HTMLExporter

    out.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter(template_name="lab")
    pages = []
    for path in notebooks:
        try:
            notebook = nbformat.read(path, as_version=4)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"{path}: cannot be read as a notebook: {exc}") from exc
        body, _ = exporter.from_notebook_node(notebook)
        page = out / f"{path.stem}.html"
        page.write_text(body, encoding="utf-8")
        pages.append(page)
    return pages


def chromium() -> str | None:
    """Debian's Chromium, if installed (``apt-get install chromium``)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def measure(page: Path, browser: str, screenshot: Path | None = None) -> Measure:
    """Open ``page`` headless at :data:`WIDTH` and read what the page measured of itself."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / page.name
        probe.write_text(
            page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"),
            encoding="utf-8",
        )
        common = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            "--virtual-time-budget=15000",
        ]
        dom = subprocess.run(
            [*common, f"--window-size={WIDTH},{HEIGHT}", "--dump-dom", probe.as_uri()],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        marker = '<pre id="rag-lab-measure">'
        if marker not in dom.stdout:
            raise RuntimeError(
                f"{page.name}: Chromium measured nothing: {dom.stderr.strip()[-300:]}"
            )
        raw = dom.stdout.split(marker, 1)[1].split("</pre>", 1)[0]
        found = json.loads(html.unescape(raw))
        if screenshot is not None:  # the whole page: a window as tall as the page
            tall = min(found["height"], 60000)
            subprocess.run(
                [
                    *common,
                    f"--window-size={WIDTH},{tall}",
                    f"--screenshot={screenshot}",
                    page.as_uri(),
                ],
                capture_output=True,
                timeout=300,
                check=False,
            )
    return Measure(
        page.stem, found["tables"], found["figures"], found["page"], found["height"], found["texts"]
    )


def report(m: Measure) -> str:
    widest = m.widest
    widest_text = (
        f"widest table {widest['width']} px of {widest['room']} ({widest['cols']} columns)"
        if widest
        else "no table"
    )
    lines = [
        f"{'ok  ' if m.fits else 'FAIL'} {m.page}: {len(m.tables)} tables, {len(m.figures)} "
        f"figures; {widest_text}; page {m.page_width} px"
    ]
    lines += [
        f"     table {t['i']} is {t['width']} px in {t['room']} px: {t['head']!r}"
        for t in m.wide_tables
    ]
    lines += [
        f"     figure {f['i']} shown {f['shown']} px of {f['natural'] // 2} drawn"
        for f in m.small_figures
    ]
    lines += [
        f"     text {t['i']} is {t['width']} px in {t['room']} px: {t['head']!r}" for t in m.texts
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab.experiments.pages")
    parser.add_argument("notebooks", nargs="*", help="notebook numbers (default: all)")
    parser.add_argument("--output", type=Path, default=OUT, help="where the pages go")
    parser.add_argument("--screenshots", action="store_true", help="a full-page PNG of each")
    args = parser.parse_args(argv)
    found = sorted((paths.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    picked = [p for p in found if not args.notebooks or p.name[:2] in args.notebooks]
    if not picked:
        print(f"no notebook numbered {' '.join(args.notebooks)}", file=sys.stderr)
        return 2
    pages = render(picked, args.output)
    print(f"{len(pages)} pages in {args.output}")
    browser = chromium()
    if browser is None:
        print(
            "No Chromium: the pages were not checked at laptop width. Install it with "
            "apt-get install chromium, then run make html again."
        )
        return 0
    print(f"checked in headless {Path(browser).name} at {WIDTH} px:")
    failed = 0
    for page in pages:
        shot = page.with_suffix(".png") if args.screenshots else None
        m = measure(page, browser, shot)
        failed += not m.fits
        print(report(m))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
