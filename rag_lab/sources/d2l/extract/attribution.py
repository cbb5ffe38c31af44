"""The SOURCE note written beside the documents: credit, licences and changes, as CC BY-SA asks."""

from __future__ import annotations

from rag_lab.sources.d2l.extract import EXTRACTOR_VERSION

NOTE_NAME = "SOURCE.md"

_REPOSITORY = "https://github.com/d2l-ai/d2l-en"


def source_note(commit: str) -> str:
    """The text of ``SOURCE.md`` for documents built from upstream ``commit``.

    It links the licence files at that commit rather than copying them: the
    raw manifest does not cover them, and every input this package uses is
    verified against a pinned sha256.
    """
    blob = f"{_REPOSITORY}/blob/{commit}"
    lines = [
        "# Source of this corpus",
        "",
        "Text adapted from *Dive into Deep Learning* (Aston Zhang, Zachary C. Lipton, Mu Li, "
        "Alexander J. Smola; https://d2l.ai), sections 2.1-2.6, 3.1-3.7 and 4.1-4.7, "
        "(c) Amazon.com, Inc. or its affiliates.",
        f"Upstream: {_REPOSITORY} at commit `{commit}`.",
        "",
        "Licences:",
        "- Prose, math and tables: CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/), "
        f"full text at {blob}/LICENSE",
        f"- Code blocks: the upstream modified MIT licence, {blob}/LICENSE-SAMPLECODE",
        f"- Summary: {blob}/LICENSE-SUMMARY",
        "",
        "Changes: converted to plain Markdown, PyTorch code only, figures removed, "
        "cross-references and citations rendered as text, hard-wrapped lines joined.",
        "Whoever redistributes these documents must credit the work, link the licence, "
        "say that changes were made and share the adapted text under CC BY-SA 4.0.",
        "",
        "Built by `python -m rag_lab.sources.d2l.extract` "
        f"(extractor version {EXTRACTOR_VERSION}). "
        "The documents are the files matching `[0-9][0-9]-*.md`.",
    ]
    return "\n".join(lines) + "\n"
