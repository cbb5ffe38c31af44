"""The one Table: a notebook's (page limits, plain text and HTML) and a report's (caption,
note, headline, its whole frame)."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from rag_lab.evaluation.render import MAX_WIDTH, Table, TooWide, markdown_table


def _capped() -> Table:
    frame = pd.DataFrame(
        {"n": [1, 2], "text": ["word " * 40, "short"]},
        index=pd.Index(["q1", "a very long query id indeed"], name="q"),
    )
    return Table(frame, caption="capped", shorten={"text": 30, "index": 10})


def test_a_notebook_table_renders_as_it_did_in_present():
    """Text and HTML pinned from ``rag_lab.experiments.present.Table`` before it moved here
    (present imports it from here): a notebook's tables are unchanged byte for byte."""
    t = _capped()
    assert repr(t).splitlines() == [
        "capped",
        "q           n  text",
        "q1          1  word word word word word word…",
        "a very lo…  2  short",
    ]
    html = hashlib.sha256(t._repr_html_().encode()).hexdigest()
    assert html == "b64e4d3cf9b32af9eef21931c6c463fcb6010a12c65d0938ffed68e453356a26"
    assert t.width == 45


def test_a_page_table_too_wide_is_refused_and_a_report_table_keeps_its_whole_frame():
    frame = pd.DataFrame({"query": ["q1"], "text": ["x" * (MAX_WIDTH + 1)]})
    with pytest.raises(TooWide, match=r"text 101"):
        Table(frame, "failures")
    nine = pd.DataFrame([range(9)], columns=[f"c{i}" for i in range(9)])
    with pytest.raises(TooWide, match=r"is 9 columns"):
        Table(nine)
    t = Table(frame, "failures", note="why", headline=True, page=False)
    assert (t.caption, t.note, t.headline, t.width) == ("failures", "why", True, 5 + 2 + 101)
    assert t.frame is frame and "x" * (MAX_WIDTH + 1) in markdown_table(t.frame)
