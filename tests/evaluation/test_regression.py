"""The regression gate: fails on one lost answer and on one dropped question (each named in
the JUnit), passes them when allowed, fires on a planted regression, stays quiet on a
re-run, pairs only common questions, shows one interval and one detectable difference in
its three files, and refuses a bad baseline with file and reason.

The end-to-end tests run the real ``rag-lab evaluate`` (the packaged encoder) on a corpus
built here, in which every needle straddles the first blind cut at 512 characters: strategy
A destroys every answer, strategy E (paragraph boundaries) keeps each one whole.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fakes import write

from rag_lab.app import cli, exits
from rag_lab.chunking import TARGET
from rag_lab.evaluation import gate_report, regression
from rag_lab.evaluation.power import detectable, questions_needed
from rag_lab.stats import (
    cluster_paired,
    cluster_paired_values,
    paired_difference,
    paired_mean_difference,
)

TOPICS = [
    (
        "tensors",
        "Tensors",
        "Tensors moved to a GPU multiply large matrices much faster.",
        "What hardware speeds up big matrix products?",
        "is my graphics card good for matmul",
    ),
    (
        "gradients",
        "Gradients",
        "Gradients accumulate in the grad field until they are reset.",
        "Why do derivatives keep growing across backward passes?",
        "grad keeps getting bigger",
    ),
    (
        "loaders",
        "Data loaders",
        "A data loader yields shuffled minibatches on every epoch.",
        "What gives the training loop shuffled batches?",
        "where do my batches come from",
    ),
    (
        "decay",
        "Weight decay",
        "Weight decay adds the squared norm of the weights to the loss.",
        "How does weight decay penalise large parameters?",
        "what does weight decay add",
    ),
    (
        "softmax",
        "Softmax",
        "Softmax turns a vector of logits into probabilities summing to one.",
        "How are logits made into a probability distribution?",
        "softmax output sums to 1?",
    ),
    (
        "dropout",
        "Dropout",
        "Dropout zeroes each hidden unit with a fixed probability in training.",
        "What does dropout do to hidden units during training?",
        "dropout zeroing units why",
    ),
    (
        "momentum",
        "Momentum",
        "Momentum averages past gradients to smooth the update direction.",
        "How does momentum change the direction of updates?",
        "momentum smoothing gradients",
    ),
    (
        "init",
        "Initialisation",
        "Xavier initialisation scales weights by the fan-in and fan-out.",
        "How should the initial weights be scaled?",
        "xavier init fan in fan out",
    ),
    (
        "batchnorm",
        "Batch norm",
        "Batch normalisation rescales activations by minibatch statistics.",
        "How does batch normalisation rescale activations?",
        "batchnorm uses batch stats?",
    ),
    (
        "attention",
        "Attention",
        "Attention weights values by how similar queries and keys are.",
        "How does attention combine the values?",
        "attention query key similarity",
    ),
]
PAD = "Background words about this topic that set the scene and are not the answer. "


def corpus(folder):
    files = {}
    for slug, title, needle, _, _ in TOPICS:
        intro = f"# {title}\n\n{PAD * 5}\n\n## Details\n\n"
        filler = "Some context first. " * ((TARGET - 40 - len(intro)) // 20)
        filler += "z" * (TARGET - 40 - len(intro) - len(filler))
        text = f"{intro}{filler}{needle}\n"
        start = text.index(needle)
        assert start < TARGET < start + len(needle)  # the blind cut at 512 splits the needle
        files[f"{slug}.md"] = text
    return write(folder, files)


def question_file(path, topics=TOPICS, extra=""):
    lines = ["questions:"]
    for slug, _, needle, course, ticket in topics:
        lines += [
            f"  - id: {slug}",
            f"    doc: {slug}",
            f'    needle: "{needle}"',
            f'    course: "{course}"',
            f'    ticket: "{ticket}"',
        ]
    lines += [
        "negatives:",
        "  - id: n1",
        "    kind: offtopic",
        '    query: "What is the best recipe for sourdough bread?"',
        "  - id: n2",
        "    kind: uncovered",
        '    query: "How do convolutional layers share weights?"',
    ]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The corpus, its question file and a baseline report on strategy E."""
    root = tmp_path_factory.mktemp("gate")
    docs = corpus(root / "docs")
    questions = question_file(root / "questions.yaml")
    code = cli.main(
        ["evaluate", "--corpus", str(docs), "--questions", str(questions), "--out", str(root / "E")]
    )
    assert code == exits.OK
    return root, docs, questions, root / "E" / "report.json"


