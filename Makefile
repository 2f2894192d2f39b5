# The two commands: `make demo` (the main job on the built-in corpus) and `make test`.
# Each builds its own virtual environment in .venv and reuses it when pyproject.toml is unchanged.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
WORKSPACE ?= curate-work
RELEASES  ?= releases

.PHONY: demo test bench bench-vllm clean-workspace

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/curate build --workspace $(WORKSPACE) --releases $(RELEASES)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/ingest_clean.py
	$(BIN)/python benchmarks/generate_rules.py
	$(BIN)/python benchmarks/generate_sql.py
	$(BIN)/python benchmarks/build.py
	$(BIN)/curate build -q --workspace $(WORKSPACE) --releases $(RELEASES)  # the release evaluate.py replays on
	$(BIN)/python benchmarks/evaluate.py

bench-vllm: $(VENV)/.installed-dev  # builds .envs/vllm on first use (a few minutes)
	$(BIN)/python benchmarks/vllm_throughput.py

clean-workspace:
	rm -rf $(WORKSPACE)
