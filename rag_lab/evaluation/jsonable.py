"""Tables as plain JSON values, one rule for every record's ``to_json``."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd


def frame_json(table: pd.DataFrame) -> Any:
    """Records when the index is a plain range, else a mapping keyed by the index."""
    orient = "records" if isinstance(table.index, pd.RangeIndex) else "index"
    return json.loads(table.to_json(orient=orient))
