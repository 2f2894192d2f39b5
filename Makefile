# The two commands: `make demo` (the main job on the built-in corpus) and `make test` (the whole suite, as CI
# runs it); `make test-fast` is the edit-test loop: the suite without the tests that need a heavy environment.
# Each builds its own virtual environment in .venv and reuses it when pyproject.toml is unchanged.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
WORKSPACE ?= curate-work
RELEASES  ?= releases

.PHONY: demo test test-fast bench bench-vllm clean-workspace system

# model-written code runs under bubblewrap (`curate sandbox check`); installed here when missing
# and this is a Debian-like machine where we are root, else we say how
system:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap >/dev/null)); \
	  else echo "make: bubblewrap (bwrap) is missing; install it (Debian/Ubuntu: sudo apt-get install bubblewrap," \
	    "Fedora: sudo dnf install bubblewrap) so that model-written code runs isolated" >&2; fi; }
	@# report.html's viewer is tested in a real headless browser (tests/browser.py); skipped without one
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get install -y -qq chromium >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null)); \
	  else echo "make: chromium is missing; the report viewer's browser test will skip (Debian/Ubuntu:" \
	    "sudo apt-get install chromium)" >&2; fi; }

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

# the heavy environments (.envs/llm, vllm, labelstudio, ray) build in the background meanwhile; their tests run last
test: system $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q

# every test that needs no heavy environment (none is built); extra pytest arguments: make test-fast ARGS="-x -k vote"
test-fast: system $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q --no-heavy-envs $(ARGS)

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/ingest_clean.py
	$(BIN)/python benchmarks/generate_rules.py
	$(BIN)/python benchmarks/generate_sql.py
	$(BIN)/python benchmarks/build.py
	$(BIN)/curate build -q --workspace $(WORKSPACE) --releases $(RELEASES)  # the release evaluate.py replays on
	$(BIN)/python benchmarks/evaluate.py
	$(BIN)/python benchmarks/sandbox_throughput.py

bench-vllm: $(VENV)/.installed-dev  # builds .envs/vllm on first use (a few minutes)
	$(BIN)/python benchmarks/vllm_throughput.py

clean-workspace:
	rm -rf $(WORKSPACE)
