"""present's text: a Verbatim text shown unchanged in HTML and wrapped for a reader in plain
text; a numbered name in a Table read as text, not as a number."""

from __future__ import annotations

import html
import re

import pandas as pd

from rag_lab.claims import render
from rag_lab.claims.verdicts import Verdict
from rag_lab.evaluation.ledger import CONFIRMATORY, Direction, Entry
from rag_lab.experiments.present import MAX_WIDTH, Table, Verbatim, findings

PROMPT = (
    "Answer the question using only the numbered sources below. Cite every claim with the "
    "number of its source in brackets, like [1] or [2]; write no links, titles or other "
    "references. If the sources do not contain the answer, say that they do not and stop."
    "\n\nSOURCES\n\n[1] A — B\n```python\n    fn = nn.MSELoss()\n```\n"
)


def test_the_html_holds_the_text_unchanged_in_a_wrapping_pre():
    shown = Verbatim(PROMPT, caption="the prompt")._repr_html_()
    (inner,) = re.findall(
        r"<pre class=\"rag-lab-verbatim\" style=\"([^\"]*)\">(.*)</pre>", shown, re.S
    )
    assert "white-space: pre-wrap" in inner[0]
    assert html.unescape(inner[1]) == PROMPT
    assert Verbatim(PROMPT).text == PROMPT


def test_the_plain_text_fits_and_keeps_every_word_in_order():
    v = Verbatim(PROMPT, width=100)
    lines = v.lines()
    assert len(PROMPT.split("\n")[0]) > 100  # the case this is for
    assert max(map(len, lines)) <= 100
    assert lines[0].endswith("the number of its") and lines[1].startswith("↪ source in brackets")
    words = [w for line in lines for w in line.removeprefix("↪ ").split()]
    assert words == PROMPT.split()
    # Short lines, blank lines and indentation are left as they are.
    assert "    fn = nn.MSELoss()" in lines and lines.count("") == PROMPT.count("\n\n") + 1


def test_a_word_longer_than_a_line_is_cut_and_the_caption_leads():
    v = Verbatim("x" * 25, caption="c", width=10)
    assert repr(v).splitlines() == ["c", "x" * 10, "↪ " + "x" * 8, "↪ " + "x" * 7]


def test_a_numbered_name_is_text_and_a_number_still_a_number():
    t = Table(
        pd.DataFrame(
            {
                "document": ["03-linear-algebra", "05-autograd#char=848,1304"],
                "range": ["1-3", "2-4"],
                "rate": ["0.58 [0.41, 0.73]", "16/64"],
            }
        )
    )
    lines = repr(t).splitlines()
    assert lines[1].startswith("03-linear-algebra          ")  # left-aligned, as text
    assert t._right(t.shown()) == [False, True, True]


def test_a_long_caption_is_broken_at_spaces_within_the_page_and_keeps_every_word():
    caption = " ".join(f"word{i}" for i in range(60))  # 409 characters
    t = Table(pd.DataFrame({"a": ["x"]}), caption=caption)
    lines = repr(t).splitlines()
    head = lines[:-2]
    assert len(head) == 5 and max(map(len, head)) <= MAX_WIDTH
    assert " ".join(head).split() == caption.split()
    assert lines[-2:] == ["a", "x"]


def test_a_long_finding_continues_its_bullet_indented_and_its_markdown_is_unchanged():
    entry = Entry(
        "03", "E>C@R20", "d2l", "the header, on the same cuts, buys recall", Direction.BETTER,
        "R@20", Verdict.INCONCLUSIVE, chapter="+12/−2, p = 0.0129", estimate=0.031,
        ci=(-0.030, 0.089), family=CONFIRMATORY,
    )  # fmt: skip
    assert len(render.finding_line(entry)) > MAX_WIDTH  # the case this is for
    shown = findings([entry], [entry.claim])
    lines = repr(shown).splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= MAX_WIDTH
    assert all(line.startswith("  ") for line in lines[1:])
    assert " ".join(lines).split() == render.finding_line(entry).split()
    assert shown._repr_markdown_() == render.finding_line(entry)
