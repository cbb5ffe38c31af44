# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab`` against the third hostile round (issue 37): nothing lost, nothing exposed.

Each row: what is done first, the command, the exit status, a fragment of what it says
(stdout and stderr), and what is left afterwards: the index (every index name of a Milvus
Lite folder, so that a loss across names shows), or, for ``evaluate``, its report folder
``r`` (absent when refused before any work; its JSON files checked strict: no ``NaN``, no
``Infinity``). No row may print a traceback or an internal error, and no row may print or
write the password of a store URI.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from fakes import GOOD, write
from test_hostile import NEGATIVE, QUESTION, question_file
from test_hostile import state as index_state
from test_hostile_round2_pipes import good_questions, stand_in_for_evaluate

from rag_lab.app import exits

PASSWORD = "S3cret"
SERVER = f"http://admin:{PASSWORD}@127.0.0.1:9#kbc"
"""A server URI with a password; nothing listens on port 9 (discard) of loopback."""
EVALUATE = ["evaluate", "--corpus", "{docs}", "--questions", "{tmp}/q.yaml", "--out", "{tmp}/r"]
DEPTH = 1_100
ACTED_ON = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
"""What no row may print raw: controls but line feed and tab, bidirectional overrides."""


# --- what a row does first ------------------------------------------------------------


def nothing(run, docs, path, tmp_path, monkeypatch):
    pass


def milvus():
    return pytest.importorskip("pymilvus", reason="the Milvus client (pip install rag-lab[milvus])")


def an_earlier_index_a_(run, docs, path, tmp_path, monkeypatch):
    """``kb.db#a`` (the three files), and beside it ``kb.db#a_`` (one other file), which the
    name check of an earlier version allowed; ``a__`` begins the names of ``a_``'s collections."""
    milvus()
    from rag_lab.app.store.milvus import connection

    assert run("index", docs, "--store", f"{tmp_path}/kb.db#a")[0] == exits.OK
    other = write(tmp_path / "other", {"d.md": "# Delta\n\nDeltas are differences.\n"})
    with monkeypatch.context() as earlier:
        earlier.setattr(connection, "_NAME", re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}"))
        assert run("index", other, "--store", f"{tmp_path}/kb.db#a_")[0] == exits.OK


def only_an_earlier_index_a_(run, docs, path, tmp_path, monkeypatch):
    """``kb.db#a_`` alone, as an earlier version allowed; no index ``a`` yet."""
    milvus()
    from rag_lab.app.store.milvus import connection

    other = write(tmp_path / "other", {"d.md": "# Delta\n\nDeltas are differences.\n"})
    with monkeypatch.context() as earlier:
        earlier.setattr(connection, "_NAME", re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}"))
        assert run("index", other, "--store", f"{tmp_path}/kb.db#a_")[0] == exits.OK


def unreachable_soon(run, docs, path, tmp_path, monkeypatch):
    """A server that does not answer is given up on after 0.5 s, not 10."""
    milvus()
    monkeypatch.setattr("rag_lab.app.store.milvus.connection.CONNECT_SECONDS", 0.5)


def a_server_stood_in_by_milvus_lite(run, docs, path, tmp_path, monkeypatch):
    """The folder indexed into Milvus Lite (``served.db``), which then answers for the server
    at :data:`SERVER`: rag-lab sees the server's URI, the client reads the folder."""
    milvus()
    from rag_lab.app import lifecycle
    from rag_lab.app.store import MilvusLocation

    good_questions(run, docs, path, tmp_path, monkeypatch)
    assert run("index", docs, "--store", tmp_path / "served.db")[0] == exits.OK
    lite = MilvusLocation.parse(str(tmp_path / "served.db"))
    reading = lifecycle.reading
    monkeypatch.setattr(lifecycle, "reading", lambda where, **kw: reading(lite, **kw))


def deep_tree(run, docs, path, tmp_path, monkeypatch):
    """``docs/d/d/…/d/deep.md``, :data:`DEPTH` folders down (made through directory file
    descriptors: a path that long is past what ``os.makedirs`` recurses through)."""
    good_questions(run, docs, path, tmp_path, monkeypatch)
    fd = os.open(docs, os.O_RDONLY)
    try:
        for _ in range(DEPTH):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"# Deep\n\nDeep down, tensors still hold numbers.\n")
        os.close(out)
    finally:
        os.close(fd)


