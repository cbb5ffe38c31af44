# ruff: noqa: E501  (the tables read best one row per line)
"""``rag-lab``'s errors: one table of exit statuses, and the words after each fact.

Storage and the index raise facts (what, where); the command line adds what to do, with
its commands and options, and maps the kind of error to the exit status the README
promises: 2 for bad input, environment or an unusable index, 130 for Ctrl-C.
"""

from __future__ import annotations

import pytest

from rag_lab import paths
from rag_lab.app import cli, commands, exits, index
from rag_lab.app.ingest import OtherFolder
from rag_lab.app.store import (
    IndexBusy,
    IndexDamaged,
    IndexInaccessible,
    IndexLocked,
    IndexMissing,
    IndexReadOnly,
    NotAFile,
    NotOurFile,
    OtherSchema,
)
from rag_lab.models.minilm import ModelError
from rag_lab.questions import QuestionsError


def test_every_kind_of_error_has_its_exit_status():
    from rag_lab.errors import RagLabError

    assert set(RagLabError.__subclasses__()) <= exits.EXIT_STATUS.keys()
    assert set(exits.EXIT_STATUS.values()) == {exits.ERROR, exits.INTERRUPTED, exits.CLOSED}


@pytest.mark.parametrize(
    ("err", "status"),
    [
        (KeyboardInterrupt(), exits.INTERRUPTED),
        (BrokenPipeError(32, "Broken pipe"), exits.CLOSED),
        (QuestionsError("q.yaml", []), exits.ERROR),
        (commands.UsageError("x"), exits.ERROR),
        (ModelError("no weights"), exits.ERROR),
        (IndexDamaged("i.sqlite", "x"), exits.ERROR),
        (index.EmptyIndexError("x"), exits.ERROR),
        (PermissionError(13, "Permission denied"), exits.ERROR),
        (ZeroDivisionError("a bug"), exits.ERROR),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_the_exit_status_is_the_nearest_class_in_the_table(err, status):
    assert exits.exit_status(err) == status


WORDS = [
    # (the fact a command raised, its line on stderr after "rag-lab status: ")
    (IndexMissing("i.sqlite"), "no index at i.sqlite: run rag-lab index DIR first"),
    (NotAFile("i.sqlite"), "i.sqlite is a folder, not an index file; give a file: --index PATH"),
    (NotOurFile("i.sqlite", "is an empty file, not a rag-lab index"), "i.sqlite is an empty file, not a rag-lab index; refusing to touch it; choose another file with --index PATH"),
    (OtherSchema("i.sqlite", 1), "i.sqlite has index schema 1; this rag_lab reads 3. Index the folder again into a new file (--index PATH)."),
    (IndexDamaged("i.sqlite", "page 3"), "the index i.sqlite is damaged (page 3); see rag-lab status --check --index i.sqlite, and rebuild it with rag-lab index DIR --rebuild"),
    (IndexLocked("i.sqlite", 10.0), "the index i.sqlite is locked by another process (waited 10 s); run again when it is done"),
    (IndexBusy("i.sqlite", "pid 7, since noon", 0.5), "i.sqlite is being written by another rag-lab (pid 7, since noon); waited 0.5 s. Let it finish, or stop that process, and run again"),
    (IndexReadOnly("i.sqlite", "cannot write the index: the folder /x is read-only"), "cannot write the index: the folder /x is read-only; make it writable, or choose another file with --index PATH"),
    (IndexInaccessible("i.sqlite", "cannot use the index i.sqlite (disk I/O error)"), "cannot use the index i.sqlite (disk I/O error); check the disk and its permissions"),
    (index.UnknownBackend("tpu", "/docs"), "the index records the encoder backend 'tpu', which this rag_lab does not know (it knows torch, onnx, onnx-int8); rebuild it: rag-lab index /docs --rebuild"),
    (ModelError("the model is\nmissing"), "the model is missing"),
    (PermissionError(13, "Permission denied", "/x"), "/x: Permission denied"),
]  # fmt: skip


@pytest.mark.parametrize(("err", "line"), WORDS, ids=lambda v: type(v).__name__)
def test_each_fact_is_worded_with_what_to_do(run, monkeypatch, err, line):
    def fails(args):
        raise err

    monkeypatch.setitem(cli._RUN, "status", fails)
    assert run("status") == (exits.ERROR, "", f"rag-lab status: {line}\n")


KB = "/srv/kb.db"
OTHER = "/srv/other.sqlite"
"""Nothing is opened: the fact is raised by the command, these paths need not exist."""
AS_GIVEN = [
    # (the index as given, the fact raised, the end of its line): a command to type acts on the
    # index given, and names the option it was given with; the default file needs neither
    (["--store", KB], IndexMissing(KB), f"no index at {KB}: run rag-lab index DIR --store {KB} first"),
    (["--store", KB], index.EmptyIndexError("nothing is indexed yet"), f"nothing is indexed yet: run rag-lab index DIR --store {KB} first"),
    (["--store", KB], IndexDamaged(KB, "x"), f"see rag-lab status --check --store {KB}, and rebuild it with rag-lab index DIR --rebuild --store {KB}"),
    (["--store", KB], IndexReadOnly(KB, "cannot write the index: /x is read-only"), "/x is read-only; make it writable, or choose another --store URI#NAME"),
    (["--store", KB], NotOurFile(KB, "is not an index"), "refusing to touch it; choose another --store URI#NAME"),
    (["--store", KB], OtherSchema(KB, 1), "Index the folder again into a new index (--store URI#NAME)."),
    (["--store", KB], index.UnknownBackend("tpu", "/docs"), f"rebuild it: rag-lab index /docs --rebuild --store {KB}"),
    (["--store", KB], index.DamagedMeta("pdf_options", "x", "/docs"), f"rag-lab index /docs --store {KB} records them again, and reads the failed documents with them"),
    (["--store", KB], OtherFolder(["this index holds /a, not /b; index another folder into another index"]), "index another folder into another index: --store URI#NAME"),
    (["--store", KB + "#docs"], IndexMissing(KB), f"run rag-lab index DIR --store {KB}#docs first"),
    (["--index", OTHER], IndexMissing(OTHER), f"no index at {OTHER}: run rag-lab index DIR --index {OTHER} first"),
    (["--index", OTHER], index.UnknownBackend("tpu", "/docs"), f"rebuild it: rag-lab index /docs --rebuild --index {OTHER}"),
    (["--index", OTHER], OtherFolder(["this index holds /a, not /b; index another folder into another index"]), "index another folder into another index: --index PATH"),
    ([], IndexMissing("i.sqlite"), "no index at i.sqlite: run rag-lab index DIR first"),
]  # fmt: skip


@pytest.mark.parametrize(("given", "err", "end"), AS_GIVEN, ids=lambda v: type(v).__name__)
def test_a_command_in_the_advice_names_the_index_as_given(run, monkeypatch, given, err, end):
    def fails(args):
        raise err

    monkeypatch.setitem(cli._RUN, "status", fails)
    status, out, said = run("status", *given)
    assert (status, out) == (exits.ERROR, "")
    assert said.endswith(end + "\n"), said


def test_lab_questions_are_a_checkout_convenience(run, monkeypatch, tmp_path):
    monkeypatch.setattr(paths, "QUESTIONS", tmp_path / "data" / "questions.yaml")
    status, out, err = run("evaluate")
    assert (status, out) == (exits.ERROR, "")
    assert err == (
        f"rag-lab evaluate: no question file given, and the lab's own ({tmp_path}/data/"
        "questions.yaml) is not here: it comes with a checkout of the lab, not with an "
        "installed rag_lab; give one with --questions FILE\n"
    )
