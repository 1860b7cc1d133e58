# Two entry points for a fresh machine: `make demo` and `make test` (both install first).
# One venv, one stamp per install: the demo needs the base package alone (no extras); the
# tests need [dev] (every extra and the test tools), installed on top when first needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install install-base demo test lint bench

install: $(VENV)/.installed-dev
install-base: $(VENV)/.installed-base

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	touch $@

$(VENV)/.installed-base: pyproject.toml | $(VENV)/.created
	$(PY) -m pip install --quiet -e .
	touch $@

# [dev] holds the base package too, so it stamps both.
$(VENV)/.installed-dev: pyproject.toml | $(VENV)/.created
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-base

demo: install-base
	$(VENV)/bin/varvemem demo

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest

LOCOMO ?= ../shared/bench-data/locomo/locomo10.json

bench: install
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/bench_core.py --sizes 10000,100000
	$(VENV)/bin/varvemem bench locomo --data $(LOCOMO)
