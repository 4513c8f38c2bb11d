# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# A pinned CPU build of torch; an unpinned one pulls several GB of CUDA libraries.
TORCH ?= torch==2.13.0

.PHONY: run console lint test bench clean

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e '.[test,st]'
	touch $@

run: $(VENV)/.base
	$(VENV)/bin/mnemo

console: $(VENV)/.base
	$(VENV)/bin/mnemo console

# ruff (the rule set in pyproject.toml) and mypy on the packages; any finding fails.
lint: $(VENV)/.test
	$(VENV)/bin/ruff check bot memory scheduler
	$(VENV)/bin/mypy bot memory scheduler

test: $(VENV)/.test
	$(PY) -m pytest -q

bench: $(VENV)/.test
	$(PY) bench/german.py
	$(PY) bench/locomo.py
	$(PY) bench/latency.py

clean:
	rm -rf $(VENV)
