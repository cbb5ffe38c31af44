"""The notebook runner behind `make reproduce`: which notebooks, in which order."""

from __future__ import annotations

import pytest

from rag_lab.experiments import reproduce


def test_all_numbered_notebooks_in_order():
    names = [nb.name for nb in reproduce.notebooks()]
    assert names == sorted(names) and len(names) >= 9
    assert names[0].startswith("01_") and all(n[:2].isdigit() and n[2] == "_" for n in names)


def test_prefixes_pick_notebooks_and_keep_the_order():
    names = [nb.name for nb in reproduce.notebooks(["05", "03"])]
    assert [n[:2] for n in names] == ["03", "05"]


def test_an_unknown_prefix_is_refused_with_the_list():
    with pytest.raises(SystemExit, match="no notebook starts with 99; there are: 01_"):
        reproduce.notebooks(["03", "99"])
