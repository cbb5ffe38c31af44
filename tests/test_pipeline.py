from __future__ import annotations

from fakes import CHUNKS, FixedRetriever

from rag_lab.pipeline import Answer, Refusal, answer


def forbidden_generator(prompt: str) -> str:
    raise AssertionError("the generator must not be called on a refusal")


def test_nothing_under_the_cutoff_is_refused_without_calling_the_model():
    result = answer(
        "what is paella", FixedRetriever([0.9, 0.8]), 0.675, generate=forbidden_generator
    )
    assert isinstance(result, Refusal)
    assert str(result) == (
        'NO ANSWER: nothing under cosine distance 0.675 for "what is paella" '
        "(nearest chunk at 0.800)"
    )


def test_chunks_under_the_cutoff_reach_the_generator_once():
    prompts = []
    result = answer(
        "first?", FixedRetriever([0.3, 0.7]), 0.675, generate=lambda p: prompts.append(p) or "[1]"
    )
    assert isinstance(result, Answer)
    assert len(prompts) == 1 and prompts[0] == result.prompt
    assert [c.quote for c in result.citations] == ["First fact."]  # 0.7 did not pass
    assert result.hits[0].chunk is CHUNKS[0] and result.text == "[1]"


def test_no_cutoff_answers_everything():
    result = answer("anything", FixedRetriever([0.99, 0.98]), None)
    assert isinstance(result, Answer) and len(result.citations) == 2 and result.text is None
