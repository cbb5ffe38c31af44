"""Rebuild the d2l-en corpus from the upstream *Dive into Deep Learning* sources."""

EXTRACTOR_VERSION = "1"
"""Bump whenever the extracted documents could change; index stamps carry it."""
