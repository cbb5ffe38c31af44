"""Downloading the upstream sources, from a local HTTP server on 127.0.0.1, never the internet."""

from __future__ import annotations

import hashlib
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakes import serve

from rag_lab.checksums import VerificationError, read_manifest
from rag_lab.sources.d2l.extract import upstream as d2l_upstream
from rag_lab.sources.d2l.extract.__main__ import main
from rag_lab.sources.d2l.extract.upstream import (
    RAW_MANIFEST,
    configured_mirror,
    locate_sources,
    pinned_commit,
)


@dataclass(frozen=True)
class Upstream:
    """The local stand-in for raw.githubusercontent.com."""

    served: Path
    """The folder served as ``<url>/<commit>/``: edit it to serve tampered or missing files."""
    url: str
    requested: list[str]


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    """A copy of the mirror served as ``http://127.0.0.1:<port>/<commit>/<path>``.

    The default mirror is hidden so that :func:`locate_sources` downloads, and
    the cache lives in ``tmp_path``.
    """
    mirror = configured_mirror()
    if mirror is None or not mirror.is_dir():
        pytest.skip("no upstream mirror ($RAG_LAB_MIRROR or ../shared/corpus/d2l-en/raw) to serve")
    site = tmp_path / "site"
    served = site / pinned_commit()
    shutil.copytree(mirror, served)
    with serve(site) as (url, requested):
        monkeypatch.setattr(d2l_upstream, "DEFAULT_MIRROR", tmp_path / "no-mirror")
        monkeypatch.delenv(d2l_upstream.MIRROR_ENV, raising=False)
        monkeypatch.setenv(d2l_upstream.UPSTREAM_URL_ENV, url)
        monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "cache"))
        yield Upstream(served, url, requested)


@pytest.mark.corpus
def test_the_sources_are_downloaded_verified_and_cached(upstream, tmp_path):
    requested = upstream.requested
    manifest = read_manifest(RAW_MANIFEST)
    found = locate_sources()
    assert found.root == tmp_path / "cache" / "d2l-en" / pinned_commit()
    assert found.origin == f"download {upstream.url} (commit {pinned_commit()})"
    assert found.verified == len(manifest) == 194
    assert len(requested) == 194
    assert f"/{pinned_commit()}/chapter_preliminaries/ndarray.md" in requested
    for name, digest in manifest.items():
        assert hashlib.sha256((found.root / name).read_bytes()).hexdigest() == digest
    requested.clear()
    assert locate_sources().verified == 194
    assert requested == []  # every cached file verified, nothing fetched again


@pytest.mark.corpus
def test_a_tampered_file_is_refused_by_name_and_not_cached(upstream, tmp_path):
    served = upstream.served
    name = "chapter_preliminaries/pandas.md"
    tampered = (served / name).read_bytes() + b"\nInjected line.\n"
    (served / name).write_bytes(tampered)
    with pytest.raises(VerificationError) as error:
        locate_sources()
    expected = read_manifest(RAW_MANIFEST)[name]
    actual = hashlib.sha256(tampered).hexdigest()
    assert error.value.problems == [
        f"{name}: sha256 mismatch (expected {expected}, got {actual}), downloaded from "
        f"{upstream.url}/{pinned_commit()}/{name}"
    ]
    cache = tmp_path / "cache" / "d2l-en" / pinned_commit()
    assert not (cache / name).exists()
    assert (cache / "chapter_preliminaries/ndarray.md").is_file()


@pytest.mark.corpus
def test_a_missing_file_is_reported_by_name_with_its_http_status(upstream):
    served = upstream.served
    (served / "d2l.bib").unlink()
    with pytest.raises(VerificationError) as error:
        locate_sources()
    assert error.value.problems == [
        f"d2l.bib: download failed, HTTP 404 from {upstream.url}/{pinned_commit()}/d2l.bib"
    ]


@pytest.mark.corpus
def test_the_command_exits_non_zero_and_names_the_bad_input(upstream, tmp_path, capsys):
    served = upstream.served
    (served / "index.md").write_text("# Not the book\n")
    assert main(["--out", str(tmp_path / "corpus")]) == 1
    err = capsys.readouterr().err
    assert "error: the upstream sources failed their checks" in err
    assert "\nindex.md: sha256 mismatch (expected " in err  # the root index.md, by name
    assert not (tmp_path / "corpus").exists()


def test_an_unreachable_server_stops_at_the_first_file(tmp_path):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    manifest = {"a.md": "0" * 64, "b.md": "1" * 64}
    with pytest.raises(VerificationError) as error:
        d2l_upstream.download(f"http://127.0.0.1:{port}/x", manifest, tmp_path)
    [problem] = error.value.problems
    assert problem.startswith("a.md: download failed (")
    assert problem.endswith(f"from http://127.0.0.1:{port}/x/a.md")
