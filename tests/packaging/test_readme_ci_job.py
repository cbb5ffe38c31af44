"""The README's CI job uses only options the command has, and the steps a gate needs."""

from __future__ import annotations

import pytest
from ci_job import job, rag_lab_commands

from rag_lab.app import cli


def test_every_rag_lab_command_of_the_job_parses():
    commands = rag_lab_commands()
    assert [c[:2] for c in commands] == [
        ["questions", "check"],
        ["index", "docs/"],
        ["evaluate", "--index"],
    ]
    for argv in commands:
        args = cli._parser().parse_args(argv)
        assert callable(args.run), argv


def test_the_gate_compares_with_a_baseline_and_uploads_its_junit_file():
    evaluate = rag_lab_commands()[-1]
    out = evaluate[evaluate.index("--out") + 1]
    assert "--baseline" in evaluate
    steps = job()["steps"]
    junit = next(s for s in steps if s.get("uses", "").startswith("mikepenz/action-junit-report"))
    assert junit["with"]["report_paths"] == f"{out}/regression.xml"
    assert junit["if"] == "always()"


def test_the_job_caches_the_folder_rag_lab_uses():
    cached = next(s for s in job()["steps"] if s.get("uses", "").startswith("actions/cache"))
    assert job()["env"]["RAG_LAB_CACHE"].endswith("/" + cached["with"]["path"])


def test_an_unknown_option_would_fail_the_parse():
    with pytest.raises(SystemExit) as exit_:
        cli._parser().parse_args([*rag_lab_commands()[-1], "--no-such-option"])
    assert exit_.value.code == 2
