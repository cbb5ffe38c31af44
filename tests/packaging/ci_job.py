"""The README's CI job (the YAML block under "retrieval-gate:"), read as data."""

from __future__ import annotations

import re
import shlex

import yaml

from rag_lab import paths


def job() -> dict:
    """The job as YAML loads it: ``{"runs-on": ..., "env": ..., "steps": [...]}``."""
    readme = (paths.ROOT / "README.md").read_text()
    block = re.search(r"```yaml\n(retrieval-gate:\n.*?)```", readme, re.S)
    assert block, "README.md has no ```yaml block starting with retrieval-gate:"
    return yaml.safe_load(block[1])["retrieval-gate"]


def rag_lab_commands() -> list[list[str]]:
    """The argument lists of the job's ``rag-lab`` commands, in order, without ``rag-lab``."""
    commands = []
    for step in job()["steps"]:
        for line in step.get("run", "").splitlines():
            words = shlex.split(line)
            if words[:1] == ["rag-lab"]:
                commands.append(words[1:])
    return commands