@pytest.fixture(autouse=True)
def no_deep_tree_left(tmp_path):
    """Remove :func:`deep_tree`'s folders after the row, bottom up: pytest deletes old
    temporary folders with ``shutil.rmtree``, which in Python 3.11 recurses once a level,
    so a tree this deep left behind would fail every later session's clean-up."""
    yield
    chain = [tmp_path / "docs" / "d"]
    while chain[-1].is_dir():
        chain.append(chain[-1] / "d")
    for folder in reversed(chain[:-1]):
        for entry in os.scandir(folder):
            os.unlink(entry.path)
        os.rmdir(folder)


_BASELINE: dict[str, str] = {}
"""The text of a sound baseline (``report.json`` of ``evaluate`` on the three files), made
by the first row that needs it: the corpus and question file are the same in every row."""


def a_sound_baseline(run, docs, path, tmp_path, monkeypatch) -> dict:
    good_questions(run, docs, path, tmp_path, monkeypatch)
    if "report" not in _BASELINE:
        first = tmp_path / "first"
        argv = [a.format(docs=docs, tmp=tmp_path) for a in EVALUATE[:-1]]
        assert run(*argv, first)[0] == exits.OK
        _BASELINE["report"] = (first / "report.json").read_text(encoding="utf-8")
    return json.loads(_BASELINE["report"])


def no_work(*args, **kwargs):
    raise AssertionError("the evaluation ran: the baseline was refused too late")


def baseline(change=None, at: str = "base.json", work: bool = False):
    """A sound baseline written to ``{tmp}/<at>`` after ``change(report)``; unless ``work``,
    the evaluation itself made to fail loudly, so that a row shows its refusal came before
    any work."""

    def setup(run, docs, path, tmp_path, monkeypatch):
        report = a_sound_baseline(run, docs, path, tmp_path, monkeypatch)
        if change is not None:
            change(report)
        if not work:
            monkeypatch.setattr("rag_lab.evaluation.runner.run", no_work)
        (tmp_path / at).parent.mkdir(exist_ok=True)
        (tmp_path / at).write_text(json.dumps(report), encoding="utf-8")

    return setup


def query(field: str, value):
    def change(report):
        report["deployment"]["queries"][0][field] = value

    return change


def deployment(field: str, value):
    def change(report):
        report["deployment"][field] = value

    return change


def without_query_id(report):
    del report["deployment"]["queries"][1]["id"]


def a_null_nearest_negative(report):
    report["deployment"]["negatives"][0]["nearest"] = None


def twice(report):
    queries = report["deployment"]["queries"]
    queries[1]["id"] = queries[0]["id"]


def of_spans(report):
    report["kind"] = "spans"


def linked_into_the_report(run, docs, path, tmp_path, monkeypatch):
    """The baseline in ``r/``, and ``link.json`` beside ``r`` a symbolic link to it."""
    baseline(at="r/report.json")(run, docs, path, tmp_path, monkeypatch)
    (tmp_path / "link.json").symlink_to(tmp_path / "r" / "report.json")


def one_chunk_corpus(run, docs, path, tmp_path, monkeypatch):
    """A corpus of one chunk, asked two questions: every twin has no chunk left (its
    distance infinite)."""
    stand_in_for_evaluate(run, docs, path, tmp_path, monkeypatch)
    write(
        tmp_path / "one", {"a.md": "# Alpha\n\nTensors hold numbers. Gradients flow backwards.\n"}
    )
    second = (
        "  - id: q2\n    doc: a\n"
        '    needle: "Gradients flow backwards."\n'
        '    course: "How do gradients flow?"\n'
        '    ticket: "gradients flow how"\n'
    )
    question_file(f"questions:\n{QUESTION}{second}negatives:\n{NEGATIVE}")(
        run, docs, path, tmp_path, monkeypatch
    )


ESCAPES = "\x1b]0;owned\x07\x1b[2J\x9b1m\u202e"
"""An OSC title, a clear screen, an 8-bit CSI and a right-to-left override: what a
terminal acts on, in a file's name, a folder's or a baseline's stamps."""
SHOWN = "\\x1b]0;owned\\x07\\x1b[2J\\u009b1m\\u202e"
""":data:`ESCAPES` as the terminal is shown it."""


