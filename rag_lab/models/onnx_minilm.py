"""all-MiniLM-L6-v2 on ONNX Runtime: exported once from the packaged weights, run without torch.

The graph is the packaged ``BertModel`` followed by the model's own mean pooling and L2
normalisation, exported with ``torch.onnx.export`` (the TorchScript exporter: optimum-onnx
0.1.0 requires transformers<4.58, and the lab pins 5.24) into
``<cache>/onnx/<torch fingerprint key>/model.onnx``. ``onnx-int8`` is that graph with its
MatMul weights quantised to int8 per channel by ``onnxruntime.quantization.quantize_dynamic``
(activations are quantised per batch at run time). Both files are written atomically (a
temporary name, then ``os.replace``), never fetched from a hub, and each run hashes the graph
it loads: its sha256 is part of the :class:`~rag_lab.models.minilm.Fingerprint`, so these
vectors are cached apart from the torch ones.

Only the export imports torch; encoding needs ``onnxruntime``, ``tokenizers`` and numpy.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag_lab import environ, paths
from rag_lab.atomic import write_atomically
from rag_lab.checksums import sha256_file
from rag_lab.errors import BadEnvironment
from rag_lab.models.minilm import Fingerprint, minilm_fingerprint, minilm_path

ONNX_BACKENDS = ("onnx", "onnx-int8")
GRAPH_FILES = {"onnx": "model.onnx", "onnx-int8": "model-int8.onnx"}
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17


class GraphUnavailable(BadEnvironment):
    """The ONNX graph can be neither kept in the cache nor exported for this run alone."""


def graph_path(backend: str, root: Path | None = None) -> Path:
    """The exported graph for ``backend``, exporting (and quantising) it first if missing.

    The cache is a courtesy here too: when the graph cannot be written there (read-only,
    full, a file where a folder should be), it is exported into a temporary folder for this
    run (removed at exit), with one warning naming the cache and ``$RAG_LAB_CACHE``. The
    export is deterministic, so the graph, and the fingerprint, are the same bytes.
    Raises :class:`GraphUnavailable` when the temporary folder refuses it too.
    """
    if backend not in ONNX_BACKENDS:
        raise ValueError(f"backend must be one of {ONNX_BACKENDS}, not {backend!r}")
    folder = (root or paths.cache_dir() / "onnx") / minilm_fingerprint().key
    run = _run_folder(create=False)
    if run is not None and (run / GRAPH_FILES[backend]).is_file():
        return run / GRAPH_FILES[backend]  # the cache already refused it in this run
    try:
        return _exported(folder, backend)
    except (OSError, RuntimeError) as err:
        why = " ".join((getattr(err, "strerror", None) or str(err)).split())
        where = getattr(err, "filename", None) or folder
        paths.warn_cache(
            folder,
            f"the cache cannot be used ({where}: {why}); running without it: the ONNX graph "
            "is exported to a temporary folder for this run (a few seconds each run) and "
            f"nothing is kept (set ${paths.CACHE_ENV} to a writable folder)",
        )
    try:
        return _exported(_run_folder(create=True), backend)
    except OSError as err:
        raise GraphUnavailable(
            f"the ONNX graph cannot be kept in the cache {folder} nor exported to a temporary "
            f"folder ({err.strerror or err}); set ${paths.CACHE_ENV} to a writable folder"
        ) from None


def _exported(folder: Path, backend: str) -> Path:
    """The graph of ``backend`` in ``folder``, exported (and quantised) there if missing."""
    fp32 = folder / GRAPH_FILES["onnx"]
    if not fp32.is_file():
        write_atomically(fp32, _export)
    target = folder / GRAPH_FILES[backend]
    if backend == "onnx-int8" and not target.is_file():
        write_atomically(target, lambda tmp: _quantize(fp32, tmp))
    return target


_RUN_FOLDER: list[Path] = []
"""The temporary folder of this run's graphs, once the cache has refused them."""


