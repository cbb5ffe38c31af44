"""The local generator as a joint relevance scorer: an LLM reranker, not a cross-encoder.

The chapter's second stage is a cross-encoder: a model that reads the query and the chunk
together and scores the pair, which a dot product of two separately made vectors cannot do.
Its weights are not on any reachable registry (:mod:`rag_lab.models.cross_encoder`), but the
lab's generator (:mod:`rag_lab.models.generator`, Qwen2.5-Coder-0.5B-Instruct) reads both
too. :class:`LlmRelevance` asks it one question per pair and scores the pair by the log-odds
of its next token being ``Yes`` rather than ``No``::

    score(q, c) = logit("Yes") − logit("No")        (P(yes | yes or no) = sigmoid(score))

read after one forward pass over the chat-formatted prompt (:data:`PROMPT`), from a fresh
cache, so a score is a function of its pair alone. This is the pointwise "yes/no" LLM
reranker (Nogueira et al. 2020's monoT5 asks a fine-tuned model the same question); this
model was never fine-tuned for it, which is what is measured.

Scores are cached on disk (``<cache>/relevance/``, :class:`~rag_lab.json_cache.JsonCache`)
by model sha256, prompt and pair, with the model time each took.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_lab import paths
from rag_lab.json_cache import JsonCache
from rag_lab.models import generator

PROMPT = (
    "Passage:\n{passage}\n\nQuestion: {question}\n\n"
    "Does the passage answer the question? Reply Yes or No."
)
"""The user message for one pair (the system line is the generator's)."""
YES, NO = "Yes", "No"


@dataclass(frozen=True)
class Scored:
    """One pair's score and the model time it took (when it was computed)."""

    score: float
    seconds: float
    prompt_tokens: int
    cached: bool


class LlmRelevance:
    """Score (query, passage) pairs with the generator's Yes/No log-odds, cached on disk."""

    def __init__(self, model: str = generator.DEFAULT_MODEL, *, cache: bool = True) -> None:
        self.model = model
        self.spec = generator._spec(model)
        self.cache = JsonCache(paths.cache_dir() / "relevance") if cache else None
        self._llm = None
        self._template = None
        self._tokens: tuple[int, int] | None = None

    @property
    def label(self) -> str:
        return f"LLM reranker: {self.spec.name}, Yes/No log-odds"

    def key(self, question: str, passage: str) -> dict:
        return {
            "kind": "relevance",
            "model": self.spec.sha256,
            "prompt": PROMPT,
            "system": generator.SYSTEM,
            "question": question,
            "passage": passage,
        }

    def score(self, question: str, passages: Sequence[str]) -> list[Scored]:
        """One :class:`Scored` per passage, in order; cached pairs load no model."""
        out = []
        for p in passages:
            key = self.key(question, p)
            stored = self.cache.get(key) if self.cache is not None else None
            if isinstance(stored, dict) and {"score", "seconds", "prompt_tokens"} <= set(stored):
                out.append(
                    Scored(
                        float(stored["score"]),
                        float(stored["seconds"]),
                        int(stored["prompt_tokens"]),
                        True,
                    )
                )
                continue
            scored = self._compute(question, p)
            if self.cache is not None:
                self.cache.put(
                    key,
                    {
                        "score": scored.score,
                        "seconds": scored.seconds,
                        "prompt_tokens": scored.prompt_tokens,
                    },
                )
            out.append(scored)
        return out

    def _load(self):
        if self._llm is None:
            from jinja2 import Template

            self._llm = generator._load(self.model)
            self._template = Template(self._llm.metadata["tokenizer.chat_template"])
            yes = self._llm.tokenize(YES.encode(), add_bos=False, special=False)
            no = self._llm.tokenize(NO.encode(), add_bos=False, special=False)
            if len(yes) != 1 or len(no) != 1:
                raise generator.ModelError(f"{YES!r} or {NO!r} is not one token of this model")
            self._tokens = (yes[0], no[0])
        return self._llm

    def _compute(self, question: str, passage: str) -> Scored:
        import llama_cpp

        llm = self._load()
        messages = [
            {"role": "system", "content": generator.SYSTEM},
            {"role": "user", "content": PROMPT.format(passage=passage, question=question)},
        ]
        text = self._template.render(messages=messages, add_generation_prompt=True)
        tokens = llm.tokenize(text.encode(), add_bos=False, special=True)
        start = time.perf_counter()
        llm.reset()
        llm.eval(tokens)
        logits = np.ctypeslib.as_array(
            llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),)
        )
        yes, no = self._tokens
        score = float(logits[yes]) - float(logits[no])
        return Scored(score, time.perf_counter() - start, len(tokens), False)
