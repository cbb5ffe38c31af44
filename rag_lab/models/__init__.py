"""The models, each verified before use and loaded offline, with their on-disk caches.

- ``minilm``: the packaged all-MiniLM-L6-v2: its folder, its fingerprint, its tokenizer.
- ``onnx_minilm``, ``paraphrase_minilm``: it on ONNX Runtime; paraphrase-MiniLM-L3-v2's graph.
- ``mpnet``: all-mpnet-base-v2 when the user has downloaded it (``python -m rag_lab.models.mpnet``).
- ``vector_cache``: vectors by model fingerprint and text sha256, in SQLite.
- ``encoder``: text to unit vectors (the bi-encoder of every notebook and of ``rag-lab``).
- ``token_vectors``: one vector per word-piece, for late interaction.
- ``cross_encoder``: ms-marco-MiniLM-L-6-v2 when the user has it; a labelled stand-in for cost.
- ``generator``: the local instruct model of notebook 09 (llama.cpp, the ``generate`` extra).

May import the core (``rag_lab.*``); never ``sources``, ``app`` or ``experiments``.
"""

import warnings

# What the models load (transformers, sentence-transformers, huggingface_hub) imports
# ``tqdm.auto``, which in a notebook kernel without ipywidgets warns "IProgress not found" on
# stderr, into the cell's outputs. It happens on a cold cache only (a warm run loads no model),
# so a first run would write notebooks that differ from every later one. The lab never shows
# tqdm's notebook widget: its progress goes to the terminal (rag_lab.progress).
warnings.filterwarnings("ignore", message="IProgress not found")