def evaluate(root, docs, questions, out, *args):
    argv = ["evaluate", "--corpus", str(docs), "--questions", str(questions), "--out", str(out)]
    return cli.main([*argv, *map(str, args)])


@pytest.mark.model
def test_the_gate_fires_on_a_planted_regression(runs, capsys):
    root, docs, questions, baseline = runs
    code = evaluate(root, docs, questions, root / "A", "--strategy", "A", "--baseline", baseline)
    assert code == exits.REGRESSED == 3
    out = json.loads((root / "A" / "regression.json").read_text())
    outcome = {m["metric"]: m["outcome"] for m in out["metrics"]}
    assert out["regressed"]
    # Every needle is cut by A: 10 questions destroyed, none found at any k.
    assert outcome["destroyed answers"] == regression.REGRESSED
    assert outcome["R@20"] == regression.REGRESSED
    destroyed = next(m for m in out["metrics"] if m["metric"] == "destroyed answers")
    assert (destroyed["baseline"], destroyed["new"], destroyed["losses"]) == (0.0, 1.0, 0)
    assert [c["stamp"] for c in out["changes"]] == ["chunker"]
    # The flips: each lost query with the chunk it now gets first.
    lost = [f for f in out["flips"] if f["lost at k"]]
    assert lost and all(f["new rank"] is None for f in lost)
    assert all(f["top chunk now"].split("#")[0] in {t[0] for t in TOPICS} for f in lost)
    assert "REGRESSION" in capsys.readouterr().out
    # Every question is lost, each at every k: the first rule fails beside the metrics.
    assert out["failed by"] == [regression.LOST, regression.METRICS]
    assert [q["question"] for q in out["lost"]] == [t[0] for t in TOPICS]
    assert out["missing"] == []
    # The JUnit file parses: one testcase a metric, a failure for each regression, and one
    # failing testcase a lost question.
    suite = ET.parse(root / "A" / "regression.xml").getroot().find("testsuite")
    cases = suite.findall("testcase")
    metric_cases = [c for c in cases if c.get("classname") == "rag_lab.regression"]
    assert [c.get("name") for c in metric_cases] == [m["metric"] for m in out["metrics"]]
    failed = {c.get("name") for c in metric_cases if c.find("failure") is not None}
    assert failed == {m for m, o in outcome.items() if o == regression.REGRESSED}
    lost_cases = [c for c in cases if c.get("classname") == "rag_lab.regression.lost"]
    assert [c.get("name").split(" at ")[0] for c in lost_cases] == [t[0] for t in TOPICS]
    assert all(c.find("failure") is not None for c in lost_cases)
    assert suite.get("failures") == str(len(failed) + len(TOPICS))


@pytest.mark.model
def test_the_gate_stays_quiet_on_a_rerun_of_the_same_configuration(runs):
    root, docs, questions, baseline = runs
    assert evaluate(root, docs, questions, root / "E2", "--baseline", baseline) == exits.OK
    out = json.loads((root / "E2" / "regression.json").read_text())
    assert not out["regressed"] and out["changes"] == [] and out["flips"] == []
    assert (out["failed by"], out["lost"], out["missing"]) == ([], [], [])
    assert out["same question file"] and out["questions"]["common"] == len(TOPICS)
    assert {m["outcome"] for m in out["metrics"]} == {regression.UNCHANGED}
    assert ET.parse(root / "E2" / "regression.xml").getroot().get("failures") == "0"


