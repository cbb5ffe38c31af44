# ruff: noqa: E501  (the case table reads best one row per line)
"""``rag-lab``'s messages made true, and the files it writes kept where they belong (issue 26).

Each row: what is done to the folder or the index first, the command, the exit status, a
fragment of what it says (stdout and stderr), and the index's state afterwards (of
``--index`` when the row gives one). No row may print a traceback, an internal error, a
line on stderr that names no one (a library's bare warning), ``None`` or ``-0.0``; an
error is one line on stderr (and, under ``--json``, one JSON object on stdout); a row
whose index is ``absent`` afterwards has created nothing beside it either, and one whose
``--index`` is a symbolic link nothing beside the link.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from fakes import write
from test_hostile import NEGATIVE, QUESTION, corrupt, indexed
from test_hostile import state as index_state
from test_hostile_round2_isolation import CATALOG, CONTENT, FONT, LOOP, PAGE, pdf_bytes
from test_hostile_round2_pipes import (
    an_index_without_a_folder,
    good_questions,
    stand_in_for_evaluate,
)

from rag_lab.app import exits
from rag_lab.app.index import open_index
from rag_lab.app.store import DocumentRecord, MilvusLocation, SQLiteStore
from rag_lab.atomic import write_atomically
from rag_lab.sources import folder as folder_module


def pdf_of_pages(pages: list[list[str]]) -> bytes:
    """A PDF of one page per item of ``pages``, each drawing its lines top down in Helvetica."""
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects = [CATALOG, f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>", FONT]
    for i, lines in enumerate(pages):
        text = "BT /F1 12 Tf 72 720 Td " + " 0 -14 Td ".join(f"({ln}) Tj" for ln in lines) + " ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>"
        )
        objects.append(f"<< /Length {len(text)} >>\nstream\n{text}\nendstream")
    return pdf_bytes(objects)


# Three pages holding nothing but their running header and footer.
ONLY_RUNNING_LINES = pdf_of_pages([["ACME Confidential", f"Page {n}"] for n in (1, 2, 3)])


def startxref_wrong(pdf: bytes) -> bytes:
    """``pdf`` whose ``startxref`` points into its header: pypdf warns, rebuilds the table
    from the objects, and reads on."""
    return pdf[: pdf.index(b"startxref\n")] + b"startxref\n12\n%%EOF\n"


ONE_PAGE = pdf_bytes([CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", PAGE, CONTENT, FONT])


def name_of(size: int, char: str = "i") -> str:
    """An index file name of ``size`` bytes in UTF-8, ending ``.sqlite``."""
    return char * ((size - len(".sqlite")) // len(char.encode())) + ".sqlite"


ROOMY, TIGHT, FULL = name_of(239), name_of(240), name_of(255)
"""The longest name whose files beside it fit 255 bytes (``.rebuild-journal`` adds 16);
one byte more; the most a name can be."""
ACCENTED = name_of(241, "é")  # 124 characters, but 241 bytes: the limit is in bytes


# --- what a row does first ------------------------------------------------------------


def nothing(run, docs, path, tmp_path, monkeypatch):
    pass


def add(name: str, content: bytes | str):
    def setup(run, docs, path, tmp_path, monkeypatch):
        write(docs, {name: content})

    return setup


def manifest_bad_on_line_2(run, docs, path, tmp_path, monkeypatch):
    """A ``SHA256SUMS`` whose second line holds a byte that is not UTF-8."""
    (docs / "SHA256SUMS").write_bytes(b"0" * 64 + b"  a.md\nzz\xff  b.md\n")


def a_damaged_page(run, docs, path, tmp_path, monkeypatch):
    """Bytes scrambled on the last page only (chunks): the file opens, its meta reads."""
    write(docs, {f"x{i}.md": f"# X{i}\n\n" + "Tensor words here. " * 200 for i in range(5)})
    indexed(run, docs, path, tmp_path, monkeypatch)
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for at in range(len(data) - page + 8, len(data), 13):
        data[at] = (data[at] * 31 + 7) % 256
    path.write_bytes(bytes(data))


def renamed(old: str, new: str):
    """Indexed, then ``old`` renamed ``new``: the same bytes, the same id."""

    def setup(run, docs, path, tmp_path, monkeypatch):
        indexed(run, docs, path, tmp_path, monkeypatch)
        (docs / old).rename(docs / new)

    return setup


def an_index_that_read_itself(run, docs, path, tmp_path, monkeypatch):
    """``docs/idx.txt``, indexed by a version that read it too: it holds itself, failed."""
    assert run("index", docs, "--index", docs / "idx.txt")[0] == exits.OK
    with SQLiteStore(docs / "idx.txt") as store:
        store.fail(
            [DocumentRecord.failure("idx", "idx.txt", None, "binary: a NUL byte at byte 15")]
        )


def pdf_options_of(value: str):
    """Indexed with one file failed (empty), then the recorded PDF options overwritten."""

    def setup(run, docs, path, tmp_path, monkeypatch):
        write(docs, {"e.md": ""})
        assert run("index", docs)[0] == exits.PARTIAL
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'pdf_options'", (value,))

    return setup


def indexed_under(name: str):
    """Indexed into ``index.sqlite``, then the file renamed ``name`` (by hand: the name is
    legal, only too long for the files a writer puts beside it)."""

    def setup(run, docs, path, tmp_path, monkeypatch):
        indexed(run, docs, path, tmp_path, monkeypatch)
        path.rename(tmp_path / name)
        for left in tmp_path.glob("index.sqlite*"):
            left.unlink()

    return setup


def questions_only(tail: str = ""):
    """A question file of one question, then ``tail`` (no ``negatives:`` key when empty)."""

    def setup(run, docs, path, tmp_path, monkeypatch):
        stand_in_for_evaluate(run, docs, path, tmp_path, monkeypatch)
        (tmp_path / "q.yaml").write_text(f"questions:\n{QUESTION}{tail}")

    return setup


def negatives_only(run, docs, path, tmp_path, monkeypatch):
    stand_in_for_evaluate(run, docs, path, tmp_path, monkeypatch)
    (tmp_path / "q.yaml").write_text(f"negatives:\n{NEGATIVE}")


def linked(run, docs, path, tmp_path, monkeypatch):
    """An index in ``real/``, ``link.sqlite`` a symbolic link to it (and ``chain.sqlite`` a
    link to the link); then a fourth file, so that a run has work to do."""
    real = tmp_path / "real" / "target.sqlite"
    assert run("index", docs, "--index", real)[0] == exits.OK
    (tmp_path / "link.sqlite").symlink_to(real)
    (tmp_path / "chain.sqlite").symlink_to(tmp_path / "link.sqlite")
    write(docs, {"d.md": "# Delta\n\nDeltas are differences.\n"})


def sigterm_mid_evaluation(run, docs, path, tmp_path, monkeypatch):
    """SIGTERM (``kill``, ``timeout``) while the evaluation computes."""
    import os
    import signal
    import time

    good_questions(run, docs, path, tmp_path, monkeypatch)

    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # the handler interrupts this

    monkeypatch.setattr("rag_lab.evaluation.runner.evaluate", terminated)


def milvus_lite_inside(run, docs, path, tmp_path, monkeypatch):
    """A Milvus Lite index in ``docs/kb.db``, holding a file with a suffix a scan reads."""
    pytest.importorskip("pymilvus", reason="the Milvus client (pip install rag-lab[milvus])")
    assert run("index", docs, "--store", docs / "kb.db")[0] == exits.OK
    (docs / "kb.db" / "notes.txt").write_text("Not a document: a file of the index.\n")


def a_reader_that_warns(run, docs, path, tmp_path, monkeypatch):
    """A PDF in the corpus, and a reader that warns as pypdf does (evaluate reads with PDFium)."""
    import logging

    good_questions(run, docs, path, tmp_path, monkeypatch)
    write(docs, {"w.pdf": pdf_of_pages([["Pumps need oil every week."]])})
    read_pdf = folder_module.pdf.read_pdf

    def warning(*args, **kwargs):
        logging.getLogger("pypdf._reader").warning("incorrect startxref pointer(1)")
        return read_pdf(*args, **kwargs)

    monkeypatch.setattr(folder_module.pdf, "read_pdf", warning)


def ctrl_c_while_asking(run, docs, path, tmp_path, monkeypatch):
    indexed(run, docs, path, tmp_path, monkeypatch)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("rag_lab.app.commands.ask.answer", interrupted)


# --- expected states ----------------------------------------------------------------


def state(index: Path | MilvusLocation) -> str:
    """What the index is now, in a few words (with its documents' paths when it is sound);
    a symbolic link says so, then its target's."""
    if isinstance(index, MilvusLocation):
        with open_index(index, readonly=True) as store:
            records = store.documents()
        failed = sum(r.status.value == "failed" for r in records)
        paths = " ".join(sorted(r.path for r in records))
        return f"Milvus Lite: {len(records) - failed} indexed, {failed} failed: {paths}"
    if index.is_symlink():
        return f"a link to {state(index.parent / index.readlink())}"
    words = index_state(index)
    if not words.endswith("failed"):
        return words
    with SQLiteStore(index, readonly=True) as store:
        return f"{words}: " + " ".join(sorted(r.path for r in store.documents()))


EVALUATE = ["evaluate", "--corpus", "{docs}", "--questions", "{tmp}/q.yaml", "--out", "{tmp}/r"]
CASES = [
    # (id, setup, argv, exit status, fragment of stdout + stderr, index state after)
    # a manifest that cannot be read: refused before anything is created, its line named
    ("manifest not UTF-8 on line 2", manifest_bad_on_line_2, ["index", "{docs}"], 2, "SHA256SUMS:2: not UTF-8 (invalid start byte at byte 73)", "absent"),
    ("manifest not UTF-8, rebuild", manifest_bad_on_line_2, ["index", "{docs}", "--rebuild"], 2, "SHA256SUMS:2: not UTF-8", "absent"),
    # status --check on a damaged file: what is wrong and the command that mends it, never itself
    ("status --check, damaged past opening", corrupt, ["status", "--check"], 2, ": 1 problem\n  it cannot be read: database disk image is malformed\nrebuild it: rag-lab index DIR --rebuild\n", "damaged"),
    ("status --check --json, damaged past opening", corrupt, ["status", "--check", "--json"], 2, '"ok": false, "problems": ["it cannot be read: database disk image is malformed"], "mend": "rag-lab index DIR --rebuild"', "damaged"),
    ("status --check, a damaged page", a_damaged_page, ["status", "--check"], 2, "rebuild it: rag-lab index {docs} --rebuild", "damaged"),
    # --json: an error is one line on stderr and one JSON object on stdout
    ("ask --json, no index", nothing, ["ask", "tensors", "--json"], 2, "no index at", "absent"),
    ("status --json, damaged", corrupt, ["status", "--json"], 2, "is damaged (database disk image is malformed)", "damaged"),
    ("ask --json, an option refused", indexed, ["ask", "tensors", "--json", "-k", "0"], 2, "argument -k: 0: give at least 1", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("ask --json, Ctrl-C", ctrl_c_while_asking, ["ask", "tensors", "--json"], 130, "interrupted; the index is consistent", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    # each file's true reason
    ("only whitespace", add("blank.md", " \n\n\t \n"), ["index", "{docs}"], 1, "failed blank.md: only whitespace (6 bytes)", "3 indexed, 1 failed: a.md b.md blank.md sub/c.txt"),
    ("UTF-16 with a byte-order mark", add("notes.txt", "Pumps need oil.\n".encode("utf-16")), ["index", "{docs}"], 1, "failed notes.txt: UTF-16 text (little-endian, with a byte-order mark): save it as UTF-8", "3 indexed, 1 failed: a.md b.md notes.txt sub/c.txt"),
    ("UTF-16 without a byte-order mark", add("notes.txt", "Pumps need oil.\n".encode("utf-16-be")), ["index", "{docs}"], 1, "failed notes.txt: UTF-16 text (big-endian, without a byte-order mark): save it as UTF-8", "3 indexed, 1 failed: a.md b.md notes.txt sub/c.txt"),
    ("UTF-32 with a byte-order mark", add("notes.md", "# Pumps\n".encode("utf-32")), ["index", "{docs}"], 1, "failed notes.md: UTF-32 text (little-endian, with a byte-order mark)", "3 indexed, 1 failed: a.md b.md notes.md sub/c.txt"),
    ("a NUL in a text file", add("odd.txt", b"Pumps\x00\x01\x02 need oil.\n"), ["index", "{docs}"], 1, "failed odd.txt: binary: a NUL byte at byte 5", "3 indexed, 1 failed: a.md b.md odd.txt sub/c.txt"),
    ("nothing but running lines", add("running.pdf", ONLY_RUNNING_LINES), ["index", "{docs}"], 1, "failed running.pdf: nothing to index: all its 6 lines are running headers or footers (repeated at the top or bottom of most pages), removed (rag-lab index --keep-running-lines keeps them)", "3 indexed, 1 failed: a.md b.md running.pdf sub/c.txt"),
    ("nothing but running lines, kept", add("running.pdf", ONLY_RUNNING_LINES), ["index", "{docs}", "--keep-running-lines"], 0, "4 indexed", "4 indexed, 0 failed: a.md b.md running.pdf sub/c.txt"),
    ("nothing but headings", add("heads.md", "# Title\n\n## Section\n"), ["index", "{docs}"], 1, "failed heads.md: nothing to index: no text outside headings", "3 indexed, 1 failed: a.md b.md heads.md sub/c.txt"),
    # what a PDF library warns of names the file
    ("pypdf warns, indexed", add("w.pdf", startxref_wrong(ONE_PAGE)), ["index", "{docs}", "--pdf-extractor", "pypdf"], 0, "warning: w.pdf: pypdf: incorrect startxref pointer(1); pypdf: parsing for Object Streams\n", "4 indexed, 0 failed: a.md b.md sub/c.txt w.pdf"),
    ("pypdf warns, failed", add("loop.pdf", startxref_wrong(LOOP)), ["index", "{docs}", "--pdf-extractor", "pypdf"], 1, "failed loop.pdf: malformed: pypdf: Detected cyclic page references.; the reader warned: pypdf: incorrect startxref pointer(1); pypdf: parsing for Object Streams\n", "3 indexed, 1 failed: a.md b.md loop.pdf sub/c.txt"),
    ("a reader warns, evaluate", a_reader_that_warns, EVALUATE, 0, "warning: {docs}/w.pdf: pypdf: incorrect startxref pointer(1)\n", "absent"),
    # a file renamed to the same id is read again, under its new path
    ("a.md renamed a.txt", renamed("a.md", "a.txt"), ["index", "{docs}"], 0, "1 indexed, 2 unchanged, 0 failed, 0 stale, 0 removed\n  renamed a.md to a.txt (the same id, a): read again\n", "3 indexed, 0 failed: a.txt b.md sub/c.txt"),
    ("a.md renamed a.markdown", renamed("a.md", "a.markdown"), ["index", "{docs}"], 0, "renamed a.md to a.markdown (the same id, a): read again", "3 indexed, 0 failed: a.markdown b.md sub/c.txt"),
    # an index inside the folder never reads itself
    ("index inside the folder", nothing, ["index", "{docs}", "--index", "{docs}/idx.txt"], 0, "3 indexed, 0 unchanged, 0 failed, 0 stale, 0 removed\n  not followed idx.txt: the index itself, inside the folder: not read, nor any file it writes (its journal, lock, rebuild)\n", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("index inside a subfolder", nothing, ["index", "{docs}", "--index", "{docs}/sub/notes.md"], 0, "not followed sub/notes.md: the index itself", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("index inside the folder, rebuild", an_index_that_read_itself, ["index", "{docs}", "--rebuild", "--index", "{docs}/idx.txt"], 0, "3 indexed, 0 unchanged, 0 failed, 0 stale, 0 removed\n  not followed idx.txt: the index itself", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("a Milvus Lite index inside the folder", milvus_lite_inside, ["index", "{docs}", "--store", "{docs}/kb.db"], 0, "0 indexed, 3 unchanged, 0 failed, 0 stale, 0 removed\n  not followed kb.db: the index itself", "Milvus Lite: 3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("index that read itself, index", an_index_that_read_itself, ["index", "{docs}", "--index", "{docs}/idx.txt"], 0, "0 indexed, 3 unchanged, 0 failed, 0 stale, 1 removed\n  not followed idx.txt: the index itself", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("index that read itself, retry", an_index_that_read_itself, ["retry", "--index", "{docs}/idx.txt"], 0, "0 indexed, 0 unchanged, 0 failed, 0 stale, 1 removed", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    # damaged PDF options: status --check reports them, retry refuses them in one line, index mends them
    ("retry, pdf_options not JSON", pdf_options_of("{extractor"), ["retry"], 2, "the index's recorded pdf_options is damaged (not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)). Index the folder with the PDF options you want (--pdf-extractor, --keep-running-lines, --ocr): rag-lab index {docs} records them again", "damaged"),
    ("retry, pdf_options a list", pdf_options_of("[]"), ["retry"], 2, "pdf_options is damaged (a JSON list, not an object)", "damaged"),
    ("retry, pdf_options an unknown key", pdf_options_of('{"dpi": 300}'), ["retry"], 2, "pdf_options is damaged ('dpi' is not an option)", "damaged"),
    ("retry, pdf_options an unknown extractor", pdf_options_of('{"extractor": "tika"}'), ["retry"], 2, "pdf_options is damaged (extractor: 'tika' is not one of pypdf, pdfminer, pdfium)", "damaged"),
    ("retry, pdf_options a text for a bool", pdf_options_of('{"ocr": "yes"}'), ["retry"], 2, "pdf_options is damaged (ocr: 'yes' is not a bool)", "damaged"),
    ("status --check, pdf_options damaged", pdf_options_of("{extractor"), ["status", "--check"], 2, ": 1 problem\n  meta pdf_options: not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)\nrebuild it: rag-lab index {docs} --rebuild\n", "damaged"),
    ("index mends pdf_options", pdf_options_of("{extractor"), ["index", "{docs}"], 1, "failed e.md: empty file", "3 indexed, 1 failed: a.md b.md e.md sub/c.txt"),
    # names near 255 bytes: the files beside the index fit, or the name is refused naming the limit
    ("index, a name 16 bytes short of 255", nothing, ["index", "{docs}", "--index", f"{{tmp}}/{ROOMY}"], 0, "3 indexed", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("rebuild, a name 16 bytes short of 255", indexed_under(ROOMY), ["index", "{docs}", "--rebuild", "--index", f"{{tmp}}/{ROOMY}"], 0, "3 indexed", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("index, a name 15 bytes short of 255", nothing, ["index", "{docs}", "--index", f"{{tmp}}/{TIGHT}"], 2, f": its name is 240 bytes, and the files written beside it add up to 16 more (its rebuild's journal, {TIGHT}.rebuild-journal), over this file system's limit of 255 bytes a name; choose a shorter name: --index PATH", "absent"),
    ("rebuild, a name 15 bytes short of 255", nothing, ["index", "{docs}", "--rebuild", "--index", f"{{tmp}}/{TIGHT}"], 2, ": its name is 240 bytes", "absent"),
    ("index, a name of 255 bytes", nothing, ["index", "{docs}", "--index", f"{{tmp}}/{FULL}"], 2, ": its name is 255 bytes", "absent"),
    ("index, 124 characters of 241 bytes", nothing, ["index", "{docs}", "--index", f"{{tmp}}/{ACCENTED}"], 2, ": its name is 241 bytes", "absent"),
    ("status, an index of a name too long to write", indexed_under(TIGHT), ["status", "--index", f"{{tmp}}/{TIGHT}"], 0, "3 documents: 3 indexed", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("retry, an index of a name too long to write", indexed_under(TIGHT), ["retry", "--index", f"{{tmp}}/{TIGHT}"], 2, ": its name is 240 bytes", "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    # a question file without negatives runs, the gate said to be unmeasured
    ("no negatives: key", questions_only(), EVALUATE, 0, "note: no negatives in the question file, so the refusal gate (notebook 06) was not measured", "absent"),
    ("negatives: []", questions_only("negatives: []\n"), EVALUATE, 0, "note: no negatives in the question file, so the refusal gate (notebook 06) was not measured", "absent"),
    ("no questions: key", negatives_only, EVALUATE, 2, "q.yaml: questions: missing top-level list", "absent"),
    # --index through a symbolic link: its target is written, the link kept
    ("rebuild through a link", linked, ["index", "{docs}", "--rebuild", "--index", "{tmp}/link.sqlite"], 0, "rebuilding {docs} into {tmp}/real/target.sqlite", "a link to 4 indexed, 0 failed: a.md b.md d.md sub/c.txt"),
    ("rebuild through a link to a link", linked, ["index", "{docs}", "--rebuild", "--index", "{tmp}/chain.sqlite"], 0, "4 indexed, 0 unchanged", "a link to a link to 4 indexed, 0 failed: a.md b.md d.md sub/c.txt"),
    ("index through a link", linked, ["index", "{docs}", "--index", "{tmp}/link.sqlite"], 0, "1 indexed, 3 unchanged", "a link to 4 indexed, 0 failed: a.md b.md d.md sub/c.txt"),
    ("ask through a link", linked, ["ask", "tensors", "--index", "{tmp}/link.sqlite"], 0, "source under cosine distance", "a link to 3 indexed, 0 failed: a.md b.md sub/c.txt"),
    # -0 is 0, no 'None', and evaluate's interruptions speak of the report
    ("--cutoff -0, refused", indexed, ["ask", "zebra", "--cutoff", "-0"], 0, 'NO ANSWER: nothing under cosine distance 0.0 for "zebra"', "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("--cutoff -0.0 --json, refused", indexed, ["ask", "zebra", "--cutoff", "-0.0", "--json"], 0, '"cutoff": 0.0,', "3 indexed, 0 failed: a.md b.md sub/c.txt"),
    ("evaluate --cutoff -0", good_questions, [*EVALUATE, "--cutoff", "-0"], 0, "wrote ", "absent"),
    ("ask, an index of no folder yet", an_index_without_a_folder, ["ask", "tensors"], 2, "nothing is indexed yet: run rag-lab index DIR first", "0 indexed, 0 failed: "),
    ("retry, an index of no folder yet", an_index_without_a_folder, ["retry"], 0, "0 indexed, 0 unchanged, 0 failed, 0 stale, 0 removed", "0 indexed, 0 failed: "),
    ("status --check, an index of no folder yet", an_index_without_a_folder, ["status", "--check"], 0, ": sound (SQLite integrity check ok; 0 documents'", "0 indexed, 0 failed: "),
    ("status --json, an index of no folder yet", an_index_without_a_folder, ["status", "--json"], 0, '"folder": null', "0 indexed, 0 failed: "),
    ("evaluate, SIGTERM", sigterm_mid_evaluation, EVALUATE, 143, "rag-lab evaluate: terminated (SIGTERM) before the report was complete", "absent"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "argv", "code", "fragment", "after"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_each_message(env, tmp_path, monkeypatch, setup, argv, code, fragment, after):
    run, docs, path = env
    setup(run, docs, path, tmp_path, monkeypatch)
    argv = [a.format(docs=docs, tmp=tmp_path) for a in argv]
    status, out, err = run(*argv)
    assert status == code, (out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert fragment.format(docs=docs, tmp=tmp_path) in out + err, (out, err)
    bare = [ln for ln in err.splitlines() if not ln.startswith(("rag-lab", "warning: ", "note: "))]
    assert bare == [] or err.startswith("usage:"), err  # nothing on stderr that names no one
    assert "None" not in out + err and not re.search(r"-0\.0(?!\d)", out + err), (out, err)
    if argv[0] == "evaluate" and code in (exits.INTERRUPTED, exits.TERMINATED):
        assert "index" not in err, err  # evaluate reads no index
    check = "--check" in argv  # its report is on stdout, and names the command that mends
    if code in (exits.ERROR, exits.INTERRUPTED, exits.TERMINATED) and not check:
        assert err.count("\n") == 1 or err.startswith("usage:"), err
    if check:
        assert "status --check" not in out + err, (out, err)
    if "--json" in argv:
        said = json.loads(out)  # stdout is one JSON object, error or not
        if code != exits.OK and not check:
            assert said["exit_status"] == code and said["error"] in err, (out, err)
    index = Path(argv[argv.index("--index") + 1]) if "--index" in argv else path
    if "--store" in argv:
        index = MilvusLocation.parse(argv[argv.index("--store") + 1])
    assert state(index) == after
    if (
        isinstance(index, Path) and index.is_symlink()
    ):  # the lock, the journal and a rebuild are beside the target
        assert not list(index.parent.glob(f"{index.name}?*")), list(index.parent.iterdir())
    if after == "absent":  # nothing beside it either: no lock, journal or half-built file
        assert not list(index.parent.glob(f"{index.name}*")), list(index.parent.iterdir())


def test_an_atomic_write_beside_a_name_of_255_bytes(tmp_path):
    """The temporary file of an atomic write keeps 64 bytes of the name, so a file whose own
    name is at the limit can still be written atomically (it failed: File name too long)."""
    dest = tmp_path / name_of(255)
    assert write_atomically(dest, lambda tmp: tmp.write_text("done")).read_text() == "done"
    assert [p.name for p in tmp_path.iterdir()] == [dest.name]
