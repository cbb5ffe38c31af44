"""Where the lab keeps things: paths from the package, the cache in the user's cache folder."""

from __future__ import annotations

from pathlib import Path

from rag_lab import paths


def test_the_cache_is_the_users_not_the_checkouts(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == tmp_path / "xdg" / "rag-lab"
    assert paths.ROOT not in paths.cache_dir().parents  # every checkout shares it


def test_the_variable_overrides_it(monkeypatch, tmp_path):
    monkeypatch.setenv(paths.CACHE_ENV, str(tmp_path / "mine"))
    assert paths.cache_dir() == tmp_path / "mine"
    monkeypatch.setenv(paths.CACHE_ENV, "~/somewhere")
    assert paths.cache_dir() == Path.home() / "somewhere"


def test_figures_go_to_the_checkout_unless_told(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.FIGURES_ENV, raising=False)
    assert paths.figures_dir() == paths.ROOT / "figures"
    monkeypatch.setenv(paths.FIGURES_ENV, str(tmp_path))
    assert paths.figures_dir() == tmp_path


def test_cache_sizes_count_the_bytes_of_each_folder(tmp_path):
    (tmp_path / "onnx" / "key").mkdir(parents=True)
    (tmp_path / "onnx" / "key" / "model.onnx").write_bytes(b"x" * 10)
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "a.json").write_bytes(b"{}")
    assert paths.cache_sizes(tmp_path) == {"answers": 2, "onnx": 10}
    assert paths.cache_sizes(tmp_path / "missing") == {}