@pytest.mark.model
def test_a_dropped_question_fails_the_gate_and_is_named(runs):
    root, docs, _, baseline = runs
    fewer = question_file(root / "fewer.yaml", TOPICS[:-1])
    code = evaluate(root, docs, fewer, root / "fewer", "--baseline", baseline)
    assert code == exits.REGRESSED
    out = json.loads((root / "fewer" / "regression.json").read_text())
    dropped = TOPICS[-1][0]
    assert out["failed by"] == [regression.MISSING]
    assert out["missing"] == [
        {
            "question": dropped,
            "queries": [f"{dropped}/course", f"{dropped}/ticket"],
            "whole": True,
            "changed": False,
        }
    ]
    suite = ET.parse(root / "fewer" / "regression.xml").getroot().find("testsuite")
    missing = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in missing] == [
        ("rag_lab.regression.missing", dropped)
    ]
    assert suite.get("failures") == "1"


@pytest.mark.model
def test_a_different_question_file_is_compared_on_its_common_questions(runs):
    root, docs, _, baseline = runs
    other = question_file(root / "other.yaml", TOPICS[:6])
    code = evaluate(root, docs, other, root / "other", "--baseline", baseline, "--allow-missing")
    assert code == exits.OK
    out = json.loads((root / "other" / "regression.json").read_text())
    assert [q["question"] for q in out["missing"]] == [t[0] for t in TOPICS[6:]]
    assert out["failed by"] == [] and out["allow missing"]
    suite = ET.parse(root / "other" / "regression.xml").getroot().find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "4")
    assert not out["same question file"]
    assert out["questions"] == {"common": 6, "baseline only": 4, "new only": 0}
    assert "compared on the 6 questions both hold only" in out["coverage"]
    assert next(m for m in out["metrics"] if m["metric"] == "R@8")["ties"] == 6
    assert "questions sha256" in [c["stamp"] for c in out["changes"]]


@pytest.mark.model
def test_max_drop_counts_a_small_worsening(runs, tmp_path):
    """A drop beyond --max-drop regresses even where the test cannot tell."""
    _, _, _, baseline = runs
    report = json.loads(baseline.read_text())
    worse = json.loads(baseline.read_text())
    worse["deployment"]["queries"][0]["rank"] = None  # one query of ten questions lost
    quiet = regression.compare(report, worse, allow_lost=1)
    assert not quiet.regressed and not quiet.failed
    strict = regression.compare(report, worse, max_drop=0.01, allow_lost=1)
    assert strict.regressed
    assert {m.name for m in strict.regressed} <= {"R@1", "R@4", "R@8", "R@20", "MRR"}
    assert "beyond --max-drop" in strict.regressed[0].reason