def a_file_named_with_escapes_and_cut(run, docs, path, tmp_path, monkeypatch):
    """A fourth file, named with :data:`ESCAPES`, holding a passage over the chunk bound
    with no break (``index`` warns that it cut it, naming the file)."""
    write(docs, {f"{ESCAPES}.md": "# Long\n\n" + "x" * 1_100 + "\n"})


def a_corpus_folder_named_with_escapes(run, docs, path, tmp_path, monkeypatch):
    """The three files in ``{tmp}/<ESCAPES>docs``, the question file, and ``{tmp}`` the
    working folder (the report goes to ``reports/<ESCAPES>docs`` there)."""
    good_questions(run, docs, path, tmp_path, monkeypatch)
    write(tmp_path / f"{ESCAPES}docs", dict(GOOD))
    monkeypatch.chdir(tmp_path)


def stamps_with_escapes(report):
    """Every stamp of the baseline holds :data:`ESCAPES` and a NUL (which XML 1.0 forbids)."""
    for stamp in report["stamps"]:
        report["stamps"][stamp] = f"{ESCAPES}\x00{stamp}"


def long_titles(run, docs, path, tmp_path, monkeypatch):
    """Beside the three files, ``t1.md`` titled with 40,000 "é" (its chunk's text, the title
    first, is 80,034 bytes of UTF-8), ``t2.md`` with 15,000 (its heading fits, its record, the title
    as JSON escapes, does not), then ``z.md``, read after them."""
    milvus()
    body = "\n\nA body under a title that long.\n"
    write(docs, {"t1.md": "# " + "é" * 40_000 + body, "t2.md": "# " + "é" * 15_000 + body})
    write(docs, {"z.md": "# Zeta\n\nZetas come last.\n"})


def a_sparse_question_file_of_65_mib(run, docs, path, tmp_path, monkeypatch):
    with open(tmp_path / "big.yaml", "wb") as f:
        f.truncate(65 * 2**20)


def indexed(folder: str | None = None, files: dict | None = None, at: str = "index.sqlite"):
    """The question file, and ``{tmp}/<folder>`` (``files``; the row's corpus when None)
    indexed into ``{tmp}/<at>`` (a SQLite file, or Milvus Lite when it ends ``.db``)."""

    def setup(run, docs, path, tmp_path, monkeypatch):
        good_questions(run, docs, path, tmp_path, monkeypatch)
        if at.endswith(".db"):
            milvus()
        source = docs if folder is None else write(tmp_path / folder, files)
        option = "--store" if at.endswith(".db") else "--index"
        assert run("index", source, option, tmp_path / at)[0] == exits.OK

    return setup


def the_labs_corpus_indexed(run, docs, path, tmp_path, monkeypatch):
    """The lab's corpus indexed into ``{tmp}/index.sqlite``, and a question on it."""
    from rag_lab.sources.d2l import corpus_dir

    stand_in_for_evaluate(run, docs, path, tmp_path, monkeypatch)
    question_file(
        "questions:\n  - id: q1\n    doc: 01-ndarray\n"
        '    needle: "The tensor `x` contains 12 elements."\n'
        '    course: "How many elements does x hold?"\n'
        '    ticket: "x numel"\n'
        f"negatives:\n{NEGATIVE}"
    )(run, docs, path, tmp_path, monkeypatch)
    assert run("index", corpus_dir(), "--index", path)[0] == exits.OK


OTHER = {"x.md": "# Xi\n\nXis are letters.\n", "y.md": "# Ypsilon\n\nYpsilons too.\n"}
"""A folder of other documents than the row's corpus."""
BEHIND = {**GOOD, "b.md": "# Beta\n\nAn older beta.\n", "e.md": "# Epsilon\n\nGone since.\n"}
"""The row's corpus as it was: ``b.md`` changed since, ``e.md`` removed since."""


def a_file_named_kb_db(run, docs, path, tmp_path, monkeypatch):
    milvus()
    (tmp_path / "kb.db").write_text("notes\n")


