"""The nbval sanitiser masks what varies between machines, and nothing a check relies on."""

from __future__ import annotations

import configparser
import re

import pytest

from rag_lab import paths


def sanitise(text: str) -> str:
    config = configparser.ConfigParser()
    config.read(paths.ROOT / "notebooks" / "nbval_sanitize.cfg")
    for section in config.sections():
        text = re.sub(config[section]["regex"], config[section]["replace"], text)
    return text


@pytest.mark.parametrize(
    ("shown", "masked"),
    [
        ("corpus at /work/main/data/corpus", "corpus at <PATH>"),
        ("saved /tmp/x/report.md", "saved <PATH>"),
        ("took 12.5 ms", "took <TIME>"),
        ("1652 ms against 0.37 ms (s…  reproduces", "<TIME>…  reproduces"),
        ("911 ms against 0.65 ms (…  reproduces", "<TIME>…  reproduces"),
        ("at 0x7fcc857de110>", "at <ADDR>>"),
    ],
)
def test_what_varies_is_masked(shown, masked):
    assert sanitise(shown) == masked


def test_a_line_broken_where_a_timing_falls_compares_as_one_line():
    """The plain text of a finding breaks within the page: a 4-digit timing moves the break."""
    three = "(stand-in, d2l): 877\n  ms against 0.70 ms (stand-in); the chapter"
    four = "(stand-in, d2l): 1377 ms\n  against 0.36 ms (stand-in); the chapter"
    assert (
        sanitise(three)
        == sanitise(four)
        == "(stand-in, d2l): <TIME> against <TIME> (stand-in); the chapter"
    )
    assert sanitise("a table\n\n  indented") == "a table\n\n  indented"


@pytest.mark.parametrize(
    "kept",
    [
        "10/30 negatives refused",
        "q19/ticket",
        "+18/−0, p = 7.6e-06",
        "0.625 [0.503, 0.733]",
        "see figures/bluff_curve.png",
        "answers/refusals",
        "a fraction 3/4",
    ],
)
def test_fractions_ids_and_relative_names_are_kept(kept):
    assert sanitise(kept) == kept
