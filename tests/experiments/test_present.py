from __future__ import annotations

import pandas as pd

from rag_lab.evaluation import render
from rag_lab.experiments.present import Table


def test_numbers_align_right_and_names_that_start_with_digits_do_not():
    frame = pd.DataFrame(
        {
            "distance": ["0.607", "8.3e-07"],
            "chunk": ["19-generalization > Summary", "07-linear-regression > Basics"],
            "won/lost": ["+6/−10", "+11/−1"],
        }
    )
    lines = repr(Table(frame)).splitlines()
    assert lines[1].startswith("   0.607  19-generalization > Summary   ")
    assert lines[2].endswith("+11/−1")
    assert Table._right(Table(frame).shown()) == [True, False, True]


def test_present_table_is_the_package_one_table():
    assert Table is render.Table
