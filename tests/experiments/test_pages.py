"""make html: notebooks rendered as pages, and the browser check that measures them."""

from __future__ import annotations

import nbformat
import pytest

from rag_lab.experiments import pages


def notebook(tmp_path, outputs):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output(**o) for o in outputs]
    nb.cells = [nbformat.v4.new_markdown_cell("# 99 · A page"), cell]
    path = tmp_path / "99_page.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_notebook_renders_as_a_standalone_page(tmp_path):
    path = notebook(tmp_path, [{"output_type": "stream", "name": "stdout", "text": "hello\n"}])
    (page,) = pages.render([path], tmp_path / "html")
    text = page.read_text()
    assert page.name == "99_page.html" and "hello" in text and "A page" in text


def test_an_unreadable_notebook_is_named(tmp_path):
    bad = tmp_path / "98_bad.ipynb"
    bad.write_text("{not json")
    with pytest.raises(SystemExit, match=r"98_bad\.ipynb: cannot be read as a notebook"):
        pages.render([bad], tmp_path / "html")


@pytest.mark.skipif(pages.chromium() is None, reason="no Chromium (apt-get install chromium)")
def test_the_browser_finds_a_wide_text_and_passes_a_narrow_table(tmp_path):
    table = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
    path = notebook(
        tmp_path,
        [
            {"output_type": "stream", "name": "stdout", "text": "x" * 300 + "\n"},
            {"output_type": "display_data", "data": {"text/html": table, "text/plain": "t"}},
        ],
    )
    (page,) = pages.render([path], tmp_path / "html")
    found = pages.measure(page, pages.chromium())
    assert len(found["tables"]) == 1 and found["tables"][0]["width"] <= found["tables"][0]["room"]
    assert len(found["texts"]) == 1 and found["texts"][0]["width"] > found["texts"][0]["room"]
    assert [line.split(" is ")[0] for line in pages.problems(found)] == ["text 0"]


def test_what_does_not_fit_is_named_and_what_fits_is_not():
    found = {
        "tables": [
            {"i": 0, "width": 801, "room": 800, "head": ""},
            {"i": 1, "width": 802, "room": 800, "head": ""},
        ],
        "texts": [],
        "figures": [
            {"i": 0, "natural": 1000, "shown": 300},
            {"i": 1, "natural": 1000, "shown": 299},
        ],
        "page": pages.WIDTH,
    }
    assert [line.split(" ")[:2] for line in pages.problems(found)] == [
        ["table", "1"],
        ["figure", "1"],
    ]
    assert pages.problems({**found, "tables": [], "figures": [], "page": pages.WIDTH + 1}) == [
        f"page {pages.WIDTH + 1} px wide"
    ]


@pytest.mark.skipif(pages.chromium() is None, reason="no Chromium (apt-get install chromium)")
def test_a_verbatim_view_wraps_on_purpose_and_is_not_a_wide_text(tmp_path):
    from rag_lab.experiments.present import VERBATIM_CLASS, Verbatim

    view = Verbatim("word " * 80)
    markup = view._repr_html_()
    assert f'class="{VERBATIM_CLASS}"' in markup and VERBATIM_CLASS in pages._MEASURE
    shown = {"output_type": "display_data", "data": {"text/html": markup, "text/plain": "v"}}
    (page,) = pages.render([notebook(tmp_path, [shown])], tmp_path / "html")
    assert not pages.measure(page, pages.chromium())["texts"]
    unmarked = {
        **shown,
        "data": {**shown["data"], "text/html": markup.replace(VERBATIM_CLASS, "x")},
    }
    (page,) = pages.render([notebook(tmp_path, [unmarked])], tmp_path / "html")
    assert len(pages.measure(page, pages.chromium())["texts"]) == 1
