"""The run's results in one record: what the mitigations, the claims and the reading are
worded from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rag_lab.experiments.nb11_extraction.ocr import OcrRun
from rag_lab.metrics import Ranks
from rag_lab.questions import Query


@dataclass(frozen=True, eq=False)
class Results:
    """Every record notebook 11 measured, each as its function returned it (numbers)."""

    survival: pd.DataFrame
    """:func:`~.kept.survival_table` of every layout."""
    survival_removed: pd.DataFrame
    """:func:`~.kept.survival_table` of the running-header layout, running lines removed."""
    tests: pd.DataFrame
    """:func:`~.kept.layout_tests`: each layout against one column, per reader."""
    rows: pd.DataFrame
    """:func:`~.rows.rows_table`: table rows kept, per reader."""
    waste: pd.DataFrame
    """:func:`~.running.waste_table`: running lines, the chunks carrying them, removal."""
    page_cuts: tuple[int, int]
    """:func:`~.kept.page_cuts`: (needles lost that a page break cuts, needles lost)."""
    needles_in_tables: int
    destroyed: pd.DataFrame
    """:func:`~.retrieval.destroyed_table`: needles in each corpus's text and chunks."""
    systems: Mapping[str, Ranks]
    """:func:`~.retrieval.retrieval_systems`: the clean Markdown first, then each corpus."""
    loss: pd.DataFrame
    """:func:`~.retrieval.loss_table`: each corpus against the clean one."""
    queries: Sequence[Query]
    text_layer: pd.DataFrame
    """:func:`~.ocr.text_layer_table`: what the readers get from the scans."""
    run: OcrRun | None = None
    """The OCR run; None when Tesseract is not installed."""
    thresholds: pd.DataFrame | None = None
    """:func:`~.ocr.ocr_threshold_table` of the run."""

    @property
    def clean(self) -> str:
        """The clean corpus's name: the first of :attr:`systems`."""
        return next(iter(self.systems))

    @property
    def n(self) -> int:
        """Needles (one per question)."""
        return int(self.survival["n"].iloc[0])

    def kept(self, layout: str, reader: str, removed: bool = False) -> int:
        """Needles ``reader`` keeps on ``layout`` (with running lines removed: ``removed``)."""
        table = self.survival_removed if removed else self.survival
        return int(table.set_index(["layout", "reader"]).loc[(layout, reader), "needles kept"])