@pytest.mark.model
def test_one_lost_answer_fails_the_gate_unless_allowed(runs, tmp_path):
    """A deploy whose index lost one needle's document (the issue's case: documents removed,
    the question file unchanged) loses one answer: the gate fails, names it in the JUnit
    with what the run returns first, passes with --allow-lost 1, and a re-run passes."""
    _, docs, questions, _ = runs
    gone = TOPICS[4][0]
    fewer = tmp_path / "fewer"
    shutil.copytree(docs, fewer)
    (fewer / f"{gone}.md").unlink()
    full, cut = tmp_path / "full.sqlite", tmp_path / "cut.sqlite"
    assert cli.main(["index", str(docs), "--index", str(full)]) == exits.OK
    assert cli.main(["index", str(fewer), "--index", str(cut)]) == exits.OK

    def against(index, out, *args):
        argv = ["evaluate", "--index", str(index), "--corpus", str(docs)]
        argv += ["--questions", str(questions), "--out", str(tmp_path / out)]
        return cli.main([*argv, *map(str, args)])

    assert against(full, "base") == exits.OK
    baseline = tmp_path / "base" / "report.json"
    assert against(cut, "cut", "--baseline", baseline) == exits.REGRESSED
    out = json.loads((tmp_path / "cut" / "regression.json").read_text())
    assert out["regressed"] and out["failed by"] == [regression.LOST]
    assert [q["question"] for q in out["lost"]] == [gone] and out["missing"] == []
    lost = out["lost"][0]["queries"]
    assert {q["query"] for q in lost} == {f"{gone}/course", f"{gone}/ticket"}
    assert all(q["new rank"] is None and q["top chunk now"] for q in lost)
    # JUnit: one failing testcase, the lost question, naming what the run returns first
    suite = ET.parse(tmp_path / "cut" / "regression.xml").getroot().find("testsuite")
    failing = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name").split(" at ")[0]) for c in failing] == [
        ("rag_lab.regression.lost", gone)
    ]
    assert all(q["top chunk now"] in failing[0].find("failure").text for q in lost)
    # allowed, it passes and stays listed; the same deploy again passes
    assert against(cut, "allowed", "--baseline", baseline, "--allow-lost", 1) == exits.OK
    allowed = json.loads((tmp_path / "allowed" / "regression.json").read_text())
    assert allowed["failed by"] == [] and [q["question"] for q in allowed["lost"]] == [gone]
    xml = ET.parse(tmp_path / "allowed" / "regression.xml").getroot()
    assert (xml.get("failures"), xml.get("skipped")) == ("0", "1")
    assert against(full, "again", "--baseline", baseline) == exits.OK
    again = json.loads((tmp_path / "again" / "regression.json").read_text())
    assert (again["failed by"], again["lost"], again["missing"]) == ([], [], [])


@pytest.mark.model
def test_lost_and_missing_are_read_from_the_records(runs):
    _, _, _, baseline = runs
    report = json.loads(baseline.read_text())
    first = report["deployment"]["queries"][0]
    assert first["rank"] == 1  # found at every k: lost at every k below
    worse = json.loads(baseline.read_text())
    worse["deployment"]["queries"][0]["rank"] = None
    c = regression.compare(report, worse)
    assert [(q.question, q.ks) for q in c.lost] == [(first["question"], (1, 4, 8, 20))]
    assert c.failures == [regression.LOST]
    assert regression.compare(report, worse, allow_lost=1).failures == []
    # one phrasing dropped, then a whole question: each missing, named with its queries
    fewer = json.loads(baseline.read_text())
    dropped = fewer["deployment"]["queries"].pop()
    c = regression.compare(report, fewer)
    assert [(q.question, q.queries, q.whole) for q in c.missing] == [
        (dropped["question"], (dropped["id"],), False)
    ]
    fewer["deployment"]["queries"] = [
        q for q in fewer["deployment"]["queries"] if q["question"] != dropped["question"]
    ]
    fewer["deployment"]["questions"].remove(dropped["question"])
    c = regression.compare(report, fewer)
    assert [(q.question, len(q.queries), q.whole) for q in c.missing] == [
        (dropped["question"], 2, True)
    ]
    assert c.failures == [regression.MISSING]
    assert regression.compare(report, fewer, allow_missing=True).failures == []


