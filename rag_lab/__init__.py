"""rag_lab: chunking, retrieval and honest citations, measured end to end.

Every module holds one piece of the pipeline; notebooks only import and call.
"""

__version__ = "0.1.0"