def _run_folder(*, create: bool) -> Path | None:
    if not _RUN_FOLDER and create:
        made = Path(tempfile.mkdtemp(prefix="rag-lab-onnx-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        _RUN_FOLDER.append(made)
    return _RUN_FOLDER[0] if _RUN_FOLDER else None


def exported_fingerprint(backend: str, root: Path | None = None) -> Fingerprint | None:
    """The fingerprint ``backend``'s encoder would have, if its graph is already exported.

    Neither exports nor loads a session (it hashes the graph file); None when the graph is
    not in the cache. For telling which backend made a stamp.
    """
    if backend not in ONNX_BACKENDS:
        raise ValueError(f"backend must be one of {ONNX_BACKENDS}, not {backend!r}")
    base = minilm_fingerprint()
    path = (root or paths.cache_dir() / "onnx") / base.key / GRAPH_FILES[backend]
    run = _run_folder(create=False)
    if not path.is_file() and run is not None:
        path = run / GRAPH_FILES[backend]  # exported for this run, the cache refusing it
    if not path.is_file():
        return None
    return dataclasses.replace(base, backend=backend, graph_sha256=sha256_file(path))


environ.write_only_in_the_cache()


class OnnxMiniLM:
    """The exported graph in one ONNX Runtime session, with the model's WordPiece tokenizer.

    ``threads`` sets ``intra_op_num_threads`` (None: ``$OMP_NUM_THREADS``, else ORT's default).
    """

    def __init__(
        self, backend: str = "onnx", *, root: Path | None = None, threads: int | None = None
    ) -> None:
        self.path = graph_path(backend, root)
        base = minilm_fingerprint()
        self.fingerprint: Fingerprint = dataclasses.replace(
            base, backend=backend, graph_sha256=sha256_file(self.path)
        )
        self.session, again = _session(backend, root, self.path, session_options(threads))
        if again is not None:  # the cached graph was damaged, and is exported again
            self.path = again
            self.fingerprint = dataclasses.replace(
                self.fingerprint, graph_sha256=sha256_file(again)
            )
        self.tokenizer = windowed_tokenizer(base.max_seq_length)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit float32 vectors for ``texts`` in one run of the graph, shape ``(n, 384)``."""
        return run_graph(self.session, self.tokenizer, texts, "sentence_embedding")


def session_options(threads: int | None):
    """ONNX Runtime options: ``threads`` intra-op threads (None: ``$OMP_NUM_THREADS``, else
    ORT's default) and one inter-op thread."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4  # its errors are raised; its log would reach stderr raw
    threads = threads or environ.threads()
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return options


def windowed_tokenizer(window: int):
    """The packaged BERT uncased WordPiece tokenizer, cutting each text at ``window``
    word-pieces (``[CLS]`` and ``[SEP]`` included) and padding to the batch's longest.

    The tokenizer.json shipped truncates at 128 and pads to 128; sentence-transformers
    truncates at the model's max_seq_length and pads to the longest text of the batch.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=window)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def run_graph(session, tokenizer, texts: Sequence[str], output: str) -> np.ndarray:
    """The float32 ``output`` of a BERT graph for ``texts`` in one run, fed the inputs the
    graph declares (a graph without ``token_type_ids`` takes them as zeros itself)."""
    encodings = tokenizer.encode_batch(list(texts))
    arrays = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    feed = {i.name: arrays[i.name] for i in session.get_inputs()}
    return session.run([output], feed)[0].astype(np.float32, copy=False)


def _session(backend: str, root: Path | None, path: Path, options) -> tuple[object, Path | None]:
    """An ONNX Runtime session on the graph at ``path``; and, when that graph does not load,
    where it was exported again (else None). A graph in the cache that does not load (cut
    short, overwritten) is a damaged entry, computed again like any other with one warning,
    not a reason to stop; one that this process lacks the memory to load is not damaged
    (:class:`MemoryError`, the graph kept)."""
    import onnxruntime as ort

    def load(graph: Path):
        return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

    try:
        return load(path), None
    except Exception as err:  # ONNX Runtime's errors derive from Exception alone
        why = " ".join(str(err).split())
        if "bad_alloc" in why:  # a sound graph that this process has no memory for
            raise MemoryError(f"loading the ONNX graph {path}: {why}") from None
        paths.warn_cache(
            path,
            f"the ONNX graph {path} in the cache does not load ({why}); exporting it again "
            f"(set ${paths.CACHE_ENV} to another folder if this repeats)",
        )
    with contextlib.suppress(OSError):  # else graph_path exports it to this run's folder
        path.unlink()
    again = graph_path(backend, root)
    return load(again), again


def _export(dest: Path) -> None:
    """Trace the packaged model + mean pooling + normalisation into an ONNX file (a few s)."""
    import warnings

    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    # Eager attention builds the padding mask from attention_mask in the graph.
    bert = AutoModel.from_pretrained(str(minilm_path()), attn_implementation="eager").eval()
    model = _pooled(bert).eval()
    # Traced on a padded batch, so the masked path is the one recorded.
    ids = torch.full((2, 8), 1000, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation and trace notes
        torch.onnx.export(
            model,
            (ids, mask, torch.zeros_like(ids)),
            str(dest),
            dynamo=False,
            input_names=list(INPUTS),
            output_names=["sentence_embedding"],
            dynamic_axes={**axes, "sentence_embedding": {0: "batch"}},
            opset_version=OPSET,
        )


def _quantize(src: Path, dest: Path) -> None:
    """MatMul weights to int8 per output channel; activations quantised per batch at run time.

    Per channel matters: with one scale per tensor (the default) the min cosine to the fp32
    vectors over a sample of strategy-E chunks was 0.88; per channel, 0.98. The embedding
    tables (Gather) stay float32.
    """
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its advice to pre-process (shape inference) is for static
    try:
        quantize_dynamic(
            str(src),
            str(dest),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
    finally:
        root.setLevel(level)


def _pooled(bert):
    """BertModel, then the mean over unmasked tokens, then L2 normalisation (as a torch module)."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    return Pooled()