@pytest.mark.model
def test_the_three_files_show_one_interval_and_one_detectable_difference(runs):
    """regression.md, regression.json and regression.xml read the same fields: the interval
    at 1 − 0.05/m, and the difference that test detects (not report.md's planning figure)."""
    _, _, _, baseline = runs
    report = json.loads(baseline.read_text())
    worse = json.loads(baseline.read_text())
    for q in worse["deployment"]["queries"][:2]:
        q["rank"] = None  # one question lost: inconclusive, so a detectable difference
    c = regression.compare(report, worse)
    data = gate_report.to_json(c)
    md = gate_report.markdown(c)
    cases = {
        x.get("name"): x
        for x in ET.fromstring(gate_report.junit(c)).iter("testcase")
        if x.get("classname") == "rag_lab.regression"
    }
    m = len(data["metrics"])
    shown = [x for x in data["metrics"] if x["detectable"] is not None]
    assert shown  # some metric is inconclusive, with the difference it would detect
    for x in data["metrics"]:
        assert x["ci level"] == pytest.approx(1 - 0.05 / m)
        lo, hi = x["ci"]
        interval = f"{x['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        detects = "–" if x["detectable"] is None else f"±{x['detectable']:.3f}"
        row = next(line for line in md.splitlines() if line.startswith(f"| {x['metric']} "))
        assert interval in row and detects in row
        case = cases[x["metric"]]
        text = (
            case.find("system-out") if case.find("failure") is None else case.find("failure")
        ).text
        assert interval in text
        assert (detects in text) == (x["detectable"] is not None)
        assert x["p adjusted"] == pytest.approx(min(1.0, x["p"] * m))


def bad_baselines(tmp_path, report_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    (tmp_path / "bytes.json").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "broken.json").write_text('{"rag_lab": "0.1.0",\n  "kind": ', "utf-8")
    (tmp_path / "list.json").write_text("[]", "utf-8")
    old = json.loads(report_path.read_text())
    del old["deployment"]
    (tmp_path / "old.json").write_text(json.dumps(old), "utf-8")
    with open(tmp_path / "huge.json", "wb") as huge:  # sparse: no disk is used
        huge.truncate(regression.REPORT_MAX_BYTES + 1)
    return {
        Path("/dev/zero"): "not a file",
        tmp_path / "huge.json": "more than 256 MiB",
        tmp_path / "missing.json": "no such file",
        folder: "not a file",
        tmp_path / "bytes.json": "not UTF-8",
        tmp_path / "broken.json": "not JSON (line 2",
        tmp_path / "list.json": "not a report of rag-lab evaluate",
        tmp_path / "old.json": "without per-question ranks and stamps",
    }


@pytest.mark.model
def test_a_bad_baseline_is_refused_with_its_file_and_reason(runs, tmp_path, capsys):
    root, docs, questions, baseline = runs
    for path, reason in bad_baselines(tmp_path, baseline).items():
        out = tmp_path / f"out-{path.name}"
        assert evaluate(root, docs, questions, out, "--baseline", path) == exits.ERROR
        err = capsys.readouterr().err
        assert f"{path}: " in err and reason in err and "--baseline FILE" in err, err
        assert len(err.strip().splitlines()) == 1
        assert not out.exists()  # refused before anything was computed or written


def test_max_drop_needs_a_baseline(capsys):
    assert cli.main(["evaluate", "--max-drop", "0.05"]) == exits.ERROR
    assert "--max-drop X needs --baseline FILE" in capsys.readouterr().err
    assert cli.main(["evaluate", "--allow-lost", "1"]) == exits.ERROR
    assert "--allow-lost N needs --baseline FILE" in capsys.readouterr().err
    assert cli.main(["evaluate", "--allow-missing"]) == exits.ERROR
    assert "--allow-missing needs --baseline FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        cli.main(["evaluate", "--allow-lost", "-1"])
    assert refused.value.code == exits.ERROR


def test_a_metric_one_run_lacks_is_named_not_compared(runs):
    _, _, _, baseline = runs
    report = json.loads(baseline.read_text())
    bare = json.loads(baseline.read_text())
    bare["deployment"]["negatives"] = []
    c = regression.compare(report, bare)
    assert c.not_compared == ("bluffs and refusals: the new run has no negatives",)
    assert not any(m.name.startswith(("bluffs", "refusals")) for m in c.metrics)
    assert "Not compared: bluffs and refusals" in gate_report.markdown(c)


def test_reports_of_different_kinds_are_not_paired():
    a = {"kind": "needles", "deployment": {}, "stamps": {}}
    b = {"kind": "spans", "deployment": {}, "stamps": {}}
    with pytest.raises(regression.BaselineError, match="cannot be paired"):
        regression.compare(a, b, baseline_path="old/report.json")


