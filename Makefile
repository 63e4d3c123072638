# The README's two commands: `make demo` and `make test`. Each sets itself up.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := runners/node_modules/.installed
PYTEST_ARGS ?=

.PHONY: all install node test lint typecheck pytest demo schemas clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m compileall -q copeca_action  # editable installs compile nothing; with PYTHONDONTWRITEBYTECODE set, every start would
	# compile each module again (~45 ms of `copeca-action analyze`)
	touch $@

install: $(STAMP)

# Pinned agent CLIs (runners/package.json + package-lock.json), installed into the project.
$(NODE_STAMP): runners/package.json runners/package-lock.json
	cd runners && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node: $(NODE_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(VENV)/bin/pytest $(PYTEST_ARGS)

test: $(STAMP) $(if $(wildcard runners/package-lock.json),$(NODE_STAMP))
	$(MAKE) lint typecheck pytest

schemas: $(STAMP)
	$(VENV)/bin/copeca-action schema --out schemas --docs docs/reference

demo: $(STAMP) $(if $(wildcard runners/package-lock.json),$(NODE_STAMP))
	$(VENV)/bin/copeca-action demo

clean:
	rm -rf $(VENV) runners/node_modules build dist .pytest_cache .mypy_cache .ruff_cache
