"""rag_lab: chunking, retrieval and honest citations, measured end to end.

Every module holds one piece of the pipeline; notebooks only import and call.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # `rag_lab.answer(...)` without importing the model stack at `import rag_lab`.
    if name == "answer":
        from rag_lab.pipeline import answer

        return answer
    raise AttributeError(f"module 'rag_lab' has no attribute {name!r}")