# --- the statistics under the gate ---------------------------------------------------------


def test_the_mean_difference_is_the_hit_difference_on_hits():
    a, b = [1, 1, 1, 0] * 4, [0, 0, 1, 0] * 4
    clusters = [f"q{i // 2}" for i in range(16)]
    assert paired_mean_difference(a, b, clusters) == paired_difference(a, b, clusters)
    assert cluster_paired_values(a, b, clusters) == cluster_paired(a, b, clusters)


def test_reciprocal_ranks_are_compared_by_question():
    # q1: 1 + 1/3 against 1/2 + 1/2 (a wins); q2: 1/4 against 1/4 (tie).
    r = cluster_paired_values([1.0, 1 / 3, 0.25], [0.5, 0.5, 0.25], ["q1", "q1", "q2"])
    assert (r.wins, r.losses, r.ties) == (1, 0, 1)


def test_power_by_hand():
    from scipy import stats

    # δ(30) = (t(0.975, 31) + t(0.8, 31)) · 0.3 / √32
    by_hand = (stats.t.ppf(0.975, 31) + stats.t.ppf(0.8, 31)) * 0.3 / 32**0.5
    assert detectable(0.3, 30) == pytest.approx(by_hand)
    n = questions_needed(0.3, 0.05)
    assert detectable(0.3, n) <= 0.05 < detectable(0.3, n - 1)
    assert questions_needed(0.6, 0.05) > n  # twice the spread, about four times the questions


def test_each_metric_is_judged_by_the_one_rule_over_the_family_of_metrics():
    import numpy as np

    from rag_lab.claims import claims
    from rag_lab.claims.verdicts import Verdict

    clusters = [f"q{i}" for i in range(8)]
    hit, miss = np.ones(8), np.zeros(8)
    Measured = regression.Measured
    recall_lost = Measured("R@5", True, hit, miss, clusters, "questions")  # every question lost
    destroyed_fell = Measured("destroyed answers", False, hit, miss, clusters, "questions")
    same = Measured("MRR", True, hit, hit, clusters, "questions")
    lost, fell, unchanged = regression._judge_all([recall_lost, destroyed_fell, same], None)
    # 8 of 8 questions one way: the verdict reads the t interval at 1 − 0.05/3 (the three
    # metrics are one family), and the adjusted p is the one that interval inverts
    assert (lost.test.wins, lost.test.losses) == (0, 8)
    assert lost.difference.level == pytest.approx(1 - 0.05 / 3)
    assert lost.difference.hi < 0 and lost.p_adjusted < 0.05
    assert (lost.verdict, lost.outcome) == (Verdict.REPRODUCES, regression.REGRESSED)
    assert (fell.verdict, fell.outcome) == (Verdict.CONTRADICTED, regression.IMPROVED)
    assert unchanged.outcome == regression.UNCHANGED
    assert unchanged.verdict is Verdict.NO_VARIATION  # the same hits on every question
    # the gate's claim is about the user's runs, declared beside the chapter's, not the chapter's
    assert claims()[regression.NEW_RUN_WORSE[True].id].role == "project"


@pytest.mark.model
def test_a_question_asked_anew_under_its_old_id_is_missing_not_paired(runs):
    """The same id, another phrasing: the baseline's question is no longer asked."""
    root, docs, _, baseline = runs
    topics = [
        (*t[:4], "how do I get probabilities out of logits") if t[0] == "softmax" else t
        for t in TOPICS
    ]
    other = question_file(root / "anew.yaml", topics)
    assert evaluate(root, docs, other, root / "anew", "--baseline", baseline) == exits.REGRESSED
    out = json.loads((root / "anew" / "regression.json").read_text())
    (missing,) = out["missing"]
    assert missing["question"] == "softmax" and missing["changed"] and not missing["whole"]
    assert len(missing["queries"]) == 1 and out["failed by"]
    r8 = next(m for m in out["metrics"] if m["metric"] == "R@8")
    assert r8["wins"] + r8["losses"] + r8["ties"] == 10  # softmax's other phrasing still pairs
    allowed = ("--baseline", baseline, "--allow-missing")
    assert evaluate(root, docs, other, root / "anew2", *allowed) == exits.OK


