"""The one vocabulary of verdicts: what the measurements say of a claim.

A verdict is decided by code from numbers (:mod:`rag_lab.claims.judge` states the rule),
never typed, and compared as a value, never as English; tables render it last
(:attr:`Verdict.label`). Its value is the id the ledger file uses.

>>> Verdict.EXCLUDES_CHAPTER_EFFECT.value, Verdict.EXCLUDES_CHAPTER_EFFECT.label
('excludes_chapter_effect', "excludes the chapter's effect")
>>> [v.value for v in Verdict if v.agrees]
['reproduces']
"""

from __future__ import annotations

import enum


class Verdict(enum.Enum):
    """What the measurements say of a claim."""

    REPRODUCES = "reproduces"
    """The numbers support the claim, by the test the design supports."""
    CONTRADICTED = "contradicted"
    """The numbers say the opposite: significant the other way, or a count that fails."""
    EXCLUDES_CHAPTER_EFFECT = "excludes_chapter_effect"
    """Not significant, but the interval excludes the effect the chapter reports."""
    INCONCLUSIVE = "inconclusive"
    """The design cannot tell: neither significant nor excluding; its detectable effect says
    how large a difference it could have seen."""
    NO_VARIATION = "no_variation"
    """Every question's difference is 0: the comparison cannot speak, and is no reproduction."""
    BY_CONSTRUCTION = "by_construction"
    """True because of how the code is built; shown, never counted as agreement."""
    NOT_TESTABLE = "not_testable"
    """The claim cannot be tested on this corpus or offline (the reason says why)."""
    NOT_MEASURED = "not_measured"
    """What the claim needs could not run here (the reason says what is missing)."""

    @property
    def label(self) -> str:
        """How the verdict reads in a table."""
        return _LABELS[self]

    @property
    def short(self) -> str:
        """The label in a narrow column: ``excludes its effect`` for the chapter's effect
        excluded, the label itself otherwise."""
        return "excludes its effect" if self is Verdict.EXCLUDES_CHAPTER_EFFECT else self.label

    @property
    def agrees(self) -> bool:
        """True only for a verdict that supports the claim on its numbers."""
        return self is Verdict.REPRODUCES

    @property
    def tested(self) -> bool:
        """True for a verdict reached by a test or a count (not fixed by construction, by
        the corpus or by what is installed)."""
        return self not in (
            Verdict.NO_VARIATION,
            Verdict.BY_CONSTRUCTION,
            Verdict.NOT_TESTABLE,
            Verdict.NOT_MEASURED,
        )


_LABELS = {
    Verdict.REPRODUCES: "reproduces",
    Verdict.CONTRADICTED: "contradicted",
    Verdict.EXCLUDES_CHAPTER_EFFECT: "excludes the chapter's effect",
    Verdict.INCONCLUSIVE: "inconclusive",
    Verdict.NO_VARIATION: "no variation",
    Verdict.BY_CONSTRUCTION: "by construction",
    Verdict.NOT_TESTABLE: "not testable here",
    Verdict.NOT_MEASURED: "not measured",
}
