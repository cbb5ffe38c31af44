"""What ran: package versions and the model's fingerprint, printed once per notebook."""

from __future__ import annotations

import platform
import textwrap
from importlib import metadata

from rag_lab import __version__

WIDTH = 100
"""Lines are wrapped to this many characters, as every notebook's text output is."""
_PACKAGES = (
    "torch",
    "onnxruntime",
    "sentence-transformers",
    "transformers",
    "numpy",
    "pandas",
    "scipy",
)


def versions() -> dict[str, str]:
    """Python, rag_lab and the numerical packages, as installed."""
    out = {"python": platform.python_version(), "rag_lab": __version__}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def describe(with_model: bool = True) -> str:
    """One line per fact, for the versions cell at the top of a notebook."""
    lines = [" ".join(f"{k} {v}" for k, v in versions().items())]
    if with_model:
        from rag_lab.checksums import sha256_file
        from rag_lab.models.encoder import DEFAULT_BACKEND
        from rag_lab.models.minilm import minilm_fingerprint
        from rag_lab.models.onnx_minilm import graph_path

        fp = minilm_fingerprint()
        lines.append(
            f"encoder {fp.name}: {fp.dimensions} dims, {fp.pooling} pooling, "
            f"normalized={fp.normalized}, window {fp.max_seq_length}, "
            f"weights sha256 {fp.weights_sha256[:12]}…, fingerprint {fp.key}"
        )
        if DEFAULT_BACKEND != "torch":
            graph = sha256_file(graph_path(DEFAULT_BACKEND))
            lines.append(
                f"backend {DEFAULT_BACKEND}: ONNX Runtime graph exported from those weights, "
                f"sha256 {graph[:12]}…"
            )
    return "\n".join(textwrap.fill(line, WIDTH, subsequent_indent="  ") for line in lines)