def _run_at(cutoff, query_nearest, negative_nearest):
    """A report dict with ``len(query_nearest)`` one-query questions, all found at rank 1,
    and one negative per ``negative_nearest``, gated at ``cutoff``."""
    queries = [
        {"id": f"q{i}/p", "question": f"q{i}", "rank": 1, "nearest": d, "top chunk": f"c{i}"}
        for i, d in enumerate(query_nearest)
    ]
    return {
        "kind": "needles",
        "stamps": {"cutoff": cutoff},
        "deployment": {
            "queries": queries,
            "questions": [q["question"] for q in queries],
            "destroyed": [],
            "ks": [5],
            "cutoff": cutoff,
            "negatives": [{"id": f"n{i}", "nearest": d} for i, d in enumerate(negative_nearest)],
        },
    }


def test_a_cutoff_that_lowers_the_cost_passes_with_a_bluff_cost():
    """Cutoff 0.6 → 0.4: 20 bluffs gone, 8 of 20 questions now refused. Alone, refusals
    regress; with a bluff worth 3 refusals the cost falls from 60 to 8 over 40 units."""
    old = _run_at(0.6, [0.3] * 12 + [0.45] * 8, [0.5] * 20)
    new = _run_at(0.4, [0.3] * 12 + [0.45] * 8, [0.5] * 20)
    plain = regression.compare(old, new)
    refusals = next(m for m in plain.metrics if m.name.startswith("refusals"))
    assert refusals.outcome == regression.REGRESSED and plain.failures == [regression.METRICS]
    weighed = regression.compare(old, new, bluff_cost=3)
    cost = weighed.metrics[-1]
    assert cost.name.startswith("cost") and cost.gates
    assert (cost.baseline, cost.new) == (pytest.approx(60 / 40), pytest.approx(8 / 40))
    assert cost.difference.estimate == pytest.approx(-52 / 40)
    assert cost.difference.hi < 0 and cost.outcome == regression.IMPROVED
    shown = [m for m in weighed.metrics if m.name.startswith(("bluffs", "refusals"))]
    assert [m.outcome for m in shown] == [regression.WEIGHED] * 2
    assert not weighed.failed
    # the weighed metrics leave the family: R@5, MRR, destroyed answers and the cost
    assert cost.difference.level == pytest.approx(1 - 0.05 / 4)
    assert gate_report.to_json(weighed)["bluff cost"] == 3


def test_a_cutoff_that_raises_the_cost_fails_with_a_bluff_cost():
    """The other way round (0.4 → 0.6): 20 bluffs at 3 refusals each outweigh 8 refusals."""
    old = _run_at(0.4, [0.3] * 12 + [0.45] * 8, [0.5] * 20)
    new = _run_at(0.6, [0.3] * 12 + [0.45] * 8, [0.5] * 20)
    weighed = regression.compare(old, new, bluff_cost=3)
    assert weighed.metrics[-1].outcome == regression.REGRESSED
    assert weighed.failures == [regression.METRICS]
    assert [m.name for m in weighed.regressed] == [weighed.metrics[-1].name]


def test_a_bluff_cost_is_a_positive_number_and_needs_a_baseline(capsys):
    assert cli.main(["evaluate", "--bluff-cost", "2"]) == exits.ERROR
    assert "--bluff-cost X needs --baseline FILE" in capsys.readouterr().err
    for bad in ("0", "-1", "nan", "abc"):
        with pytest.raises(SystemExit) as refused:
            cli.main(["evaluate", "--bluff-cost", bad])
        assert refused.value.code == exits.ERROR