def an_empty_folder_kb_db(run, docs, path, tmp_path, monkeypatch):
    milvus()
    (tmp_path / "kb.db").mkdir()


def beside_kb_db(tmp_path: Path) -> str:
    """What is left: the names in ``{tmp}`` that begin ``kb.db``, and what the folder
    ``{tmp}/kb.db`` holds (a lock beside a refused file, or a skeleton written into an
    empty folder, shows)."""
    here = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("kb.db"))
    folder = tmp_path / "kb.db"
    inside = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    return f"{', '.join(here)}; inside: {', '.join(inside) or 'nothing'}"


# --- what is left ---------------------------------------------------------------------


def milvus_state(folder: Path) -> str:
    """Every index name of a Milvus Lite folder, with its documents' counts."""
    from rag_lab.app.store import MilvusLocation, MilvusStore
    from rag_lab.app.store.milvus.connection import connect, release_lite

    if not folder.exists():
        return "absent"
    client = connect(MilvusLocation.parse(str(folder)), create=False)
    try:
        names = sorted(
            n.removesuffix("__current")
            for n in client.list_collections()
            if n.endswith("__current")
        )
        said = []
        for name in names:  # as they are, through the store: an earlier name is not re-checked
            where = MilvusLocation(str(folder), name)
            with MilvusStore(where, readonly=True, client=client) as store:
                records = store.documents()
            failed = sum(r.status.value == "failed" for r in records)
            said.append(f"{name}: {len(records) - failed} indexed, {failed} failed")
    finally:
        client.close()
        release_lite(str(folder))
    return "Milvus Lite: " + "; ".join(said)


def digest(folder: Path) -> str | None:
    if not folder.exists():
        return None
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


def report_state(folder: Path, before: str | None) -> str:
    """``absent``, ``unchanged`` (its files as the row found them), or ``written`` and
    whether every JSON file in it is strict JSON."""
    if not folder.exists():
        return "absent"
    if digest(folder) == before:
        return "unchanged"
    loose = []
    for file in sorted(folder.glob("*.json")):
        try:
            json.loads(file.read_text(encoding="utf-8"), parse_constant=lambda c: 1 / 0)
        except ZeroDivisionError:
            loose.append(file.name)
    for file in sorted(folder.glob("*.xml")):
        try:
            ElementTree.parse(file)
        except ElementTree.ParseError:
            loose.append(file.name)
    return "written, strict JSON" if not loose else f"written, not strict: {', '.join(loose)}"


def state(argv: list[str], path: Path, tmp_path: Path, before: str | None) -> str:
    if argv[0] == "evaluate":
        return report_state(tmp_path / "r", before)
    if "--store" in argv:
        uri = argv[argv.index("--store") + 1].partition("#")[0]
        return "a server, not read" if "://" in uri else milvus_state(Path(uri))
    return index_state(path)


