# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# A pinned CPU build of torch; an unpinned one pulls several GB of CUDA libraries.
TORCH ?= torch==2.13.0

.PHONY: run console lint test coverage bench clean

# --no-compile: pip would write bytecode for every file of every package (torch, Synapse, ...); Python compiles what
# it imports on first use instead (docs/testing.md: the install's time before and after).
PIP := $(PY) -m pip install --quiet --no-compile
# ... and writes it down, also where the environment says not to (PYTHONDONTWRITEBYTECODE=1 on our CI machines):
# with neither, every process (each test worker, each start of the production command in the crash tests, each
# Synapse) compiled every module it imports from source again, `import bot.app` 3.5 s of CPU instead of 1.8 s.
unexport PYTHONDONTWRITEBYTECODE

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PIP) -e .
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PIP) $(TORCH)
	$(PIP) -e '.[test,st]'
	touch $@

run: $(VENV)/.base
	$(VENV)/bin/mnemo

console: $(VENV)/.base
	$(VENV)/bin/mnemo console

# ruff (the rule set in pyproject.toml) on the packages, the tests and the benches, mypy on the packages; any finding
# fails.
lint: $(VENV)/.test
	$(VENV)/bin/ruff check bot memory scheduler tests bench
	$(VENV)/bin/mypy bot memory scheduler

# Both cores (pytest-xdist, one PostgreSQL and one Synapse per worker); a module stays on one worker, so what it
# starts once per module starts once. Modules are handed out in the order tests/conftest.py gives them (the longest
# first), not xdist's own (the most tests first). TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder
test: $(VENV)/.test
	$(PY) -m pytest -q $(XDIST)

# The packages' line coverage over the whole suite (docs/testing.md has the figures).
coverage: $(VENV)/.test
	$(PY) -m pytest -q $(XDIST) --cov=bot --cov=memory --cov=scheduler --cov-report=term

bench: $(VENV)/.test
	$(PY) bench/german.py
	$(PY) bench/locomo.py
	$(PY) bench/latency.py

clean:
	rm -rf $(VENV)
