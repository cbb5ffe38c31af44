"""Every cache's cold path, on small inputs, in a fresh cache: what a warm cache would hide.

The caches are shared by every checkout on a machine (``~/.cache/rag-lab``), so a warm
machine never runs the code that fills them: the ONNX export and its int8 quantisation, the
first embedding, joining and loading the generator's weights, PDF extraction, OCR. These
tests run each of them against an empty ``$RAG_LAB_CACHE`` and then check that a second run
is served from what the first one stored, and that a damaged entry is computed again. They
are marked ``cold`` and run in ``make check`` (about 40 s) though they load models.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from rag_lab.documents import Document
from rag_lab.evaluation import extraction_pdfs as pdfs
from rag_lab.models import encoder as encoder_module
from rag_lab.models.encoder import Encoder
from rag_lab.sources.pdf.typeset import scan, typeset

pytestmark = [pytest.mark.cold, pytest.mark.model]

TEXTS = ["A tensor is an array.", "Weight decay shrinks the weights.", "Paella needs saffron."]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("RAG_LAB_CACHE", str(root))
    return root


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_the_graph_is_exported_into_an_empty_cache_and_encodes_as_torch_does(cache, backend):
    enc = Encoder(backend=backend)
    graphs = sorted(p.name for p in (cache / "onnx").rglob("*.onnx"))
    assert "model.onnx" in graphs and (backend == "onnx" or "model-int8.onnx" in graphs)
    vectors = enc.encode(TEXTS)
    assert enc.last.computed == 3
    torch_vectors = Encoder(backend="torch", cache=False).encode(TEXTS)
    # fp32: equal to rounding; int8: the documented drift (min cosine 0.977 on the corpus).
    tolerance = 1e-5 if backend == "onnx" else 0.06
    np.testing.assert_allclose(vectors, torch_vectors, atol=tolerance)
    again = Encoder(backend=backend)
    np.testing.assert_array_equal(again.encode(TEXTS), vectors)
    assert again.last.computed == 0 and again.fingerprint == enc.fingerprint


def test_a_damaged_cache_file_is_moved_aside_and_its_vectors_computed_again(cache, capsys):
    first = Encoder().encode(TEXTS)
    (db,) = (cache / "embeddings").glob("*.sqlite")
    db.write_bytes(b"this is not a database" * 100)
    enc = Encoder()
    np.testing.assert_allclose(enc.encode(TEXTS), first, atol=1e-6)
    assert enc.last.computed == 3
    assert db.with_name(db.name + ".damaged").is_file()
    assert "was damaged" in capsys.readouterr().err


def test_an_entry_of_the_wrong_size_is_computed_again(cache):
    enc = Encoder()
    first = enc.encode(TEXTS)
    with enc.cache._db as db:
        db.execute("UPDATE vectors SET vec = substr(vec, 1, 100)")
    again = Encoder()
    np.testing.assert_array_equal(again.encode(TEXTS), first)
    assert again.last.computed == 3


def test_a_cache_folder_deleted_mid_run_is_a_warning_and_the_vectors_are_computed(cache, capsys):
    enc = Encoder()
    enc.encode(TEXTS[:1])
    shutil.rmtree(cache / "embeddings")
    vectors = enc.encode(TEXTS)
    assert vectors.shape == (3, 384) and enc.last.computed >= 2
    assert "embedding cache" in capsys.readouterr().err


def test_long_work_reports_to_the_relay_file_and_never_to_stderr(
    cache, tmp_path, monkeypatch, capfd
):
    progress_file = tmp_path / "progress.jsonl"
    monkeypatch.setenv("RAG_LAB_PROGRESS", str(progress_file))
    monkeypatch.setattr("rag_lab.progress.QUIET_S", 0.0)
    monkeypatch.setattr(encoder_module, "PROGRESS_FROM", 2)
    Encoder().encode(TEXTS)
    lines = [json.loads(line) for line in progress_file.read_text().splitlines()]
    assert lines[-1]["final"] and lines[-1]["n"] == lines[-1]["total"] == 3
    assert lines[-1]["desc"] == "embedding"
    assert capfd.readouterr().err == ""


def test_the_generator_is_joined_loaded_and_its_answer_stored_then_served(cache, monkeypatch):
    pytest.importorskip("llama_cpp", reason="the generate extra (make setup installs it)")
    from rag_lab.models import generator
    from rag_lab.models.generator import Generator

    # A model another test loaded stays loaded for the process: start from none, so the
    # weights are joined into this empty cache and loaded from there.
    monkeypatch.setattr(generator, "_loaded", {})

    gen = Generator(max_new_tokens=4)
    text = gen("SOURCES\n[1] A tensor is an array.\n\nQUESTION: What is a tensor?")
    assert text and not gen.calls[0].cached and gen.calls[0].new_tokens <= 4
    assert len(list((cache / "models").glob("*.gguf"))) == 1  # joined from its six parts
    (entry,) = (cache / "answers").glob("*.json")
    warm = Generator(max_new_tokens=4)
    assert warm("SOURCES\n[1] A tensor is an array.\n\nQUESTION: What is a tensor?") == text
    assert warm.calls[0].cached
    entry.write_text(entry.read_text()[:50])  # cut short: generated again, never trusted
    third = Generator(max_new_tokens=4)
    assert third("SOURCES\n[1] A tensor is an array.\n\nQUESTION: What is a tensor?") == text
    assert not third.calls[0].cached


def _pdf(tmp_path):
    body = " ".join(f"Tensors have shapes and axes, line {i}." for i in range(40))
    doc = Document("tiny", "Tiny", f"# Tiny\n\n{body}\n")
    path = tmp_path / "tiny.pdf"
    typeset(doc, "one-column", path, ())
    return path


def test_extraction_is_stored_then_served_and_a_damaged_entry_is_read_again(cache, tmp_path):
    pdf = _pdf(tmp_path)
    first = pdfs.extract_cached(pdf, "pdfium default")
    assert "Tensors have shapes" in first.text
    (entry,) = (cache / "pdf-text").glob("*.json")
    assert pdfs.extract_cached(pdf, "pdfium default") == first
    entry.write_text("{not json")
    assert pdfs.extract_cached(pdf, "pdfium default") == first
    assert json.loads(entry.read_text())["value"] == list(first.pages)


def test_ocr_reads_a_scan_into_an_empty_cache_then_serves_it(cache, tmp_path):
    if shutil.which("tesseract") is None:
        pytest.fail("tesseract is not installed: make setup installs it (apt-get tesseract-ocr)")
    scanned = tmp_path / "scanned.pdf"
    scan(_pdf(tmp_path), scanned, dpi=150)
    (page,) = pdfs.ocr_cached(scanned, [1], dpi=150)
    assert "Tensors" in page.text and page.words > 20 and page.confidence > 50
    assert len(list((cache / "pdf-text").glob("*.json"))) == 1
    assert pdfs.ocr_cached(scanned, [1], dpi=150) == [page]
