"""Nothing written outside the index and the cache (hostile round 3, high 5): ONNX Runtime's
telemetry files and matplotlib's font cache land under ``$HOME`` unless the lab says where."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rag_lab import paths

SCRIPT = """
from rag_lab.evaluation import plots  # noqa: F401  (the evaluation library, as a report draws)
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.figure().savefig(r"{png}")
from rag_lab.models.onnx_minilm import OnnxMiniLM
assert OnnxMiniLM("onnx").encode(["hello world"]).shape == (1, 384)
"""


def _home_after(tmp_path, **env) -> list[str]:
    home = tmp_path / "home"
    home.mkdir()
    run_env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CACHE_HOME")}
    run_env |= {"HOME": str(home), paths.CACHE_ENV: str(paths.cache_dir()), **env}
    script = SCRIPT.format(png=tmp_path / "figure.png")
    subprocess.run([sys.executable, "-c", script], env=run_env, check=True, timeout=600)
    return sorted(str(p.relative_to(home)) for p in home.rglob("*"))


@pytest.mark.model
def test_a_run_writes_nothing_under_home(tmp_path):
    # without the lab's settings matplotlib writes ~/.config/matplotlib and ~/.cache/matplotlib,
    # and ONNX Runtime ~/.cache/Microsoft (outside CI: it stays quiet where CI is set)
    assert _home_after(tmp_path) == []
