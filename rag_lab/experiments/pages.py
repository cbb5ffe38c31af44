"""``make html``: the committed notebooks rendered to ``build/html/NN_name.html`` (outputs as
committed, nothing run), then, when Chromium is installed, each page opened headless at a
laptop's width and measured in the page itself (:func:`problems`). Exit status 1 when a page
does not fit or no notebook matches.
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rag_lab import paths
from rag_lab.experiments.reproduce import notebooks

OUT = paths.ROOT / "build" / "html"
WIDTH, HEIGHT = 1366, 900  # a laptop's screen, in CSS pixels
MIN_SCALE = 0.6
"""A figure shown at less than this share of its drawn width has text too small to read."""

_MEASURE = """
<script>
window.addEventListener('load', () => {
  const out = {tables: [], texts: [], figures: []};
  document.querySelectorAll('.jp-OutputArea-output table, .jp-RenderedHTMLCommon table')
    .forEach((t, i) => {
      const area = t.closest('.jp-OutputArea-output') || t.parentElement;
      out.tables.push({i, width: Math.round(t.scrollWidth), room: Math.round(area.clientWidth),
                       head: (t.rows[0] ? t.rows[0].innerText : '').slice(0, 60)});
    });
  // A text is measured unwrapped (the page wraps it), in its own font; a present.Verbatim
  // view (class rag-lab-verbatim) wraps by design and is not measured.
  document.querySelectorAll('.jp-OutputArea-output pre:not(.rag-lab-verbatim)')
    .forEach((pre, i) => {
      const probe = pre.cloneNode(true);
      Object.assign(probe.style, {whiteSpace: 'pre', position: 'absolute', visibility: 'hidden',
                                  width: 'auto', left: '0', top: '0'});
      pre.parentElement.appendChild(probe);
      const width = probe.scrollWidth;
      probe.remove();
      if (width > pre.clientWidth + 1)
        out.texts.push({i, width, room: pre.clientWidth, head: pre.innerText.slice(0, 60)});
    });
  document.querySelectorAll('.jp-OutputArea-output img').forEach((img, i) => out.figures.push(
    {i, natural: img.naturalWidth, shown: Math.round(img.getBoundingClientRect().width)}));
  out.page = document.documentElement.scrollWidth;
  out.height = document.documentElement.scrollHeight;
  const pre = document.createElement('pre');
  pre.id = 'rag-lab-measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def render(notebooks: Sequence[Path], out: Path = OUT) -> list[Path]:
    """Each notebook as a standalone HTML page (JupyterLab's template, outputs as committed)."""
    import nbformat
    from nbconvert import HTMLExporter

    out.mkdir(parents=True, exist_ok=True)
    exporter, pages = HTMLExporter(template_name="lab"), []
    for path in notebooks:
        try:
            notebook = nbformat.read(path, as_version=4)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"{path}: cannot be read as a notebook: {exc}") from exc
        pages.append(out / f"{path.stem}.html")
        pages[-1].write_text(exporter.from_notebook_node(notebook)[0], encoding="utf-8")
    return pages


def chromium() -> str | None:
    """Debian's Chromium, if installed (``apt-get install chromium``)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def measure(page: Path, browser: str, screenshot: Path | None = None) -> dict:
    """Open ``page`` headless at :data:`WIDTH`; what the page measured of itself."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / page.name
        probe.write_text(page.read_text("utf-8").replace("</body>", _MEASURE + "</body>"), "utf-8")
        run = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        run += [f"--user-data-dir={tmp}/profile", "--virtual-time-budget=15000"]
        size = f"--window-size={WIDTH},{HEIGHT}"
        dom = subprocess.run(
            [*run, size, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=180
        )
        _, marker, found = dom.stdout.partition('<pre id="rag-lab-measure">')
        if not marker:
            raise RuntimeError(f"{page.name}: Chromium measured nothing: {dom.stderr[-300:]}")
        found = json.loads(html.unescape(found.partition("</pre>")[0]))
        if screenshot is not None:  # the whole page: a window as tall as the page
            size = f"--window-size={WIDTH},{min(found['height'], 60000)}"
            shot = [*run, size, f"--screenshot={screenshot}", page.as_uri()]
            subprocess.run(shot, capture_output=True, timeout=300)
    return found


def problems(found: dict) -> list[str]:
    """What does not fit, one line each: a table wider than its area, a text a reader
    scrolls sideways, a figure shown below :data:`MIN_SCALE` of its drawn width (drawn at
    150 dpi, shown at half its pixels on a 1x screen), a page wider than the window."""
    wide = [("table", t) for t in found["tables"] if t["width"] > t["room"] + 1]
    lines = [
        f"{kind} {t['i']} is {t['width']} px in {t['room']} px: {t['head']!r}"
        for kind, t in wide + [("text", t) for t in found["texts"]]
    ]
    lines += [
        f"figure {f['i']} shown {f['shown']} px of {f['natural'] // 2} drawn"
        for f in found["figures"]
        if f["shown"] < MIN_SCALE * f["natural"] / 2
    ]
    return lines + ([f"page {found['page']} px wide"] if found["page"] > WIDTH else [])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab.experiments.pages")
    parser.add_argument("notebooks", nargs="*", help="name prefixes, e.g. 03 (default: all)")
    parser.add_argument("--output", type=Path, default=OUT, help="where the pages go")
    parser.add_argument("--screenshots", action="store_true", help="a full-page PNG of each")
    args = parser.parse_args(argv)
    pages = render(notebooks(args.notebooks), args.output)
    print(f"{len(pages)} pages in {args.output}")
    if (browser := chromium()) is None:
        print("No Chromium: the pages were not checked. Install it (apt-get install chromium).")
        return 0
    print(f"checked in headless {Path(browser).name} at {WIDTH} px:")
    failed = 0
    for page in pages:
        found = measure(page, browser, page.with_suffix(".png") if args.screenshots else None)
        failed += bool(bad := problems(found))
        counts = f"{len(found['tables'])} tables, {len(found['figures'])} figures"
        print(f"{'FAIL' if bad else 'ok  '} {page.stem}: {counts}", *bad, sep="\n     ")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
