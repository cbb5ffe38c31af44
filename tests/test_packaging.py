"""The project's entry points stay consistent with each other."""

from __future__ import annotations

import re
import subprocess
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from rag_lab import paths

ENVIRONMENT_EXTRAS = ("lab", "test", "compare", "dev", "generate", "pdf", "tokens")
"""The extras environment.yml installs (every one but Milvus's)."""


def _name(requirement: str) -> str:
    return canonicalize_name(Requirement(requirement).name)


def _requirements(extras=ENVIRONMENT_EXTRAS) -> list[str]:
    project = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + [
        d for name in extras for d in project["optional-dependencies"][name]
    ]


def _lock() -> dict[str, Version]:
    """requirements.lock: canonical name to its exact version."""
    lock = {}
    for line in (paths.ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            lock[canonicalize_name(name)] = Version(version)
    return lock


def test_the_lock_pins_every_dependency_within_its_range():
    """A base dependency or an extra's is a range that admits the lock's exact version."""
    extras = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    lock = _lock()
    for requirement in _requirements(extras):
        req = Requirement(requirement)
        assert req.name and canonicalize_name(req.name) in lock, requirement
        assert req.specifier.contains(lock[canonicalize_name(req.name)]), (requirement, lock)


def test_base_dependencies_are_ranges_not_pins():
    project = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"]:
        operators = {s.operator for s in Requirement(requirement).specifier}
        assert operators == {">=", "<"}, requirement


def test_environment_yml_installs_the_locked_versions():
    env = yaml.safe_load((paths.ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    lock = _lock()
    expected = [f"{Requirement(r).name}=={lock[_name(r)]}" for r in _requirements()]
    assert [p for p in pip if not p.startswith("-e")] == expected
    assert "python=3.11" in env["dependencies"]


def test_ci_runs_exactly_the_readme_test_command():
    readme = (paths.ROOT / "README.md").read_text()
    ci = (paths.ROOT / ".ci" / "run").read_text()
    commands = [ln for ln in ci.splitlines() if ln.startswith("make ")]
    # make setup is make test's own first step, run apart only to be timed apart.
    assert commands == ["make setup", "make test"]
    assert "\nmake test\n" in readme
    makefile = (paths.ROOT / "Makefile").read_text()
    assert "\ntest: setup " in makefile


def test_setup_installs_every_extra():
    makefile = (paths.ROOT / "Makefile").read_text()
    extras = tomllib.loads((paths.ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    installed = re.search(r'-e "\.\[([a-z,-]+)\]"', makefile)[1].split(",")
    assert sorted(installed) == sorted(extras)


def test_the_lock_pins_torch_to_the_cpu_release():
    lock = (paths.ROOT / "requirements.lock").read_text().splitlines()
    assert "torch==2.13.0" in lock


def test_make_check_collects_on_a_fresh_tree():
    """``make check``'s own pytest command, collection only: it imports every test module
    and, with ``--doctest-modules``, every module under ``tests`` and ``rag_lab`` (two
    ``conftest.py`` files once broke it on every fresh clone: pytest imports both as
    ``conftest``)."""
    dry = subprocess.run(
        ["make", "-n", "--no-print-directory", "check"],
        cwd=paths.ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    command = next(line for line in dry.stdout.splitlines() if " -m pytest " in line)
    out = subprocess.run(
        f"{command} --collect-only -p no:cacheprovider",
        shell=True, cwd=paths.ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert re.search(r"\d+ tests? collected", out.stdout), out.stdout[-500:]
