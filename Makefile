# Two entry points for a fresh machine: `make demo` and `make test` (both install first).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install demo test lint bench

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

demo: install
	$(VENV)/bin/varvemem demo

lint: install
	$(VENV)/bin/ruff check .

test: lint
	$(PY) -m pytest

LOCOMO ?= ../shared/bench-data/locomo/locomo10.json

bench: install
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/bench_core.py --sizes 10000,100000
	$(VENV)/bin/varvemem bench locomo --data $(LOCOMO)
