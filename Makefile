# kgrag-neo4j: everything a fresh clone needs, from a Python 3.10+ with venv, Java 17/21 and Maven.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kgrag-installed

.PHONY: install jars browser-deps demo test lint test-fast bench-quick bench docs-bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev,bench]"
	@# an editable install leaves the package's bytecode to the first import, which writes none
	@# under PYTHONDONTWRITEBYTECODE: every `kgrag` command then compiled 100 modules (0.1 s)
	$(BIN)/python -m compileall -q kgrag_neo4j
	touch $(STAMP)

## install: virtual environment with the package and its test extras
install: $(STAMP)

## jars: the pinned Neo4j Community jars, resolved by Maven into ~/.cache/kgrag-neo4j
jars: install
	$(BIN)/kgrag server install

## browser-deps: headless Chromium and its driver for the Neo4j Browser test (Debian packages;
## installed when missing and we are root, else the test says what to install)
browser-deps:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing chromium and chromium-driver (Debian packages) for the Neo4j Browser test ..."; \
	  apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 chromium chromium-driver >/dev/null; \
	else echo "Neo4j Browser test: install chromium and chromium-driver (apt-get install chromium chromium-driver)"; fi

## demo: start the local server, create the schema, ingest docs/, print a search
demo: jars
	$(BIN)/python examples/demo.py

## test: the whole suite against a real Neo4j that the run starts and stops itself
test: jars browser-deps
	$(BIN)/python -m pytest -q -p no:cacheprovider

## lint: ruff (pyflakes, pycodestyle, bugbear, imports, pyupgrade) and mypy, as configured in
## pyproject.toml; .ci/run runs it before the tests
lint: install
	$(BIN)/ruff check kgrag_neo4j tests bench examples docs
	$(BIN)/mypy

## bench-quick: small benchmark sizes (a few minutes)
bench-quick: jars
	$(BIN)/python -m bench quick

## bench: the full benchmark runs, then docs/benchmarks.md
bench: jars
	$(BIN)/python -m bench all

clean:
	rm -rf $(VENV) build dist *.egg-info