CASES = [
    # (id, setup, argv, exit status, fragment of stdout + stderr, what is left)
    # High 1: index names that cannot prefix each other, and generations matched whole
    ("a name ending _", nothing, ["index", "{docs}", "--store", "{tmp}/kb.db#a_"], 2, "argument --store: 'a_' is not an index name: a letter, then up to 63 letters, digits and single underscores, not ending in one", "absent"),
    ("a name holding __", nothing, ["index", "{docs}", "--store", "{tmp}/kb.db#a__b"], 2, "'a__b' is not an index name", "absent"),
    ("a name of 65 characters", nothing, ["index", "{docs}", "--store", "{tmp}/kb.db#" + "a" * 65], 2, "is not an index name", "absent"),
    ("index a beside an earlier a_", an_earlier_index_a_, ["index", "{docs}", "--store", "{tmp}/kb.db#a"], 0, "0 indexed, 3 unchanged, 0 failed", "Milvus Lite: a: 3 indexed, 0 failed; a_: 1 indexed, 0 failed"),
    ("a new index a beside an earlier a_", only_an_earlier_index_a_, ["index", "{docs}", "--store", "{tmp}/kb.db#a"], 0, "3 indexed, 0 unchanged, 0 failed", "Milvus Lite: a: 3 indexed, 0 failed; a_: 1 indexed, 0 failed"),
    ("rebuild a beside an earlier a_", an_earlier_index_a_, ["index", "{docs}", "--rebuild", "--store", "{tmp}/kb.db#a"], 0, "3 indexed, 0 unchanged, 0 failed", "Milvus Lite: a: 3 indexed, 0 failed; a_: 1 indexed, 0 failed"),
    # High 2: an output folder that holds the baseline it reads
    ("--out holds the baseline", baseline(at="r/report.json"), [*EVALUATE, "--baseline", "{tmp}/r/report.json"], 2, "--out {tmp}/r holds the baseline {tmp}/r/report.json, which the run would overwrite (report.json, regression.json) before comparing with it; give another --out DIR", "unchanged"),
    ("--out holds the baseline, another way", baseline(at="r/report.json"), [*EVALUATE[:-1], "{tmp}/r/../r/", "--baseline", "{tmp}/r/report.json"], 2, "holds the baseline {tmp}/r/report.json", "unchanged"),
    ("--out holds the baseline, through a link", linked_into_the_report, [*EVALUATE, "--baseline", "{tmp}/link.json"], 2, "--out {tmp}/r holds the baseline {tmp}/link.json", "unchanged"),
    ("--out holds another file as baseline", baseline(at="r/old.json"), [*EVALUATE, "--baseline", "{tmp}/r/old.json"], 2, "holds the baseline {tmp}/r/old.json", "unchanged"),
    # High 4: a store's password is never printed or written
    ("status, a password, no answer", unreachable_soon, ["status", "--store", SERVER], 2, "cannot reach the Milvus server at http://admin:***@127.0.0.1:9: no gRPC answer within 0.5 s; check that the server runs", "a server, not read"),
    ("index, a password, no answer", unreachable_soon, ["index", "{docs}", "--store", SERVER], 2, "cannot reach the Milvus server at http://admin:***@127.0.0.1:9", "a server, not read"),
    ("ask --json, a password, no answer", unreachable_soon, ["ask", "tensors", "--json", "--store", SERVER], 2, '"error": "cannot reach the Milvus server at http://admin:***@127.0.0.1:9', "a server, not read"),
    ("evaluate --store, a password", a_server_stood_in_by_milvus_lite, ["evaluate", "--store", SERVER, "--corpus", "{docs}", "--questions", "{tmp}/q.yaml", "--out", "{tmp}/r"], 0, "wrote {tmp}/r/report.md", "written, strict JSON"),
    # High 7: a tree deeper than Python's recursion limit
    ("index, 1,100 folders deep", deep_tree, ["index", "{docs}"], 0, "4 indexed, 0 unchanged, 0 failed", "4 indexed, 0 failed"),
    ("evaluate, 1,100 folders deep", deep_tree, EVALUATE, 0, "4 documents", "written, strict JSON"),
    # High 9 and medium: an impossible baseline refused before any work, naming the field
    ("baseline rank -1", baseline(query("rank", -1)), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "base.json: deployment.queries[0].rank: -1 is not a rank (a whole number from 1, or null); --baseline FILE takes the report.json of an earlier rag-lab evaluate", "absent"),
    ("baseline rank 0", baseline(query("rank", 0)), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "deployment.queries[0].rank: 0 is not a rank", "absent"),
    ("baseline rank NaN", baseline(query("rank", float("nan"))), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "deployment.queries[0].rank: NaN is not a rank", "absent"),
    ('baseline rank "1"', baseline(query("rank", "1")), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, 'deployment.queries[0].rank: "1" is not a rank', "absent"),
    ("baseline rank true", baseline(query("rank", True)), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "deployment.queries[0].rank: true is not a rank", "absent"),
    ("baseline nearest Infinity", baseline(query("nearest", float("inf"))), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "deployment.queries[0].nearest: Infinity is not a cosine distance (0 to 2)", "absent"),
    ("baseline query without an id", baseline(without_query_id), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "base.json: deployment.queries[1].id: missing", "absent"),
    ("baseline query id twice", baseline(twice), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, 'deployment.queries[1].id: "q1/course" appears twice', "absent"),
    ("baseline null nearest", baseline(a_null_nearest_negative), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "deployment.negatives[0].nearest: null is not a cosine distance (0 to 2)", "absent"),
    ('baseline cutoff "abc"', baseline(deployment("cutoff", "abc")), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, 'deployment.cutoff: "abc" is not a cosine distance (0 to 2)', "absent"),
    ('baseline ks "abc"', baseline(deployment("ks", "abc")), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, 'deployment.ks: "abc" is not a list of whole numbers from 1', "absent"),
    ("baseline ks [0]", baseline(deployment("ks", [0])), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "deployment.ks: [0] is not a list of whole numbers from 1", "absent"),
    ("baseline questions a text", baseline(deployment("questions", "q1")), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "deployment.questions: not a list of question ids (text)", "absent"),
    ("baseline of another kind", baseline(of_spans), [*EVALUATE, "--baseline", "{tmp}/base.json"], 2, "base.json: a report of spans questions, and this run has needles: they cannot be paired", "absent"),
    # High 8: a file's name, a folder's, a baseline's stamps: escaped for the terminal and XML
    ("a file name of escapes, cut", a_file_named_with_escapes_and_cut, ["index", "{docs}"], 0, f"warning: {SHOWN}.md: 1 passage over 1,024 characters", "4 indexed, 0 failed"),
    ("a corpus folder name of escapes", a_corpus_folder_named_with_escapes, [*EVALUATE[:2], f"{{tmp}}/{ESCAPES}docs", *EVALUATE[3:5]], 0, f"wrote reports/{SHOWN}docs/report.md", "absent"),
    ("baseline stamps of escapes and NUL", baseline(stamps_with_escapes, work=True), [*EVALUATE, "--baseline", "{tmp}/base.json"], 0, f"changed corpus sha256: {SHOWN}\\x00corpus sha256 -> ", "written, strict JSON"),
    # High 6: a document past Milvus's limits fails alone, with its reason; the rest is indexed
    ("titles past Milvus's limits", long_titles, ["index", "{docs}", "--store", "{tmp}/kb.db"], 1, "4 indexed, 0 unchanged, 2 failed", "Milvus Lite: rag_lab: 4 indexed, 2 failed"),
    ("a chunk's text past Milvus's limit", long_titles, ["index", "{docs}", "--store", "{tmp}/kb.db"], 1, "failed t1.md: a chunk's text is 80,034 bytes, and Milvus keeps 65,535 in a text field", "Milvus Lite: rag_lab: 4 indexed, 2 failed"),
    ("a record past Milvus's limit", long_titles, ["index", "{docs}", "--store", "{tmp}/kb.db"], 1, "failed t2.md: its record is 90,", "Milvus Lite: rag_lab: 4 indexed, 2 failed"),
    # medium: a server URI that cannot be one, a usage error before any work
    ("--store port abc", nothing, ["index", "{docs}", "--store", "http://127.0.0.1:abc"], 2, "argument --store: http://127.0.0.1:abc: the port is not a number from 1 to 65535 (http://host:port)", "a server, not read"),
    ("--store port 99999", nothing, ["status", "--store", "http://127.0.0.1:99999#kb"], 2, "argument --store: http://127.0.0.1:99999: the port is not a number from 1 to 65535", "a server, not read"),
    ("--store port 0, a password", nothing, ["ask", "tensors", "--store", f"http://admin:{PASSWORD}@127.0.0.1:0"], 2, "argument --store: http://admin:***@127.0.0.1:0: the port is not", "a server, not read"),
    ("--store [::1 unclosed", nothing, ["status", "--store", "http://[::1"], 2, "argument --store: http://[::1: not a server address (http://host:port)", "a server, not read"),
    ("--store without a host", nothing, ["status", "--store", "http://:19530"], 2, "argument --store: http://:19530: no host (http://host:port)", "a server, not read"),
    # medium: a question file without end, refused before it fills the memory
    ("--questions /dev/zero", nothing, [*EVALUATE[:4], "/dev/zero", *EVALUATE[5:]], 2, "/dev/zero: more than 64 MiB, not a question file (--questions FILE)", "absent"),
    ("--questions a file of 65 MiB", a_sparse_question_file_of_65_mib, [*EVALUATE[:4], "{tmp}/big.yaml", *EVALUATE[5:]], 2, "big.yaml: more than 64 MiB, not a question file", "absent"),
    # medium: evaluate --index/--store, the questions checked against the corpus the index holds
    ("--index, no --corpus, not the lab's", indexed(), ["evaluate", "--index", "{tmp}/index.sqlite", *EVALUATE[3:]], 2, "--index {tmp}/index.sqlite holds 3 documents of {docs}, and none of them is in", "absent"),
    ("--index, no --corpus, the lab's", the_labs_corpus_indexed, ["evaluate", "--index", "{tmp}/index.sqlite", *EVALUATE[3:]], 0, "wrote {tmp}/r/report.md", "written, strict JSON"),
    ("--store, no --corpus, not the lab's", indexed(at="kb.db"), ["evaluate", "--store", "{tmp}/kb.db", *EVALUATE[3:]], 2, "--store {tmp}/kb.db holds 3 documents of {docs}, and none of them is in", "absent"),
    ("--index of another folder, --corpus", indexed("d2", OTHER, "d2.sqlite"), ["evaluate", "--index", "{tmp}/d2.sqlite", *EVALUATE[1:]], 2, "--index {tmp}/d2.sqlite holds 2 documents of {tmp}/d2, and none of them is in {docs} with the same bytes", "absent"),
    ("--index of the folder as it was, --corpus", indexed("d2", BEHIND, "d2.sqlite"), ["evaluate", "--index", "{tmp}/d2.sqlite", *EVALUATE[1:]], 0, "warning: --index {tmp}/d2.sqlite and {docs} differ in 2 documents (1 changed, 1 only in the index, 0 only in the folder; 2 the same)", "written, strict JSON"),
    ("--index of the same folder, --corpus: no warning", indexed(), ["evaluate", "--index", "{tmp}/index.sqlite", *EVALUATE[1:]], 0, "wrote {tmp}/r/report.md", "written, strict JSON"),
    # low: the report written inside the corpus folder
    ("--out inside the corpus", good_questions, [*EVALUATE[:-1], "{docs}/r"], 2, "--out {docs}/r is inside the corpus {docs}", "absent"),
    ("--out the corpus itself", good_questions, [*EVALUATE[:-1], "{docs}/sub/.."], 2, "--out {docs}/sub/.. is inside the corpus {docs}", "absent"),
    # low: a lock written beside a refused file; a reader writing into an empty folder
    ("index --store a file kb.db", a_file_named_kb_db, ["index", "{docs}", "--store", "{tmp}/kb.db"], 2, "{tmp}/kb.db is a file, not a Milvus Lite folder; refusing to touch it; choose another --store URI#NAME", (beside_kb_db, "kb.db; inside: nothing")),
    ("status --store an empty folder", an_empty_folder_kb_db, ["status", "--store", "{tmp}/kb.db"], 2, "no index at {tmp}/kb.db: run rag-lab index DIR --store {tmp}/kb.db first", (beside_kb_db, "kb.db; inside: nothing")),
    ("ask --store an empty folder", an_empty_folder_kb_db, ["ask", "tensors", "--store", "{tmp}/kb.db"], 2, "no index at {tmp}/kb.db", (beside_kb_db, "kb.db; inside: nothing")),
    # strict JSON everywhere the app writes JSON
    ("one chunk, two questions: twin distances infinite", one_chunk_corpus, ["evaluate", "--corpus", "{tmp}/one", "--questions", "{tmp}/q.yaml", "--out", "{tmp}/r"], 0, "wrote {tmp}/r/report.md", "written, strict JSON"),
    ("a sound baseline, compared", baseline(work=True), [*EVALUATE, "--baseline", "{tmp}/base.json"], 0, "in {tmp}/r", "written, strict JSON"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_case(env, tmp_path, monkeypatch, setup, argv, code, fragment, after):
    run, docs, path = env
    setup(run, docs, path, tmp_path, monkeypatch)
    argv = [a.format(docs=docs, tmp=tmp_path) for a in argv]
    before = digest(tmp_path / "r")
    status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert not re.search(ACTED_ON, out + err), (out, err)
    assert fragment.format(docs=docs, tmp=tmp_path) in out + err, (out, err)
    if code == exits.ERROR:
        assert err.count("\n") == 1 or err.startswith("usage:"), err
    assert PASSWORD not in out + err
    written = [p for p in (tmp_path / "r").rglob("*") if p.is_file()]
    assert not [p for p in written if PASSWORD.encode() in p.read_bytes()]
    if isinstance(after, tuple):  # (what to look at, what it must be)
        assert after[0](tmp_path) == after[1]
    else:
        assert state(argv, path, tmp_path, before) == after


@pytest.mark.server
def test_a_password_on_a_real_server_is_never_printed_or_written(run, tmp_path, monkeypatch):
    """The same on ``milvus-lite server`` (which takes any token): index, status, evaluate."""
    milvus()
    from test_store_backends import _free_port, _serve, _stop

    port = _free_port()
    data = tmp_path / "server"
    data.mkdir()
    exe = Path(sys.executable).with_name("milvus-lite")
    proc = _serve(
        [str(exe), "server", "--data-dir", str(data), "--port", str(port)], port, data / "log"
    )
    try:
        uri = f"http://admin:{PASSWORD}@127.0.0.1:{port}#kbc"
        docs = write(tmp_path / "docs", {"a.md": "# Alpha\n\nTensors hold numbers.\n"})
        good_questions(run, docs, tmp_path / "index.sqlite", tmp_path, monkeypatch)
        said = []
        for argv in (
            ["index", docs, "--store", uri],
            ["status", "--store", uri],
            [
                "evaluate",
                "--store",
                uri,
                "--corpus",
                docs,
                "--questions",
                tmp_path / "q.yaml",
                "--out",
                tmp_path / "r",
            ],
        ):
            status, out, err = run(*argv)
            assert status == exits.OK, err
            said.append(out + err)
        assert all(PASSWORD not in s for s in said)
        assert "http://admin:***@127.0.0.1" in said[0]
        for file in (tmp_path / "r").rglob("*"):
            assert not file.is_file() or PASSWORD.encode() not in file.read_bytes(), file
        assert (
            json.loads((tmp_path / "r" / "report.json").read_text())["served"]["index"]
            == f"http://admin:***@127.0.0.1:{port}#kbc"
        )
    finally:
        _stop(proc)


def tcp_listening_here() -> int:
    """How many TCP sockets of this process listen (``/proc/net/tcp`` and ``tcp6``, state
    ``0A``, matched to this process's descriptors by inode)."""
    mine = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            mine.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    listening = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            listening += fields[3] == "0A" and f"socket:[{fields[9]}]" in mine
    return listening


def test_milvus_lite_listens_on_a_private_socket_only(tmp_path):
    """High 3: while a Milvus Lite index is open, its server listens on a Unix socket in a
    folder only its user can enter (0700), on no TCP port; closed, the folder is gone."""
    milvus()
    from rag_lab.app.store import MilvusLocation
    from rag_lab.app.store.milvus import connection

    where = MilvusLocation.parse(str(tmp_path / "kb.db"))
    before = tcp_listening_here()
    client = connection.connect(where, create=True)
    try:
        assert tcp_listening_here() == before
        _, _, private, uri = connection._LITE[where.uri]
        assert uri == f"unix:{private}/milvus:0"
        assert os.stat(private).st_mode & 0o777 == 0o700
        assert client.list_collections() == []
    finally:
        client.close()
        connection.release_lite(where.uri)
    assert not os.path.exists(private)


def test_milvus_lite_under_a_tmpdir_too_long_for_a_socket_is_one_reason(tmp_path, monkeypatch):
    """A ``$TMPDIR`` whose socket path would pass 107 bytes: refused with what to do, the
    private folder removed, nothing bound."""
    milvus()
    import tempfile

    from rag_lab.app.store import IndexInaccessible, MilvusLocation
    from rag_lab.app.store.milvus import connection

    long = tmp_path / ("t" * 110)
    long.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(long))
    with pytest.raises(IndexInaccessible, match=r"107 bytes.*TMPDIR") as refused:
        connection.connect(MilvusLocation.parse(str(tmp_path / "kb.db")), create=True)
    assert f"$TMPDIR ({long})" in str(refused.value)  # named: the user's, not our folder's
    assert "rag-lab-milvus-" not in str(refused.value)
    assert list(long.iterdir()) == []
    assert str(tmp_path / "kb.db") not in connection._LITE
